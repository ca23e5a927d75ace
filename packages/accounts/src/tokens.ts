// One-time tokens for e-mail links (address verification, password reset): 32 random bytes (256
// bits) in base64url, stored only as their SHA-256 with an expiry, and taken with GETDEL so a token
// works exactly once even when two requests race. A token is found by its hash, never compared.
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@reelay/redis';
import { z } from 'zod';
import { guarded, sha256Hex } from './redis-calls.js';

export type TokenPurpose = 'verify' | 'reset';

/** How long each kind of link works. */
export const TOKEN_TTL_SECONDS: Record<TokenPurpose, number> = { verify: 24 * 3600, reset: 3600 };
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

const TokenDataSchema = z.object({ account_id: z.string(), email: z.string() });
export type TokenData = z.infer<typeof TokenDataSchema>;

export class OneTimeTokens {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = 'reelay:token:',
  ) {}

  private key(purpose: TokenPurpose, token: string): string {
    return `${this.prefix}${purpose}:${sha256Hex(token)}`;
  }

  /** A new token for the account; only its hash is kept. */
  async issue(purpose: TokenPurpose, data: TokenData): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await guarded(() =>
      this.redis.set(this.key(purpose, token), JSON.stringify(data), 'EX', TOKEN_TTL_SECONDS[purpose]),
    );
    return token;
  }

  /** The token's data, once: the token is gone afterwards. Undefined when unknown, used or expired. */
  async take(purpose: TokenPurpose, token: string): Promise<TokenData | undefined> {
    if (!TOKEN.test(token)) return undefined;
    const raw = await guarded(() => this.redis.getdel(this.key(purpose, token)));
    if (!raw) return undefined;
    const parsed = TokenDataSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  }
}
