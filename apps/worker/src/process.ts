// The job processor: payload → plan → one run (job-run.ts) → a result, or a failure with a true
// code. Around the run it owns the attempt's proxy session, folder and progress, hands the job back
// at shutdown, and resets progress whenever the job returns to the queue. Everything it touches is
// passed in, so tests run it against real Redis, ffmpeg and a local origin.
import { UnrecoverableError, WaitingError, type Job } from 'bullmq';
import type { ArtifactStore } from '@reelay/artifacts';
import type { Config } from '@reelay/config';
import {
  CANCELLED_CODE,
  CANCELLED_MESSAGE,
  encodeJobError,
  JobPayloadSchema,
  ReelayError,
  type JobResult,
} from '@reelay/contracts';
import { FfmpegError } from '@reelay/media';
import { logRef, withRef, type Logger } from '@reelay/observability';
import type { ActiveJobs } from './active-jobs.js';
import type { JobSignalListener } from './job-signals.js';
import { classifyFailure, IncompleteOutputError, isSpawnFailure, onStorage, StorageError } from './failure.js';
import { runJob } from './job-run.js';
import type { RunDeps } from './steps/step.js';
import type { ArtifactReuse } from './reuse.js';
import { BASE_REQUESTS } from '@reelay/manifests';
import type { WorkerMetrics } from './metrics.js';
import { planJob } from './plan.js';
import { ProgressWriter } from './progress-writer.js';
import type { JobProxy } from './proxy.js';
import { recordingDir } from './record/recording-store.js';
import { runRecording } from './record/run-recording.js';
import type { LiveEgress } from './record/live-fetch.js';
import fs from 'node:fs/promises';

export interface ProcessorDeps {
  config: Pick<
    Config,
    'JOB_TIMEOUT_SECONDS' | 'ARTIFACT_TTL_SECONDS' | 'MAX_MEDIA_BYTES' | 'JOB_MAX_MEMORY_MB' | 'JOB_MAX_CPU_SECONDS'
  > &
    Partial<Pick<Config, 'MAX_RECORD_SECONDS'>>;
  /** The shared data dir where recordings keep their parts (recordings need it and egress). */
  dataDir?: string;
  proxy: Pick<JobProxy, 'openSession' | 'closeSession'>;
  /** The guard the cover art's fetch goes through; without it jobs embed no cover. */
  egress?: RunDeps['egress'] & Partial<LiveEgress>;
  artifacts: ArtifactStore;
  binaries: { ffmpeg: string; ffprobe: string };
  logger: Logger;
  metrics: WorkerMetrics;
  active: ActiveJobs;
  /** Least time between two progress writes to Redis (default 1 s). */
  progressIntervalMs?: number;
  /**
   * ffmpeg or ffprobe could not be started: the worker checks its binaries again and stops taking
   * jobs if they are broken. Resolves true when they are (the job then goes back to the queue).
   */
  onToolFailure?: () => Promise<boolean>;
  /** False while the worker's binaries are broken: a job fetched then goes straight back. */
  healthy?: () => boolean;
  /** Cancel (and, for recordings, stop) signals from any gateway; without it jobs cannot be cancelled while they run. */
  signals?: Pick<JobSignalListener, 'watch' | 'recorded'>;
  /** Files of identical requests that still live: taken instead of running ffmpeg again (reuse.ts). */
  reuse?: Pick<ArtifactReuse, 'take' | 'keep'>;
}

/** Thrown when a cancel is found before the job's work began or as it finished (not mid-run). */
class JobCancelled extends Error {
  override readonly name = 'JobCancelled';
}

export type DownloadJob = Job<unknown, JobResult>;

