// Cancelling and stopping jobs from any gateway replica (DESIGN.md "Live streams, stopping and
// cancelling"), by the job's creator only (job-grants.ts; 403 for anyone else). A queued job is taken out of the queue here, leaving a cancelled record; a running
// one is on some worker, which hears the signal through Redis (contracts' job-signals.ts: a key read
// at job start, then a pub/sub message), kills its processes, removes its files and fails the job
// with the cancel code so no retry takes it. The answer waits briefly for that end, so a cancel
// that loses the race with the job's completion says so (409) instead of promising what did not happen.
import { setTimeout as delay } from 'node:timers/promises';
import type { Queue } from 'bullmq';
import type { RedisClient } from '@reelay/redis';
import {
  cancelledJobKey,
  CANCELLED_RECORD_TTL_SECONDS,
  JOB_ID_PATTERN,
  JOB_SIGNAL_CHANNEL,
  JOB_SIGNAL_TTL_SECONDS,
  jobSignalKey,
  ReelayError,
  TERMINAL_STATUSES,
  type CancelledRecord,
  type JobSignal,
  type JobSignalMessage,
  type JobView,
} from '@reelay/contracts';
import type { ControlCredentials, JobGrants } from './job-grants.js';
import type { JobService, JobSnapshot } from './jobs.js';

/** Operations that record a live stream, the only jobs `stop` applies to (none exist yet). */
const RECORDING_OPERATIONS: ReadonlySet<string> = new Set(['record']);

export type CancelOutcome = 'queued' | 'processing';

export interface JobControlOptions {
  /** How long a cancel of a running job waits for the worker to end it before answering (default 5 s). */
  settleMs?: number;
  /** Counts each accepted cancel by the state it found the job in. */
  onCancel?: (outcome: CancelOutcome) => void;
}

const unavailable = (cause: unknown) =>
  new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', { cause });

export class JobControl {
  constructor(
    private readonly queue: Queue,
    private readonly redis: RedisClient,
    private readonly jobs: JobService,
    private readonly grants: JobGrants,
    private readonly options: JobControlOptions = {},
  ) {}

  /** Records the signal, then announces it: a worker that starts the job later reads the key. */
  async signal(id: string, signal: JobSignal): Promise<void> {
    const message: JobSignalMessage = { id, signal };
    try {
      await this.redis.set(jobSignalKey(signal, id), String(Date.now()), 'EX', JOB_SIGNAL_TTL_SECONDS);
      await this.redis.publish(JOB_SIGNAL_CHANNEL, JSON.stringify(message));
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** The job as it is now; 404 for a malformed or unknown id. */
  private async current(id: string): Promise<JobSnapshot> {
    if (!JOB_ID_PATTERN.test(id)) throw new ReelayError('job_not_found', 'There is no job with this id.');
    return this.jobs.snapshot(id);
  }

  /** The job as it is now, once the credentials are found to control it: 404 first, then 403. */
  private async controlled(id: string, credentials: ControlCredentials): Promise<JobSnapshot> {
    const now = await this.current(id);
    await this.grants.check(id, credentials);
    return now;
  }

  /**
   * Cancels a queued or processing job for its creator; throws job_finished for one that has ended
   * (or that ended by itself while the cancel was on its way).
   */
  async cancel(id: string, credentials: ControlCredentials): Promise<CancelOutcome> {
    return this.cancelJob(id, await this.controlled(id, credentials));
  }

  private async cancelJob(id: string, now: JobSnapshot): Promise<CancelOutcome> {
    const { view } = now;
    if (TERMINAL_STATUSES.has(view.status)) throw finished(view);
    if (view.operation === 'collection') return this.cancelCollection(id, view);
    await this.signal(id, 'cancel');
    if (view.status === 'queued' && (await this.removeQueued(id, now))) {
      this.options.onCancel?.('queued');
      return 'queued';
    }
    // Processing (or taken by a worker in the meantime, which reads the key when it starts).
    const end = await this.settle(id);
    if (end && end.status !== 'cancelled') throw finished(end);
    this.options.onCancel?.('processing');
    return 'processing';
  }

  /**
   * A collection: the parent's cancel is recorded first (its processor then ends it as cancelled),
   * then every child still queued or running is cancelled through the same path as any job. The
   * parent runs once no child is left, and ends cancelled.
   */
  private async cancelCollection(id: string, view: JobView): Promise<CancelOutcome> {
    await this.signal(id, 'cancel');
    const children = await this.jobs.children(id);
    const live = children.filter((c) => c.job_id && (c.status === 'queued' || c.status === 'processing'));
    await Promise.all(
      live.map((c) =>
        this.cancelChild(c.job_id!).catch((err: unknown) => {
          // A child that ended meanwhile is fine; anything else (Redis) is the answer.
          if (err instanceof ReelayError && (err.code === 'job_finished' || err.code === 'job_not_found')) return;
          throw err;
        }),
      ),
    );
    const end = await this.settle(id);
    if (end && end.status !== 'cancelled') throw finished(end);
    return view.status === 'queued' ? 'queued' : 'processing';
  }

  /** A collection's entry, cancelled with its parent (whose control was checked). */
  private async cancelChild(id: string): Promise<CancelOutcome> {
    return this.cancelJob(id, await this.current(id));
  }

  /**
   * Takes a queued job out of the queue. The cancelled record is written first: while BullMQ still
   * has the job its state wins (JobService), and from the moment the job is gone every reader finds
   * the record. Removing the job also releases its webhook delivery (a flow's parent waits for no
   * removed child), which announces job.cancelled from the record. Returns false when a worker took
   * the job first (BullMQ refuses to remove a locked job): that worker has the signal.
   */
  private async removeQueued(id: string, { view, attempts }: JobSnapshot): Promise<boolean> {
    const { webhook, ...rest } = view;
    const record: CancelledRecord = {
      view: { ...rest, status: 'cancelled', progress: 0, finished_at: new Date().toISOString() },
      ...(webhook ? { webhook_url: webhook.url } : {}),
      attempts: attempts + 1,
    };
    delete record.view.started_at;
    try {
      await this.redis.set(cancelledJobKey(id), JSON.stringify(record), 'EX', CANCELLED_RECORD_TTL_SECONDS);
      const removed = await this.queue.remove(id);
      if (removed === 1) return true;
      await this.redis.del(cancelledJobKey(id));
      return false;
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** Polls until the job has ended, for at most settleMs; undefined if it is still running then. */
  private async settle(id: string): Promise<JobView | undefined> {
    const deadline = Date.now() + (this.options.settleMs ?? 5_000);
    for (;;) {
      const view = await this.jobs.view(id);
      if (TERMINAL_STATUSES.has(view.status)) return view;
      if (Date.now() >= deadline) return undefined;
      await delay(50);
    }
  }

  /**
   * Asks a recording to end and keep what it has (the worker hears it through Redis and completes
   * the job with `ended: "stopped"`). Only a recording in progress can be stopped.
   */
  async stop(id: string, credentials: ControlCredentials): Promise<void> {
    const { view } = await this.controlled(id, credentials);
    if (!RECORDING_OPERATIONS.has(view.operation) || view.status !== 'processing') {
      throw new ReelayError(
        'not_recording',
        'This job is not a recording in progress, so there is nothing to stop; DELETE /api/v1/jobs/{id} cancels any job.',
      );
    }
    await this.signal(id, 'stop');
  }
}

function finished(view: JobView): ReelayError {
  return new ReelayError('job_finished', `The job has already ended (${view.status}); there is nothing to cancel.`);
}
