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

/** A whole file's fetch (whole-file.ts) that did not bring the whole file: an origin fault, worth a retry. */
export class WholeFileError extends Error {
  override readonly name = 'WholeFileError';
}

/** ffmpeg exited 0, but the file lacks what was asked for (verifyOutput's problems). */
export class IncompleteOutputError extends Error {
  override readonly name = 'IncompleteOutputError';

  constructor(readonly problems: string[]) {
    super(`the output failed verification: ${problems.join('; ')}`);
  }
}

/** The temp folder or the artifact store could not be written (an errno from the file system). */
export class StorageError extends Error {
  override readonly name = 'StorageError';

  constructor(
    readonly errno: string,
    readonly where: 'temp' | 'artifacts',
    options?: { cause?: unknown },
  ) {
    super(`${where} storage failed with ${errno}`, options);
  }
}

// Space may come back (a sweep, another job's clean-up, another worker's disk); a read-only or
// misconfigured folder will not, on this worker, within a job's retries.
const STORAGE_RETRY = new Set(['ENOSPC', 'EDQUOT']);
const STORAGE_ERRNO = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'ENOTDIR', 'EEXIST', 'EISDIR', 'EIO']);

/** A remote artifact store (S3) that failed the write: unreachable, or an error answer. */
const REMOTE_STORE = 'EREMOTESTORE';

/**
 * Runs a storage step of the job; its failures become a StorageError: file-system errnos for either
 * place, and any failure of the artifact store's own write (with S3, a network error or an error
 * answer such as AccessDenied or NoSuchBucket, which carry no errno).
 */
export async function onStorage<T>(where: StorageError['where'], step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && STORAGE_ERRNO.has(code)) throw new StorageError(code, where, { cause: err });
    if (where === 'artifacts') throw new StorageError(REMOTE_STORE, where, { cause: err });
    throw err;
  }
}

function storageFailure(errno: string, where: StorageError['where']): JobFailure {
  const place = where === 'temp' ? "the worker's temporary folder" : 'the artifact store';
  const why =
    errno === 'ENOSPC' || errno === 'EDQUOT'
      ? `${place} is full`
      : errno === 'EROFS'
        ? `${place} is read-only`
        : errno === 'EACCES' || errno === 'EPERM'
          ? `${place} is not writable`
          : errno === 'ENOTDIR' || errno === 'EEXIST'
            ? `${place} is not a folder`
            : errno === REMOTE_STORE
              ? `${place} did not accept the file`
              : `${place} cannot be used (${errno})`;
  // A remote store may be back for the next attempt; a refusal (wrong bucket or rights) just fails again.
  return {
    code: 'storage_error',
    message: `The result could not be stored: ${why}.`,
    retry: STORAGE_RETRY.has(errno) || errno === REMOTE_STORE,
  };
}

// ffmpeg writes the output itself, so a full or read-only temp folder shows only in its stderr.
const FFMPEG_STORAGE: [RegExp, string][] = [
  [/No space left on device/i, 'ENOSPC'],
  [/Disk quota exceeded/i, 'EDQUOT'],
  [/Read-only file system/i, 'EROFS'],
];

/** ffmpeg or ffprobe could not be started at all: a worker problem, never the media's. */
export function isSpawnFailure(err: unknown): boolean {
  if (!(err instanceof FfmpegError) || err.exitCode !== undefined) return false;
  const cause = err.cause as { code?: unknown } | undefined;
  return cause?.code === 'ENOENT' || cause?.code === 'EACCES' || /spawn|ENOENT|EACCES/.test(err.message);
}

export interface FailureContext {
  timeoutSeconds: number;
  maxBytes: number;
}