export function createProcessor(
  deps: ProcessorDeps,
): (job: DownloadJob, token?: string, signal?: AbortSignal) => Promise<JobResult> {
  const { config, metrics } = deps;
  const timeoutMs = config.JOB_TIMEOUT_SECONDS * 1000;

  return async (job, token, cancelled) => {
    const started = Date.now();
    const parsed = JobPayloadSchema.safeParse(job.data);
    if (!parsed.success || parsed.data.id !== job.id) {
      deps.logger.warn(
        { job: logRef(String(job.id)), issues: parsed.error?.issues.slice(0, 5) },
        'job payload is invalid',
      );
      metrics.jobFinished('unknown', 'failed', 0, 'invalid_request');
      throw new UnrecoverableError(encodeJobError({ code: 'invalid_request', message: 'The job payload is invalid.' }));
    }
    const payload = parsed.data;
    if (deps.healthy && !deps.healthy()) {
      // Fetched in the moment between the worker finding its ffmpeg broken and its pause taking
      // effect (a fetch was already waiting on Redis): back to the queue untouched.
      await job.moveToWait(token);
      throw new WaitingError();
    }
    const log = deps.logger.child({
      job: logRef(payload.id),
      operation: payload.operation,
      attempt: job.attemptsMade + 1,
    });
    const control = deps.active.start(payload.id);
    const signal = cancelled ? AbortSignal.any([control.signal, cancelled]) : control.signal;
    const ffmpegStop = new AbortController();
    // DELETE /api/v1/jobs/{id} on any gateway: stops ffmpeg at once. A future recording would also
    // watch for 'stop' here and end its segment fetcher gracefully instead (docs/cancel-and-live.md).
    const cancel = new AbortController();
    // POST /api/v1/jobs/{id}/stop: a recording ends gracefully and keeps what it has.
    const stop = new AbortController();
    let unwatch: (() => void) | undefined;
    // The session's id names it in the proxy's log lines: the job's reference, not its id.
    const session = deps.proxy.openSession(logRef(payload.id), {
      headerNames: [...payload.inputs, ...(payload.subtitles ?? [])].flatMap((input) =>
        Object.keys(input.headers ?? {}),
      ),
      maxBytes: config.MAX_MEDIA_BYTES,
      maxRequests: BASE_REQUESTS, // raised by what the job's manifests declare
      onCutOff: () => ffmpegStop.abort(),
    });
    session.clipStart = payload.clip?.start;
    const progress = new ProgressWriter(job, deps.progressIntervalMs ?? 1_000, log);
    let dir: string | undefined;
    log.info('job started');
    const phases: Record<string, number> = {};
    try {
      unwatch = await deps.signals?.watch(payload.id, (s) => {
        if (s === 'cancel' && !cancel.signal.aborted) cancel.abort();
        if (s === 'stop' && !stop.signal.aborted) stop.abort();
      });
      if (cancel.signal.aborted) throw new JobCancelled('cancelled while queued');
      if (payload.operation === 'record') {
        if (!deps.egress?.fetchText || !deps.dataDir)
          throw new ReelayError('internal_error', 'This worker cannot record (no egress or data dir).');
        const result = await runRecording(
          {
            config: { ...config, MAX_RECORD_SECONDS: config.MAX_RECORD_SECONDS ?? 14_400 },
            artifacts: deps.artifacts,
            binaries: deps.binaries,
            egress: deps.egress as LiveEgress,
            dataDir: deps.dataDir,
            limits: { memoryMb: config.JOB_MAX_MEMORY_MB, cpuSeconds: config.JOB_MAX_CPU_SECONDS },
          },
          {
            job,
            payload,
            log,
            signal: AbortSignal.any([signal, cancel.signal]),
            cancel: cancel.signal,
            stop: stop.signal,
          },
        );
        if (!cancel.signal.aborted && deps.signals && (await deps.signals.recorded(payload.id)).includes('cancel'))
          cancel.abort();
        if (cancel.signal.aborted) throw new JobCancelled('cancelled as it finished');
        log.info({ size: result.size, ended: result.ended }, 'recording stored');
        return result;
      }
      const plan = planJob(payload);
      await onStorage('temp', () => clearEarlierAttempts(deps.artifacts, payload.id, log));
      dir = await onStorage('temp', () => deps.artifacts.makeTempDir(payload.id));
      phases.prepare = Date.now() - started;
      // An identical request's file that still lives is copied, not made again (a repeated feed).
      const reused = await deps.reuse?.take(payload, dir).catch((err: unknown) => {
        log.warn({ err: (err as Error).message }, 'could not reuse the file of an identical request; making it');
        return undefined;
      });
      if (reused) await job.updateProgress(100);
      const result =
        reused ??
        (await runJob(deps, {
          job,
          payload,
          plan,
          session,
          dir,
          log,
          progress,
          signal: AbortSignal.any([signal, ffmpegStop.signal, cancel.signal]),
          cancel: cancel.signal,
          deadline: started + timeoutMs,
          phases,
        }));
      // A cancel that came as the job finished (the message may lag the key): the cancel wins while
      // the job is still ours to finish, and its artifact goes with it.
      if (!cancel.signal.aborted && deps.signals && (await deps.signals.recorded(payload.id)).includes('cancel'))
        cancel.abort();
      if (cancel.signal.aborted) throw new JobCancelled('cancelled as it finished');
      await deps.reuse
        ?.keep(payload, result)
        .catch((err: unknown) => log.warn({ err: (err as Error).message }, 'could not remember the file for reuse'));
      if (reused) {
        const { reused_from: from, ...own } = reused;
        metrics.artifactsReused.inc({ kind: 'job' });
        log.info({ size: own.size, reused_from: from }, 'job output reused: the file of an identical request');
        return own;
      }
      // Counted as completed only once BullMQ has moved it to completed (the worker's 'completed'
      // event): a run whose lock lapsed cannot complete, and counting here counted such jobs twice.
      const firstByte = session.firstByteAt !== undefined ? { first_byte_ms: session.firstByteAt - started } : {};
      log.info(
        {
          size: result.size,
          bytes_fetched: session.bytes,
          requests: session.requests,
          range_parts: session.rangeParts,
          phases_ms: phases,
          ...firstByte,
          ...(session.failures.notFound ? { upstream_not_found: session.failures.notFound } : {}),
        },
        'job output stored',
      );
      return result;
    } catch (err) {
      const seconds = (Date.now() - started) / 1000;
      if (err instanceof FfmpegError && !cancel.signal.aborted)
        metrics.ffmpegFailures.inc({ operation: payload.operation, kind: err.kind });
      if (control.lost()) {
        // Another run owns the job now; BullMQ refuses this run's result or failure either way.
        metrics.jobFinished(payload.operation, 'lock_lost', seconds);
        log.warn('job lock lost (Redis unreachable longer than the lock): this run stopped');
        throw new Error('job lock lost');
      }
      if (cancel.signal.aborted) {
        // Its processes are stopped (the abort), its folder goes below; a stored artifact goes now.
        // Failed with the cancel code and unrecoverable, so no retry or stalled check runs it again.
        await deps.artifacts
          .remove(payload.id)
          .catch((e: unknown) =>
            log.error({ err: withRef(e, payload.id) }, 'could not remove the artifact of a cancelled job'),
          );
        metrics.jobFinished(payload.operation, 'cancelled', seconds);
        log.info({ cause: err instanceof JobCancelled ? err.message : 'stopped while running' }, 'job cancelled');
        throw new UnrecoverableError(encodeJobError({ code: CANCELLED_CODE, message: CANCELLED_MESSAGE }));
      }
      if (control.handedBack()) {
        // Shutdown ran out of grace: the job goes back to the wait list as it was (no attempt used)
        // and BullMQ, told by WaitingError, leaves it there for another worker. Its progress starts
        // again from 0, as the next attempt will.
        await progress.reset();
        await job.moveToWait(token);
        metrics.jobFinished(payload.operation, 'handed_back', seconds);
        log.warn('job handed back to the queue at shutdown');
        throw new WaitingError();
      }
      if (isSpawnFailure(err) && deps.onToolFailure && (await deps.onToolFailure())) {
        // The binary went missing under a running worker: not the job's fault, so it waits for a
        // worker that can run it, with no attempt used, as at a hand-back.
        await progress.reset();
        await job.moveToWait(token);
        metrics.jobFinished(payload.operation, 'handed_back', seconds);
        log.error('ffmpeg could not be started: job handed back to the queue');
        throw new WaitingError();
      }
      const failure = classifyFailure(err, session.failures, {
        timeoutSeconds: config.JOB_TIMEOUT_SECONDS,
        maxBytes: config.MAX_MEDIA_BYTES,
      });
      const willRetry = failure.retry && job.attemptsMade + 1 < (job.opts.attempts ?? 1);
      // A recording's parts wait for its next attempt; with none to come they go now.
      if (payload.operation === 'record' && !willRetry && deps.dataDir)
        await fs.rm(recordingDir(deps.dataDir, payload.id), { recursive: true, force: true }).catch(() => undefined);
      // A retried job waits (delayed) as queued: it must not show the percent of the attempt that failed.
      if (willRetry) await progress.reset();
      metrics.jobFinished(payload.operation, willRetry ? 'retried' : 'failed', seconds, failure.code);
      log.warn(
        // ffmpeg's stderr and error messages name the job's folder, which is named by its id.
        withRef(
          { code: failure.code, retry: willRetry, cause: describe(err), upstream: describeUpstream(session.failures) },
          payload.id,
        ) as object,
        'job failed',
      );
      const message = encodeJobError({ code: failure.code, message: failure.message });
      throw failure.retry ? new Error(message) : new UnrecoverableError(message);
    } finally {
      unwatch?.();
      deps.proxy.closeSession(session);
      control.finish();
      if (dir)
        await deps.artifacts
          .removeTempDir(dir)
          .catch((err: unknown) => log.error({ err: withRef(err, payload.id) }, 'could not remove the job folder'));
    }
  };
}

