// Social sign-in, the parts every provider shares: what a provider must do (send the browser to its
// authorization page, then turn the callback into a verified profile), the flow's state kept in
// Redis between the two, and the one rule for where the browser may be sent back to.
// A flow is keyed by the hash of its `state`; it holds the PKCE verifier and the nonce, never leaves
// the server, lives 10 minutes and is taken once (GETDEL), so a callback cannot be replayed.
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@reelay/redis';
import { AuthorizationResponseError } from 'openid-client';
import { z } from 'zod';
import { guarded, sha256Hex } from './redis-calls.js';

/** Who the provider says signed in. */
export interface SocialProfile {
  /** The provider's stable id of the user (OIDC `sub`, GitHub's numeric id). */
  subject: string;
  email?: string;
  /** The provider vouches that the user controls `email`. */
  emailVerified: boolean;
}

export interface FlowChecks {
  state: string;
  nonce: string;
  verifier: string;
  redirectUri: string;
}

export interface SocialProvider {
  id: string;
  name: string;
  /** The provider's authorization page for this flow (PKCE S256 challenge, state and nonce in it). */
  authorizationUrl(checks: FlowChecks): Promise<URL>;
  /** Checks the callback against the flow and returns the verified profile; throws when anything is off. */
  finish(callbackUrl: URL, checks: FlowChecks): Promise<SocialProfile>;
}

export const FLOW_TTL_SECONDS = 600;
/** Where the web app lands after a sign-in when the flow named nowhere (or somewhere not allowed). */
export const DEFAULT_RETURN_TO = '/settings/api-keys';

const FlowSchema = z.object({
  provider: z.string(),
  nonce: z.string(),
  verifier: z.string(),
  return_to: z.string(),
  link_account_id: z.string().optional(),
  link_email: z.string().optional(),
});
export type StoredFlow = z.infer<typeof FlowSchema>;

const UNSAFE_CHARACTERS = /[\\\p{Cc}]/u;

/** The value percent-decoded until nothing changes (a few rounds); undefined when malformed or still encoded. */
function decodeFully(value: string): string | undefined {
  let current = value;
  for (let round = 0; round < 4; round++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return undefined;
    }
    if (next === current) return current;
    current = next;
  }
  return undefined;
}

/**
 * A path of this app to return to, or the default. The value is first resolved as a browser resolves
 * a Location header (against PUBLIC_URL's origin: dot segments removed, `%2e` read as a dot), and its
 * path read again fully percent-decoded, as a server or a second redirect may read it; only then is it
 * judged. What passes is a path of this origin that does not start with `//` (a browser reads that as
 * another host), with no backslash (read as `/`) and no control character (tabs and newlines are
 * dropped by browsers) in it before or after decoding, at most 512 characters. Checking before
 * resolving let `/.//evil.example/` through as `//evil.example/`.
 */
export function safeReturnTo(value: unknown, publicUrl?: string): string {
  if (typeof value !== 'string' || value.length > 512 || !value.startsWith('/') || UNSAFE_CHARACTERS.test(value))
    return DEFAULT_RETURN_TO;
  const origin = new URL(publicUrl || 'http://reelay.invalid').origin;
  let resolved: URL;
  try {
    resolved = new URL(value, origin);
  } catch {
    return DEFAULT_RETURN_TO;
  }
  if (resolved.origin !== origin || resolved.pathname.startsWith('//')) return DEFAULT_RETURN_TO;
  const decoded = decodeFully(resolved.pathname);
  if (decoded === undefined || UNSAFE_CHARACTERS.test(decoded) || decoded.startsWith('//')) return DEFAULT_RETURN_TO;
  let reread: URL;
  try {
    reread = new URL(decoded, origin);
  } catch {
    return DEFAULT_RETURN_TO;
  }
  if (reread.origin !== origin || reread.pathname.startsWith('//')) return DEFAULT_RETURN_TO;
  return resolved.pathname + resolved.search + resolved.hash;
}

/** A random url-safe value of 32 bytes (state, nonce, PKCE verifier). */
export const randomValue = () => randomBytes(32).toString('base64url');

export class SocialFlows {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = 'reelay:oauth-flow:',
  ) {}

  /** Starts a flow; returns its state (for the URL and the browser's cookie) and its checks. */
  async start(
    flow: Omit<StoredFlow, 'nonce' | 'verifier'>,
  ): Promise<{ state: string; nonce: string; verifier: string }> {
    const state = randomValue();
    const stored: StoredFlow = { ...flow, nonce: randomValue(), verifier: randomValue() };
    await guarded(() => this.redis.set(this.prefix + sha256Hex(state), JSON.stringify(stored), 'EX', FLOW_TTL_SECONDS));
    return { state, nonce: stored.nonce, verifier: stored.verifier };
  }

  /** The flow of a state, once; undefined when unknown, used or expired. */
  async take(state: string): Promise<StoredFlow | undefined> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(state)) return undefined;
    const raw = await guarded(() => this.redis.getdel(this.prefix + sha256Hex(state)));
    const parsed = raw ? FlowSchema.safeParse(JSON.parse(raw)) : undefined;
    return parsed?.success ? parsed.data : undefined;
  }
}
export type { CustomFetch } from 'openid-client';

/** The provider's own `error` when a callback says it refused (access_denied, …); undefined otherwise. */
export function providerRefusal(err: unknown): string | undefined {
  return err instanceof AuthorizationResponseError ? err.error : undefined;
}