export function classifyFailure(err: unknown, upstream: SessionFailures, ctx: FailureContext): JobFailure {
  if (upstream.blocked) return { code: 'url_blocked', message: upstream.blocked, retry: false };
  if (upstream.limit) return { code: 'upstream_error', message: upstream.limit, retry: false };
  if (err instanceof ReelayError)
    return {
      code: err.code,
      message: err.message,
      retry: err.code === 'upstream_error' || err.code === 'upstream_timeout',
    };
  // Past a memory or CPU bound: the media (or what the origin made of it) asks too much; it would again.
  if (err instanceof FfmpegError && err.kind === 'limit')
    return { code: 'resource_limit', message: `The job was stopped: ${err.message}.`, retry: false };
  if (upstream.tooLarge)
    return {
      code: 'upstream_error',
      message: `The media is larger than the limit of ${formatBytes(ctx.maxBytes)}.`,
      retry: false,
    };
  // Local faults come before what the origin did: they are true whatever else happened.
  if (err instanceof StorageError) return storageFailure(err.errno, err.where);
  if (err instanceof FfmpegError && err.kind === 'failed') {
    const full = FFMPEG_STORAGE.find(([pattern]) => pattern.test(err.stderrTail));
    if (full) return storageFailure(full[1], 'temp');
  }
  if (isSpawnFailure(err)) {
    // Another worker, with a working ffmpeg, may take it.
    return { code: 'internal_error', message: 'ffmpeg could not be started on the worker.', retry: true };
  }
  if (err instanceof FfmpegError && err.kind === 'timeout') {
    return {
      code: 'job_timeout',
      message: `The job ran longer than its limit of ${ctx.timeoutSeconds} seconds.`,
      retry: false,
    };
  }
  if (err instanceof IncompleteOutputError) return incomplete(err.problems, upstream);
  if (upstream.notFound)
    return {
      code: 'content_not_found',
      message: `The origin answered ${upstream.notFound}: the content does not exist.`,
      retry: false,
    };
  if (upstream.unavailable)
    return { code: upstream.unavailable.code, message: upstream.unavailable.message, retry: true };
  if (upstream.refused)
    return { code: 'upstream_error', message: `The origin refused access (${upstream.refused}).`, retry: false };
  if (err instanceof FfmpegError) return ffmpegFailure(err);
  if (err instanceof WholeFileError)
    return { code: 'upstream_error', message: `The file could not be fetched: ${err.message}.`, retry: true };
  if (err instanceof OutputError) return { code: 'upstream_error', message: err.message, retry: false };
  // A bug or a local fault (disk full, Redis gone): another attempt, maybe on another worker, may pass.
  return { code: 'internal_error', message: 'The job failed because of an internal error.', retry: true };
}

// A finished file that is missing something. What the proxy saw is the explanation when there is
// one; without it the cause is in how the origin served the file (e.g. it ignored Range), which
// another attempt would repeat.
function incomplete(problems: string[], upstream: SessionFailures): JobFailure {
  const what = `The finished file is incomplete: ${problems.join('; ')}.`;
  if (upstream.notFound)
    return {
      code: 'content_not_found',
      message: `The origin answered ${upstream.notFound} for part of the media. ${what}`,
      retry: false,
    };
  if (upstream.unavailable)
    return { code: upstream.unavailable.code, message: `${upstream.unavailable.message} ${what}`, retry: true };
  return { code: 'upstream_error', message: what, retry: false };
}

// What ffmpeg's stderr says, as a sentence for the user. Such failures repeat on every attempt.
function ffmpegFailure(err: FfmpegError): JobFailure {
  const tail = err.stderrTail;
  if (err.kind === 'aborted') return { code: 'internal_error', message: 'The job was cancelled.', retry: false };
  if (/Protocol '[^']*' not on whitelist/.test(tail)) {
    return {
      code: 'url_blocked',
      message: 'The media refers to a resource that is not an http or https URL.',
      retry: false,
    };
  }
  if (/Format not on whitelist/.test(tail)) {
    return {
      code: 'upstream_error',
      message: 'The origin sent a kind of file that is not expected for this source.',
      retry: false,
    };
  }
  if (/matches no streams|does not contain any stream|Output file is empty/.test(tail)) {
    return {
      code: 'upstream_error',
      message: 'The media has no stream to take (a missing track or representation).',
      retry: false,
    };
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
