// Runs ffmpeg (no shell) with an abort signal, a timeout and progress; failures become FfmpegError.
import { execa, ExecaError, type Options, type ResultPromise } from 'execa';
import { ChildWatch, execFailure, limitedCommand, type ChildLimits } from './limits.js';
import { outTimeSeconds, ProgressParser, ProgressThrottle, runningPercent } from './progress.js';

/** `limit`: past its memory or CPU bound (limits.ts), killed. */
export type FfmpegErrorKind = 'timeout' | 'aborted' | 'failed' | 'limit';

export class FfmpegError extends Error {
  override readonly name = 'FfmpegError';

  constructor(
    readonly kind: FfmpegErrorKind,
    message: string,
    /** undefined when the process was killed by a signal or never started. */
    readonly exitCode: number | undefined,
    /** The last few KB of stderr (errors only, as runs use `-loglevel error`). */
    readonly stderrTail: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const STDERR_TAIL_BYTES = 4096;

/**
 * ffmpeg and ffprobe run in their own process group (detached), so a terminal's Ctrl-C reaches the
 * worker, which decides whether to finish or hand the job back, instead of killing them and failing
 * the job. execa does not clean up detached children, so the live ones are killed here when the
 * process exits.
 */
const live = new Set<{ kill(signal?: NodeJS.Signals): boolean }>();
let exitHookInstalled = false;
export function trackDetached(child: { kill(signal?: NodeJS.Signals): boolean }): () => void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
  live.add(child);
  return () => live.delete(child);
}

/** Keeps only the last `limit` bytes written to it, so a chatty process cannot grow memory. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly limit = STDERR_TAIL_BYTES) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - this.chunks[0].length >= this.limit) this.size -= this.chunks.shift()!.length;
  }

  toString(): string {
    const all = Buffer.concat(this.chunks);
    return all
      .subarray(Math.max(0, all.length - this.limit))
      .toString('utf8')
      .trim();
  }
}

/**
 * An execa failure as an FfmpegError. Timeout and cancellation are told apart by execa's flags, not by
 * exit codes: ffmpeg exits 255 on SIGTERM just as it does for some errors.
 */
export function toFfmpegError(
  err: unknown,
  program: string,
  tail: string,
  timeoutMs?: number,
  watch?: ChildWatch,
): FfmpegError {
  if (!(err instanceof ExecaError)) {
    return new FfmpegError('failed', `${program} failed: ${String(err)}`, undefined, tail, { cause: err });
  }
  if (err.timedOut)
    return new FfmpegError('timeout', `${program} timed out after ${timeoutMs} ms`, err.exitCode, tail, { cause: err });
  if (err.isCanceled) return new FfmpegError('aborted', `${program} was aborted`, err.exitCode, tail, { cause: err });
  const limit = watch?.limitExceeded(tail);
  if (limit) return new FfmpegError('limit', watch!.describe(program, limit), err.exitCode, tail, { cause: err });
  const errno = watch ? execFailure(err.exitCode, tail) : undefined;
  // Not started: reported as a spawn failure, without an exit code, as when execa spawns it directly.
  if (errno)
    return new FfmpegError('failed', `${program} failed: spawn ${errno}`, undefined, tail, { cause: { code: errno } });
  const lastLine = tail.split('\n').pop() ?? '';
  const why =
    err.exitCode !== undefined
      ? `exited with code ${err.exitCode}`
      : err.signal
        ? `was killed by ${err.signal}`
        : err.shortMessage;
  return new FfmpegError('failed', `${program} ${why}${lastLine ? `: ${lastLine}` : ''}`, err.exitCode, tail, {
    cause: err,
  });
}

export interface RunFfmpegOptions {
  binary: string;
  /** From buildArgs(); must include `-progress pipe:1` for progress to be reported. */
  args: readonly string[];
  signal?: AbortSignal;
  /** The run is sent SIGTERM after this long (the worker passes JOB_TIMEOUT_SECONDS). */
  timeoutMs: number;
  /** Then SIGKILL if it has not exited: ffmpeg finishes the file on SIGTERM, a stuck read may not. */
  killGraceMs?: number;
  /**
   * The input's duration; without it no running percent can be known (only the final 100). A promise
   * lets the caller probe the duration while ffmpeg already runs, instead of before it.
   */
  durationSeconds?: number | Promise<number | undefined>;
  /** Whole percent, rising: 0–99 while running, 100 once ffmpeg has exited successfully. */
  onProgress?: (percent: number) => void;
  cwd?: string;
  /** Added to the environment, e.g. `http_proxy`; an undefined value removes a variable. */
  env?: Record<string, string | undefined>;
  /** Memory and CPU bounds (the worker's JOB_MAX_*); none when undefined. */
  limits?: ChildLimits;
  /**
   * Aborting this kills ffmpeg's process group at once (SIGKILL), for a cancelled job whose output is
   * thrown away: after its start ffmpeg lets a SIGTERM wait for a blocked read, up to killGraceMs.
   */
  killSignal?: AbortSignal;
}

/**
 * Starts a program (ffmpeg, ffprobe, yt-dlp) under its bounds, detached: the one place that spawns
 * them. The watch is undefined without limits; stop it once the process has ended.
 */
export function spawnBounded<O extends Options & { detached: true }>(
  binary: string,
  args: readonly string[],
  limits: ChildLimits | undefined,
  options: O,
): { subprocess: ResultPromise<{} & O>; watch: ChildWatch | undefined } {
  const command = limits ? limitedCommand(binary, args, limits) : { file: binary, args: [...args] };
  const subprocess = execa(command.file, command.args, options);
  const watch = limits ? new ChildWatch(subprocess.pid, limits) : undefined;
  return { subprocess, watch };
}

/** Resolves when ffmpeg exits 0; otherwise rejects with an FfmpegError (or onProgress's own error). */
export async function runFfmpeg(opts: RunFfmpegOptions): Promise<void> {
  if (opts.signal?.aborted) throw new FfmpegError('aborted', 'ffmpeg was aborted before it started', undefined, '');

  // A throwing progress callback stops the run: it is the caller's error and is rethrown as such.
  const callbackFailed = new AbortController();
  let callbackError: { error: unknown } | undefined;
  const throttle = new ProgressThrottle((percent) => {
    if (callbackError || !opts.onProgress) return;
    try {
      opts.onProgress(percent);
    } catch (error) {
      callbackError = { error };
      callbackFailed.abort();
    }
  });
  let duration = typeof opts.durationSeconds === 'number' ? opts.durationSeconds : undefined;
  if (opts.durationSeconds instanceof Promise) {
    opts.durationSeconds.then(
      (seconds) => (duration = seconds),
      () => undefined, // no duration: progress jumps to 100 at the end, as without one
    );
  }
  const parser = new ProgressParser((block) => {
    const seconds = outTimeSeconds(block);
    if (seconds !== undefined && duration !== undefined) throttle.update(runningPercent(seconds, duration));
  });
  const stderr = new TailBuffer();

  const signals = opts.signal ? [opts.signal, callbackFailed.signal] : [callbackFailed.signal];
  const { subprocess, watch } = spawnBounded(opts.binary, opts.args, opts.limits, {
    cancelSignal: AbortSignal.any(signals),
    timeout: opts.timeoutMs,
    killSignal: 'SIGTERM',
    forceKillAfterDelay: opts.killGraceMs ?? 5_000,
    cwd: opts.cwd,
    env: opts.env,
    stdin: 'ignore',
    // Streams are consumed here as they arrive (progress, stderr tail) instead of being buffered whole.
    buffer: false,
    detached: true,
  });
  const untrack = trackDetached(subprocess);
  const killGroup = () => {
    try {
      if (subprocess.pid !== undefined) process.kill(-subprocess.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  opts.killSignal?.addEventListener('abort', killGroup, { once: true });
  if (opts.killSignal?.aborted) killGroup();
  subprocess.stdout.setEncoding('utf8');
  subprocess.stdout.on('data', (chunk: string) => parser.push(chunk));
  subprocess.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));

  try {
    await subprocess;
  } catch (err) {
    if (callbackError) throw callbackError.error;
    throw toFfmpegError(err, 'ffmpeg', stderr.toString(), opts.timeoutMs, watch);
  } finally {
    opts.killSignal?.removeEventListener('abort', killGroup);
    watch?.stop();
    untrack();
  }
  throttle.finish();
  if (callbackError) throw callbackError.error;
}
