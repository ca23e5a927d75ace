// Egress's one error vocabulary: whatever fails (the guard, DNS, sockets, TLS, timeouts, statuses,
// either transport's own error types) reaches callers as a ReelayError with a code of DESIGN.md.
import { ReelayError } from '@reelay/contracts';
import { parseRetryAfter, rateLimitedError } from './pacing.js';

export const BLOCKED_CODE = 'ERR_REELAY_BLOCKED';

/** What the guarded lookup fails with; mapped to url_blocked. */
export class BlockedAddressError extends Error {
  readonly code = BLOCKED_CODE;
}

// ipaddr.js's range names, and this module's own reasons, as a person reads them.
const RANGE_LABELS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique-local (private IPv6) address',
  carrierGradeNat: 'a carrier-grade NAT address',
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
  ipv4Mapped: 'an IPv4-mapped IPv6 address',
  ipv4Compatible: 'an IPv4-compatible IPv6 address',
  notGlobalUnicast: 'not a global IPv6 unicast address',
};

/**
 * Says what the address is and how an operator allows it (a first local test hits this with
 * 127.0.0.1). It names the setting, never its value: the allowlist stays the operator's business.
 */
export function blockedMessage(host: string, address: string, reason: string): string {
  const shown = host === address ? address : `${host} (${address})`;
  if (reason === 'not an IP address') return `Fetching ${shown} is not allowed: it is not an IP address.`;
  const what = RANGE_LABELS[reason] ?? `a ${reason} address`;
  return `${shown} is ${what}; reelay does not fetch it unless the operator lists it in EGRESS_ALLOWLIST.`;
}

export function blocked(host: string, reason: string): ReelayError {
  return new ReelayError('url_blocked', blockedMessage(host, host, reason));
}

type Headers = Record<string, string | string[] | undefined>;

/**
 * An origin's answer that says it is rate limiting: 429, or 503 with a readable Retry-After (a 503
 * without one is an outage). It becomes 503 upstream_rate_limited with the Retry-After passed on.
 */
export function rateLimitOf(status: number, headers: Headers | undefined): ReelayError | undefined {
  if (status !== 429 && status !== 503) return undefined;
  const retryAfter = parseRetryAfter(headers?.['retry-after']);
  if (status === 503 && retryAfter === undefined) return undefined;
  return rateLimitedError('The origin', status, retryAfter);
}

/** An error status as a ReelayError; `headers` (the response's) tell a rate limit from an outage. */
export function statusError(status: number, headers?: Headers): ReelayError {
  if (status === 404 || status === 410)
    return new ReelayError('content_not_found', `The origin answered ${status}: the content does not exist.`);
  const limited = rateLimitOf(status, headers);
  if (limited) return limited;
  if (status === 401 || status === 403)
    return new ReelayError('upstream_error', `The origin refused access (${status}).`);
  return new ReelayError('upstream_error', `The origin failed with HTTP ${status}.`);
}

const PROXY_CODE = 'ERR_REELAY_PROXY';

const TIMEOUT_CODES = new Set(['ETIMEDOUT']);
const CLOSED_CODES = new Set(['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_HTTP_CONTENT_LENGTH_MISMATCH']);

/** Maps HTTP, socket and DNS failures to the codes of DESIGN.md. */
export function toReelayError(err: unknown): ReelayError {
  if (err instanceof ReelayError) return err;
  const e = err as { code?: string; name?: string; message?: string; cause?: unknown };
  // got wraps what it did not raise itself (a hook's ReelayError, our deadline or abort, a socket
  // error) in a RequestError whose cause is the original: judge the original.
  if (e.name === 'RequestError' && e.cause instanceof Error) return toReelayError(e.cause);
  const cause = e.cause as { code?: string; message?: string } | undefined;
  const code = e.code ?? cause?.code;
  if (code === BLOCKED_CODE)
    return new ReelayError('url_blocked', cause?.message ?? e.message ?? 'The address is not allowed.');
  // The proxy's own message names it by label; callers are told only the kind of trouble.
  if (code === PROXY_CODE) {
    const unreachable = ((e.code === PROXY_CODE ? e : cause) as { unreachable?: boolean }).unreachable;
    return new ReelayError(
      'upstream_error',
      unreachable ? 'No outbound proxy could be reached.' : 'The outbound proxy refused the connection.',
      { cause: err },
    );
  }
  if ((code && TIMEOUT_CODES.has(code)) || e.name === 'TimeoutError')
    return new ReelayError('upstream_timeout', 'The origin did not answer in time.', { cause: err });
  if (e.name === 'AbortError' || code === 'ABORT_ERR')
    return new ReelayError('upstream_error', 'The request was cancelled.', { cause: err });
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NODATA')
    return new ReelayError('upstream_error', 'The origin host name could not be resolved.', { cause: err });
  if (code === 'ECONNREFUSED')
    return new ReelayError('upstream_error', 'The origin refused the connection.', { cause: err });
  if (code && CLOSED_CODES.has(code))
    return new ReelayError('upstream_error', 'The origin closed the connection.', { cause: err });
  if (code?.startsWith('HPE_'))
    return new ReelayError('upstream_error', 'The origin sent a malformed HTTP response.', { cause: err });
  if (code?.startsWith('ERR_TLS') || (code && /CERT|UNABLE_TO_VERIFY|SELF_SIGNED/.test(code)))
    return new ReelayError('upstream_error', "The origin's TLS certificate could not be verified.", { cause: err });
  return new ReelayError('upstream_error', 'The origin could not be reached.', { cause: err });
}
