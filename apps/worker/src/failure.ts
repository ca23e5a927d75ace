// Why a job failed, as one error code with a short message, and whether another attempt could help.
// What the proxy saw upstream comes first: ffmpeg only reports that a read failed, the proxy knows it
// was a blocked address, a 404 or a 503. Messages are written here, never copied from ffmpeg's
// stderr, so they carry no local paths.
import { ReelayError, type ErrorCode } from '@reelay/contracts';
import { FfmpegError } from '@reelay/media';
import type { SessionFailures } from './proxy-session.js';

export interface JobFailure {
  code: ErrorCode;
  message: string;
  /** Worth another attempt (BullMQ retries with the producer's backoff); otherwise fail at once. */
  retry: boolean;
}

/** ffmpeg ran to the end but its output cannot be delivered. */
export class OutputError extends Error {
  override readonly name = 'OutputError';
}

export interface FailureContext {
  timeoutSeconds: number;
  maxBytes: number;
}

export function classifyFailure(err: unknown, upstream: SessionFailures, ctx: FailureContext): JobFailure {
  if (upstream.blocked) return { code: 'url_blocked', message: upstream.blocked, retry: false };
  if (err instanceof ReelayError) return { code: err.code, message: err.message, retry: err.code === 'upstream_error' || err.code === 'upstream_timeout' };
  if (upstream.tooLarge) return { code: 'upstream_error', message: `The media is larger than the limit of ${formatBytes(ctx.maxBytes)}.`, retry: false };
  if (err instanceof FfmpegError && err.kind === 'timeout') {
    return { code: 'job_timeout', message: `The job ran longer than its limit of ${ctx.timeoutSeconds} seconds.`, retry: false };
  }
  if (upstream.notFound) return { code: 'content_not_found', message: `The origin answered ${upstream.notFound}: the content does not exist.`, retry: false };
  if (upstream.unavailable) return { code: upstream.unavailable.code, message: upstream.unavailable.message, retry: true };
  if (upstream.refused) return { code: 'upstream_error', message: `The origin refused access (${upstream.refused}).`, retry: false };
  if (err instanceof FfmpegError) return ffmpegFailure(err);
  if (err instanceof OutputError) return { code: 'upstream_error', message: err.message, retry: false };
  // A bug or a local fault (disk full, Redis gone): another attempt, maybe on another worker, may pass.
  return { code: 'internal_error', message: 'The job failed because of an internal error.', retry: true };
}

// What ffmpeg's stderr says, as a sentence for the user. Such failures repeat on every attempt.
function ffmpegFailure(err: FfmpegError): JobFailure {
  const tail = err.stderrTail;
  if (err.kind === 'aborted') return { code: 'internal_error', message: 'The job was cancelled.', retry: false };
  if (/Protocol '[^']*' not on whitelist/.test(tail)) {
    return { code: 'url_blocked', message: 'The media refers to a resource that is not an http or https URL.', retry: false };
  }
  if (/Format not on whitelist/.test(tail)) {
    return { code: 'upstream_error', message: 'The origin sent a kind of file that is not expected for this source.', retry: false };
  }
  if (/matches no streams|does not contain any stream|Output file is empty/.test(tail)) {
    return { code: 'upstream_error', message: 'The media has no stream to take (a missing track or representation).', retry: false };
  }
  if (/Invalid data found|invalid data|moov atom not found|EBML header parsing failed/i.test(tail)) {
    return { code: 'upstream_error', message: 'The origin sent data that is not readable media.', retry: false };
  }
  return { code: 'upstream_error', message: 'ffmpeg could not process the media.', retry: false };
}

export function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${+(n / 1024 ** 3).toFixed(1)} GiB`;
  if (n >= 1024 ** 2) return `${+(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${Math.round(n / 1024)} KiB`;
}
