// The worker's Prometheus metrics. Labels are bounded: operations from the contract, outcomes from a
// fixed list, ffmpeg failure kinds, queue states. Queue depth is read from Redis on each scrape.
import type { ErrorCode } from '@reelay/contracts';
import {
  createRegistry,
  JOB_BUCKETS,
  prom,
  queueWorkerErrors,
  type Logger,
  type Registry,
} from '@reelay/observability';

export type JobOutcome = 'completed' | 'failed' | 'retried' | 'handed_back' | 'lock_lost' | 'cancelled';

/** The error_code label of a job that did not fail (completed, handed back). */
export const NO_ERROR = 'none';

/**
 * A worker waits on Redis, ffmpeg and origins; a 10 ms lag sampler (prom-client's default) woke it
 * 100 times a second, about 0.18 s of CPU a minute on an idle worker (docs/benchmarks.md, "Live
 * recording CPU"). Every 100 ms still shows a blocked loop in the lag histogram.
 */
export const EVENT_LOOP_PRECISION_MS = 100;

export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized'] as const;

export class WorkerMetrics {
  readonly registry: Registry;
  readonly jobs: prom.Counter<'operation' | 'outcome' | 'error_code'>;
  readonly jobDuration: prom.Histogram<'operation' | 'outcome' | 'error_code'>;
  readonly ffmpegFailures: prom.Counter<'operation' | 'kind'>;
  readonly queueJobs: prom.Gauge<'state'>;
  readonly proxyBytes: prom.Counter;
  readonly proxyBlocked: prom.Counter;
  readonly webhookAttempts: prom.Counter<'outcome'>;
  readonly artifactsReused: prom.Counter<'kind'>;
  /** 1 while the worker's ffmpeg and ffprobe run and it takes jobs, 0 otherwise. */
  readonly healthy: prom.Gauge;
  /** Errors of this process's BullMQ workers (downloads, webhooks, collections), by queue. */
  readonly queueWorkerErrors: prom.Counter<'queue'>;

  constructor(jobCounts: () => Promise<Record<string, number>>, logger: Logger) {
    // The event-loop lag histogram samples every EVENT_LOOP_PRECISION_MS, not prom-client's 10 ms.
    this.registry = createRegistry({ app: 'worker' }, { eventLoopPrecisionMs: EVENT_LOOP_PRECISION_MS });
    const registers = [this.registry];
    this.jobs = new prom.Counter({
      name: 'reelay_jobs_total',
      help: "Job attempts by operation, outcome (completed, failed for good, retried, handed_back at shutdown, cancelled by DELETE /api/v1/jobs/{id}) and error_code (the contract's error code of a failed or retried attempt; none otherwise).",
      labelNames: ['operation', 'outcome', 'error_code'],
      registers,
    });
    this.jobDuration = new prom.Histogram({
      name: 'reelay_job_duration_seconds',
      help: 'Time a job attempt took, by operation, outcome and error_code.',
      labelNames: ['operation', 'outcome', 'error_code'],
      buckets: JOB_BUCKETS,
      registers,
    });
    this.ffmpegFailures = new prom.Counter({
      name: 'reelay_ffmpeg_failures_total',
      help: 'ffmpeg runs that failed, by operation and kind (failed, timeout, aborted).',
      labelNames: ['operation', 'kind'],
      registers,
    });
    this.proxyBytes = new prom.Counter({
      name: 'reelay_proxy_bytes_total',
      help: 'Bytes the egress proxy passed to ffmpeg.',
      registers,
    });
    this.proxyBlocked = new prom.Counter({
      name: 'reelay_proxy_blocked_total',
      help: 'ffmpeg requests the egress proxy refused (blocked address or scheme).',
      registers,
    });
    this.webhookAttempts = new prom.Counter({
      name: 'reelay_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome: delivered, retried (failed, another follows) or failed (the last one failed).',
      labelNames: ['outcome'],
      registers,
    });
    this.artifactsReused = new prom.Counter({
      name: 'reelay_artifacts_reused_total',
      help: "Files copied from an identical request's living artifact instead of being made again, by kind (job: a download's file; bundle: a collection's ZIP).",
      labelNames: ['kind'],
      registers,
    });
    this.queueWorkerErrors = queueWorkerErrors(this.registry);
    this.healthy = new prom.Gauge({
      name: 'reelay_worker_healthy',
      help: '1 while this worker can run ffmpeg and ffprobe and takes jobs, 0 otherwise (its /healthz says why).',
      registers,
    });
    this.queueJobs = new prom.Gauge({
      name: 'reelay_queue_jobs',
      help: 'Jobs in the downloads queue by state, read at scrape time.',
      labelNames: ['state'],
      registers,
      async collect() {
        try {
          const counts = await jobCounts();
          for (const state of QUEUE_STATES) this.set({ state }, counts[state] ?? 0);
        } catch (err) {
          // The scrape still answers with the process metrics; the gauge keeps its last values.
          logger.warn({ err: (err as Error).message }, 'queue depth unavailable for /metrics');
        }
      },
    });
  }

  /**
   * One job attempt ended. errorCode is the contract's error code (from the error table, so the
   * label stays bounded) for failed and retried attempts; leave it out for the others.
   */
  jobFinished(
    operation: string,
    outcome: JobOutcome,
    seconds: number,
    errorCode: ErrorCode | typeof NO_ERROR = NO_ERROR,
  ): void {
    const labels = { operation, outcome, error_code: errorCode };
    this.jobs.inc(labels);
    this.jobDuration.observe(labels, seconds);
  }
}