/**
 * Folders of earlier attempts of this job: only one attempt runs at a time (BullMQ's lock), so any
 * such folder belongs to a worker that died mid-job.
 */
async function clearEarlierAttempts(artifacts: ArtifactStore, id: string, log: Logger): Promise<void> {
  const removed = await artifacts.removeTemp(id);
  if (removed > 0) log.info({ folders: removed }, 'removed the temporary files of an earlier attempt');
}

/** A failure for the log: the ffmpeg fields, never the command line (it holds cookies and headers). */
function describe(err: unknown): Record<string, unknown> {
  if (err instanceof FfmpegError) return { kind: err.kind, exitCode: err.exitCode, stderr: err.stderrTail.slice(-600) };
  if (err instanceof ReelayError) return { code: err.code, message: err.message };
  if (err instanceof IncompleteOutputError) return { problems: err.problems };
  if (err instanceof StorageError) return { errno: err.errno, where: err.where };
  if (err instanceof Error) return { name: err.name, message: err.message, stack: err.stack };
  return { value: String(err) };
}

function describeUpstream(failures: object): Record<string, unknown> | undefined {
  const entries = Object.entries(failures).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return undefined;
  return Object.fromEntries(entries.map(([k, v]) => [k, v instanceof Error ? v.message : v]));
}
