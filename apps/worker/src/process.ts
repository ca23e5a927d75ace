// The job processor: payload → plan → ffmpeg through the egress proxy → artifact. Everything it
// touches is passed in, so tests run it against real Redis, ffmpeg and a local origin.
import fs from 'node:fs/promises';
import path from 'node:path';
import { UnrecoverableError, WaitingError, type Job } from 'bullmq';
import type { Config } from '@reelay/config';
import { encodeJobError, JobPayloadSchema, ReelayError, type JobPayload, type JobResult } from '@reelay/contracts';
import type { ArtifactStore } from '@reelay/artifacts';
import { buildArgs, FfmpegError, probe, runFfmpeg } from '@reelay/media';
import type { Logger } from '@reelay/observability';
import { classifyFailure, OutputError } from './failure.js';
import type { WorkerMetrics } from './metrics.js';
import { planJob, type JobPlan } from './plan.js';
import type { JobProxy } from './proxy.js';
import type { JobProxySession } from './proxy-session.js';

/** The artifact store plus where it keeps temporary folders (to clear a dead attempt's leftovers). */
export type JobArtifacts = ArtifactStore & { readonly tempDir: string };

/** Running jobs, so shutdown can hand them back to the queue once its grace period is over. */
export class ActiveJobs {
  private readonly jobs = new Map<string, { controller: AbortController; handedBack: boolean }>();

  start(id: string): { signal: AbortSignal; handedBack: () => boolean } {
    const entry = { controller: new AbortController(), handedBack: false };
    this.jobs.set(id, entry);
    return { signal: entry.controller.signal, handedBack: () => entry.handedBack };
  }

  finish(id: string): void {
    this.jobs.delete(id);
  }

  get size(): number {
    return this.jobs.size;
  }

  /** Stops every running job's ffmpeg and marks the job to go back to the queue; returns how many. */
  handBackAll(): number {
    for (const entry of this.jobs.values()) {
      entry.handedBack = true;
      entry.controller.abort();
    }
    return this.jobs.size;
  }
}

export interface ProcessorDeps {
  config: Pick<Config, 'JOB_TIMEOUT_SECONDS' | 'ARTIFACT_TTL_SECONDS' | 'MAX_MEDIA_BYTES'>;
  proxy: Pick<JobProxy, 'openSession' | 'closeSession'>;
  artifacts: JobArtifacts;
  binaries: { ffmpeg: string; ffprobe: string };
  logger: Logger;
  metrics: WorkerMetrics;
  active: ActiveJobs;
  /** Least time between two progress writes to Redis (default 1 s). */
  progressIntervalMs?: number;
}

export type DownloadJob = Job<unknown, JobResult>;

/** The proxy saw a failure upstream; classifyFailure reads which from the session. */
class UpstreamFailed extends Error {
  override readonly name = 'UpstreamFailed';
}

