// A fetch for openid-client and the GitHub API built on the guarded Egress client: identity
// providers are reached like every other outbound request (checked, pinned addresses; deadline;
// bounded body), and a provider's redirect is never followed (the library expects none).
import type { CustomFetch } from '@reelay/accounts';
import type { Egress } from '@reelay/egress';

/** Provider answers (metadata, keys, tokens, user) are small; 1 MiB is far above any of them. */
const MAX_PROVIDER_BYTES = 1024 * 1024;
const DEADLINE_MS = 10_000;

function bodyText(body: unknown): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  if (body instanceof ArrayBuffer) return Buffer.from(body).toString('utf8');
  throw new Error('streamed request bodies are not used with identity providers');
}

export function egressFetch(egress: Egress): CustomFetch {
  return async (url, options) => {
    const method = (options.method ?? 'GET').toUpperCase();
    if (method !== 'GET' && method !== 'POST') throw new Error(`unexpected ${method} to an identity provider`);
    const headers = { ...options.headers };
    const res = await egress.fetchText(url, {
      method,
      headers,
      body: bodyText(options.body),
      signal: options.signal ?? undefined,
      allowErrorStatus: true,
      followRedirects: false,
      deadlineMs: DEADLINE_MS,
      maxBytes: MAX_PROVIDER_BYTES,
      purpose: 'extract',
    });
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
    }
    // Hop-by-hop and encoding headers describe the wire, not the decoded text handed on.
    out.delete('content-encoding');
    out.delete('content-length');
    out.delete('transfer-encoding');
    const nullBody = res.status === 204 || res.status === 304;
    return new Response(nullBody ? null : res.text, { status: res.status, headers: out });
  };
}
