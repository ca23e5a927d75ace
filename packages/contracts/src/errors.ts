// The error codes of DESIGN.md and the one error type every layer throws. Each code has exactly one
// HTTP status, so a thrown ReelayError carries everything the envelope needs.
import { z } from 'zod';

export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_url: 400,
  url_blocked: 403,
  unknown_source: 400,
  invalid_merge_pair: 400,
  content_not_found: 404,
  no_media_found: 422,
  upstream_error: 502,
  upstream_timeout: 504,
  api_key_required: 401,
  invalid_api_key: 401,
  api_key_disabled: 403,
  rate_limited: 429,
  job_not_found: 404,
  artifact_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  service_unavailable: 503,
  internal_error: 500,
  storage_error: 507,
  // "Safe in public" and the newer contracts of DESIGN.md.
  too_many_jobs: 429,
  resource_limit: 422,
  invalid_clip: 400,
  upstream_rate_limited: 503,
  // Not in DESIGN.md's table but needed by its routes: an unknown path, an artifact asked for before
  // its job finished, a job that ran out of time, and the account routes.
  not_found: 404,
  artifact_not_ready: 409,
  job_timeout: 504,
  email_taken: 409,
  invalid_credentials: 401,
  not_signed_in: 401,
  cross_site_request: 403,
  // A method no route takes (CONNECT, TRACE, …): answered with the envelope instead of a closed socket.
  method_not_allowed: 405,
  // Malformed HTTP that Node's parser refuses before Express sees a request (server 'clientError').
  request_timeout: 408,
  headers_too_large: 431,
  // An account holding MAX_KEYS_PER_ACCOUNT keys asked for another: a state conflict, not a bad body.
  key_limit_reached: 409,
  // One-step downloads: the page's item has no source the preset can deliver.
  no_matching_source: 422,
  // DESIGN.md "Live streams, stopping and cancelling": cancel of a job that has ended; stop of a job
  // that is not a recording.
  job_finished: 409,
  not_recording: 409,
  // Accounts as the specification names them.
  email_not_verified: 403,
  mail_not_configured: 503,
  // DESIGN.md "Subscriptions": an id that is not the caller's (or none); an account at its limit.
  subscription_not_found: 404,
  subscription_limit_reached: 409,
  // DESIGN.md "Trust at the public edge": cancel or stop by anyone but the job's creator.
  job_control_forbidden: 403,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ErrorCodeSchema = z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]);

export class ReelayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers, e.g. Retry-After on rate_limited. */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; headers?: Record<string, string> } = {}) {
    super(message, { cause: options.cause });
    this.name = 'ReelayError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = options.headers ?? {};
  }

  toEnvelope(): ErrorEnvelope {
    return { success: false, error: { code: this.code, message: this.message } };
  }
}

export const ErrorEnvelopeSchema = z
  .object({
    success: z.literal(false),
    error: z.object({ code: ErrorCodeSchema, message: z.string() }),
  })
  .meta({ id: 'ErrorEnvelope' });
export type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>;

export function isReelayError(value: unknown): value is ReelayError {
  return value instanceof ReelayError;
}