export function createProcessor(deps: ProcessorDeps): (job: DownloadJob, token?: string, signal?: AbortSignal) => Promise<JobResult> {
  const { config, metrics } = deps;
  const timeoutMs = config.JOB_TIMEOUT_SECONDS * 1000;

  return async (job, token, cancelled) => {
    const started = Date.now();
    const parsed = JobPayloadSchema.safeParse(job.data);
    if (!parsed.success || parsed.data.id !== job.id) {
      deps.logger.warn({ jobId: job.id, issues: parsed.error?.issues.slice(0, 5) }, 'job payload is invalid');
      metrics.jobFinished('unknown', 'failed', 0);
      throw new UnrecoverableError(encodeJobError({ code: 'invalid_request', message: 'The job payload is invalid.' }));
    }
    const payload = parsed.data;
    const log = deps.logger.child({ jobId: job.id, operation: payload.operation, attempt: job.attemptsMade + 1 });
    const control = deps.active.start(payload.id);
    const signal = cancelled ? AbortSignal.any([control.signal, cancelled]) : control.signal;
    const ffmpegStop = new AbortController();
    const session = deps.proxy.openSession(payload.id, {
      headerNames: payload.inputs.flatMap((input) => Object.keys(input.headers ?? {})),
      maxBytes: config.MAX_MEDIA_BYTES,
      onCutOff: () => ffmpegStop.abort(),
    });
    let dir: string | undefined;
    log.info('job started');
    try {
      const plan = planJob(payload);
      await clearEarlierAttempts(deps.artifacts, payload.id, log);
      dir = await deps.artifacts.makeTempDir(payload.id);
      const result = await run({ job, payload, plan, session, dir, log, signal: AbortSignal.any([signal, ffmpegStop.signal]), deadline: started + timeoutMs });
      metrics.jobFinished(payload.operation, 'completed', (Date.now() - started) / 1000);
      log.info({ size: result.size, bytes_fetched: session.bytes }, 'job completed');
      return result;
    } catch (err) {
      const seconds = (Date.now() - started) / 1000;
      if (err instanceof FfmpegError) metrics.ffmpegFailures.inc({ operation: payload.operation, kind: err.kind });
      if (control.handedBack()) {
        // Shutdown ran out of grace: the job goes back to the wait list as it was (no attempt used)
        // and BullMQ, told by WaitingError, leaves it there for another worker.
        await job.moveToWait(token);
        metrics.jobFinished(payload.operation, 'handed_back', seconds);
        log.warn('job handed back to the queue at shutdown');
        throw new WaitingError();
      }
      const failure = classifyFailure(err, session.failures, { timeoutSeconds: config.JOB_TIMEOUT_SECONDS, maxBytes: config.MAX_MEDIA_BYTES });
      const willRetry = failure.retry && job.attemptsMade + 1 < (job.opts.attempts ?? 1);
      metrics.jobFinished(payload.operation, willRetry ? 'retried' : 'failed', seconds);
      log.warn({ code: failure.code, retry: willRetry, cause: describe(err) }, 'job failed');
      const message = encodeJobError({ code: failure.code, message: failure.message });
      throw failure.retry ? new Error(message) : new UnrecoverableError(message);
    } finally {
      deps.proxy.closeSession(session);
      deps.active.finish(payload.id);
      if (dir) await fs.rm(dir, { recursive: true, force: true }).catch((err: unknown) => log.error({ err }, 'could not remove the job folder'));
    }
  };

  async function run(ctx: {
    job: DownloadJob;
    payload: JobPayload;
    plan: JobPlan;
    session: JobProxySession;
    dir: string;
    log: Logger;
    signal: AbortSignal;
    deadline: number;
  }): Promise<JobResult> {
    const { job, payload, plan, session, log } = ctx;
    // Without a duration from the extract, ffprobe finds it while ffmpeg already runs: progress only
    // needs it later, and probing first cost a process start and a header read on every such job.
    const probeAbort = new AbortController();
    const duration =
      payload.duration ??
      probeDuration(plan, session, { ...ctx, signal: AbortSignal.any([ctx.signal, probeAbort.signal]) }).catch((err: unknown) => {
        log.info({ cause: describe(err) }, 'duration probe failed');
        return undefined;
      });

    const output = path.join(ctx.dir, 'output.part');
    const { args } = buildArgs(plan.operation, { output, maxOutputBytes: config.MAX_MEDIA_BYTES });
    const progress = new ProgressWriter(job, deps.progressIntervalMs ?? 1_000, log);
    const remaining = ctx.deadline - Date.now();
    if (remaining <= 0) throw new FfmpegError('timeout', 'no time left for ffmpeg', undefined, '');
    try {
      await runFfmpeg({
        binary: deps.binaries.ffmpeg,
        args,
        env: session.env,
        cwd: ctx.dir,
        signal: ctx.signal,
        timeoutMs: remaining,
        durationSeconds: duration,
        onProgress: (percent) => progress.report(percent),
      });
    } finally {
      probeAbort.abort();
    }
    await progress.settled();
    // ffmpeg skips HLS segments it cannot fetch and may still exit 0 with a file full of gaps.
    if (session.hasFailure()) throw new UpstreamFailed();

    const { size } = await fs.stat(output);
    if (size === 0) throw new OutputError('ffmpeg produced an empty file.');
    if (size >= config.MAX_MEDIA_BYTES) throw new OutputError('The result is larger than the media size limit.');
    const expiresAt = Date.now() + config.ARTIFACT_TTL_SECONDS * 1000;
    const stored = await deps.artifacts.put(payload.id, output, { filename: plan.filename, content_type: plan.contentType, expires_at: expiresAt });
    await job.updateProgress(100);
    return { filename: stored.filename, content_type: stored.content_type, size: stored.size, expires_at: stored.expires_at };
  }

  /** The first input's duration, for progress. A quarter of the job's time at most, 15 s at most. */
  async function probeDuration(plan: JobPlan, session: JobProxySession, ctx: { log: Logger; signal: AbortSignal; deadline: number }): Promise<number | undefined> {
    const timeout = Math.min(15_000, timeoutMs / 4, ctx.deadline - Date.now());
    try {
      const info = await probe(plan.probe.input, { binary: deps.binaries.ffprobe, kind: plan.probe.kind, aes128: plan.probe.aes128, env: session.env, signal: ctx.signal, timeoutMs: timeout });
      return info.durationSeconds;
    } catch (err) {
      if (!(err instanceof FfmpegError)) throw err;
      ctx.log.info({ cause: describe(err) }, 'no duration from ffprobe: progress will jump to 100 at the end');
      return undefined;
    }
  }
}

/** Writes progress to Redis at most once per interval, in order, without blocking ffmpeg's output. */
class ProgressWriter {
  private lastAt = 0;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly job: DownloadJob,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  report(percent: number): void {
    const now = Date.now();
    if (percent >= 100 || now - this.lastAt < this.intervalMs) return; // 100 is written once the artifact is stored
    this.lastAt = now;
    this.chain = this.chain.then(
      () => this.job.updateProgress(percent),
    ).catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'could not record progress'));
  }

  settled(): Promise<void> {
    return this.chain;
  }
}

/**
 * Folders of earlier attempts of this job: only one attempt runs at a time (BullMQ's lock), so any
 * such folder belongs to a worker that died mid-job.
 */
async function clearEarlierAttempts(artifacts: JobArtifacts, id: string, log: Logger): Promise<void> {
  let names: string[];
  try {
    names = await fs.readdir(artifacts.tempDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const stale = names.filter((name) => name.startsWith(`${id}-`));
  for (const name of stale) await fs.rm(path.join(artifacts.tempDir, name), { recursive: true, force: true });
  if (stale.length > 0) log.info({ folders: stale.length }, 'removed the temporary files of an earlier attempt');
}

/** A failure for the log: the ffmpeg fields, never the command line (it holds cookies and headers). */
function describe(err: unknown): Record<string, unknown> {
  if (err instanceof FfmpegError) return { kind: err.kind, exitCode: err.exitCode, stderr: err.stderrTail.slice(-600) };
  if (err instanceof ReelayError) return { code: err.code, message: err.message };
  if (err instanceof Error) return { name: err.name, message: err.message, stack: err.stack };
  return { value: String(err) };
}
