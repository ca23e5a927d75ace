// The worker's Prometheus metrics. Labels are bounded: operations from the contract, outcomes from a
// fixed list, ffmpeg failure kinds, queue states. Queue depth is read from Redis on each scrape.
import { createRegistry, JOB_BUCKETS, prom, type Logger, type Registry } from '@reelay/observability';

export type JobOutcome = 'completed' | 'failed' | 'retried' | 'handed_back' | 'lock_lost';

export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized'] as const;

export class WorkerMetrics {
  readonly registry: Registry;
  readonly jobs: prom.Counter<'operation' | 'outcome'>;
  readonly jobDuration: prom.Histogram<'operation' | 'outcome'>;
  readonly ffmpegFailures: prom.Counter<'operation' | 'kind'>;
  readonly queueJobs: prom.Gauge<'state'>;
  readonly proxyBytes: prom.Counter;
  readonly proxyBlocked: prom.Counter;
  /** Failed attempts by error code (a bounded set: the contract's codes). */
  readonly jobErrors: prom.Counter<'operation' | 'code'>;
  /** 1 while the worker's ffmpeg and ffprobe run and it takes jobs, 0 otherwise. */
  readonly healthy: prom.Gauge;

  constructor(jobCounts: () => Promise<Record<string, number>>, logger: Logger) {
    this.registry = createRegistry({ app: 'worker' });
    const registers = [this.registry];
    this.jobs = new prom.Counter({ name: 'reelay_jobs_total', help: 'Job attempts by operation and outcome: completed, failed (for good), retried, handed_back (at shutdown).', labelNames: ['operation', 'outcome'], registers });
    this.jobDuration = new prom.Histogram({ name: 'reelay_job_duration_seconds', help: 'Time a job attempt took, by operation and outcome.', labelNames: ['operation', 'outcome'], buckets: JOB_BUCKETS, registers });
    this.ffmpegFailures = new prom.Counter({ name: 'reelay_ffmpeg_failures_total', help: 'ffmpeg runs that failed, by operation and kind (failed, timeout, aborted).', labelNames: ['operation', 'kind'], registers });
    this.proxyBytes = new prom.Counter({ name: 'reelay_proxy_bytes_total', help: 'Bytes the egress proxy passed to ffmpeg.', registers });
    this.proxyBlocked = new prom.Counter({ name: 'reelay_proxy_blocked_total', help: 'ffmpeg requests the egress proxy refused (blocked address or scheme).', registers });
    this.jobErrors = new prom.Counter({ name: 'reelay_job_errors_total', help: 'Failed job attempts (failed for good or retried) by operation and error code, e.g. storage_error.', labelNames: ['operation', 'code'], registers });
    this.healthy = new prom.Gauge({ name: 'reelay_worker_healthy', help: '1 while this worker can run ffmpeg and ffprobe and takes jobs, 0 otherwise (its /healthz says why).', registers });
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

  jobFinished(operation: string, outcome: JobOutcome, seconds: number): void {
    this.jobs.inc({ operation, outcome });
    this.jobDuration.observe({ operation, outcome }, seconds);
  }
}
