// Job records as clients see them (DESIGN.md's Job), read from BullMQ, which is the one store of
// job state: status, progress, timestamps, error and artifact.
import { Job, type Queue } from 'bullmq';
import type { RedisClient } from '@reelay/redis';
import type { ArtifactStore, StoredArtifact } from '@reelay/artifacts';
import { jobEventId } from './job-event-id.js';
import { collectionView, readChildren, type ChildView } from './collection-view.js';
import {
  ChildRecordsSchema,
  collectionChildrenKey,
  cancelledJobKey,
  CancelledRecordSchema,
  JOB_ID_PATTERN,
  jobView,
  ReelayError,
  WebhookAttemptSchema,
  type CancelledRecord,
  type JobPayload,
  type JobView,
  type WebhookView,
} from '@reelay/contracts';

export interface JobSnapshot {
  view: JobView;
  eventId: number;
  /** How many times the job has been started (BullMQ's attemptsStarted). */
  attempts: number;
}

export class JobService {
  constructor(
    private readonly queue: Queue,
    private readonly artifacts: ArtifactStore,
    /** The queue of webhook deliveries (WEBHOOK_QUEUE), whose job of the same id is this job's delivery. */
    private readonly webhooks?: Queue,
    /** Where the records of jobs cancelled while queued are kept (job-signals.ts); without it there are none. */
    private readonly redis?: RedisClient,
    /** COLLECTION_QUEUE, where collection parents live (collection-view.ts); without it there are none. */
    private readonly collections?: { queue: Queue; prefix?: string },
  ) {}

  /** A collection parent by id, with its BullMQ state; undefined when the id is not one. */
  private async findCollection(id: string): Promise<{ job: Job; state: string } | undefined> {
    if (!this.collections || !JOB_ID_PATTERN.test(id)) return undefined;
    try {
      return await readJob(this.collections.queue, id);
    } catch (err) {
      throw new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', {
        cause: err,
      });
    }
  }

  /** The child job ids of a collection parent (none for any other id): its event stream follows them too. */
  async collectionChildIds(id: string): Promise<string[]> {
    if (!this.collections || !this.redis || !JOB_ID_PATTERN.test(id)) return [];
    if ((await this.collections.queue.getJobState(id)) === 'unknown') return [];
    const raw = await this.redis.get(collectionChildrenKey(this.collections.prefix, id));
    const records = raw ? ChildRecordsSchema.safeParse(JSON.parse(raw)) : undefined;
    return records?.success ? records.data.flatMap((r) => (r.job_id ? [r.job_id] : [])) : [];
  }

  /** A collection's entries in entry order, from `offset`, at most `limit` (GET /api/v1/jobs/{id}/children). */
  async children(id: string): Promise<ChildView[]> {
    const found = await this.findCollection(id);
    if (!found || !this.redis) throw new ReelayError('job_not_found', 'There is no collection job with this id.');
    try {
      return await readChildren(this.redis, this.queue, this.collections?.prefix, id);
    } catch (err) {
      throw new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', {
        cause: err,
      });
    }
  }

  /** The job and its state, read as one (readJob). */
  private async find(id: string): Promise<{ job: Job<JobPayload>; state: string } | undefined> {
    if (!JOB_ID_PATTERN.test(id)) return undefined;
    try {
      return await readJob<JobPayload>(this.queue, id);
    } catch (err) {
      throw new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', {
        cause: err,
      });
    }
  }

  /**
   * What is left of a job cancelled while queued (removed from the queue): its record, if any. Read
   * only when BullMQ does not know the id, so while the job exists BullMQ's state always wins.
   */
  async cancelled(id: string): Promise<CancelledRecord | undefined> {
    try {
      const raw = await this.redis?.get(cancelledJobKey(id));
      if (!raw) return undefined;
      const record = CancelledRecordSchema.safeParse(JSON.parse(raw));
      return record.success ? record.data : undefined;
    } catch (err) {
      throw new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', {
        cause: err,
      });
    }
  }

  /** Whether a job exists and can still give its artifact (for de-duplication). */
  async alive(id: string): Promise<boolean> {
    const view = await this.view(id).catch(() => undefined);
    return view !== undefined && view.status !== 'failed' && view.status !== 'expired' && view.status !== 'cancelled';
  }

  async view(id: string): Promise<JobView> {
    return (await this.snapshot(id)).view;
  }

  /** The job with the id of its state in the event stream (job-event-id.ts). */
  async snapshot(id: string): Promise<JobSnapshot> {
    const found = await this.find(id);
    const parent = found ? undefined : await this.findCollection(id);
    if (parent) {
      const children = this.redis
        ? await readChildren(this.redis, this.queue, this.collections?.prefix, id).catch((err: unknown) => {
            throw new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', {
              cause: err,
            });
          })
        : [];
      const view = collectionView(id, parent.job, parent.state, children);
      if (parent.job.data.webhook_url) view.webhook = await this.webhook(id, parent.job.data.webhook_url);
      const attempts = parent.job.attemptsStarted ?? 0;
      return { view, eventId: jobEventId(view, attempts), attempts };
    }
    if (!found) {
      const record = JOB_ID_PATTERN.test(id) ? await this.cancelled(id) : undefined;
      if (!record) throw new ReelayError('job_not_found', 'There is no job with this id.');
      const view: JobView = { ...record.view };
      if (record.webhook_url) view.webhook = await this.webhook(id, record.webhook_url);
      return { view, eventId: jobEventId(view, record.attempts), attempts: record.attempts };
    }
    const { job, state } = found;
    const view = jobView(id, job, state);
    if (job.data.webhook_url) view.webhook = await this.webhook(id, job.data.webhook_url);
    const attempts = job.attemptsStarted ?? 0;
    return { view, eventId: jobEventId(view, attempts), attempts };
  }

  /**
   * The delivery's state: waiting for the job to end, or retrying, is pending; BullMQ's completed is
   * delivered, its failed (every attempt used) failed. The last attempt's answer is its progress.
   */
  private async webhook(id: string, url: string): Promise<WebhookView> {
    const view: WebhookView = { url, status: 'pending', attempts: 0 };
    if (!this.webhooks) return view;
    try {
      const [state, delivery] = await Promise.all([this.webhooks.getJobState(id), Job.fromId(this.webhooks, id)]);
      if (!delivery) return view;
      view.attempts = delivery.attemptsMade;
      if (state === 'completed') view.status = 'delivered';
      else if (state === 'failed') view.status = 'failed';
      const last = WebhookAttemptSchema.safeParse(delivery.progress);
      if (last.success) Object.assign(view, last.data);
      return view;
    } catch (err) {
      throw new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', {
        cause: err,
      });
    }
  }

  /** The stored artifact of a completed job; 410 once expired, 409 while not finished. */
  async artifact(id: string): Promise<StoredArtifact> {
    const view = await this.view(id);
    if (view.status === 'expired')
      throw new ReelayError('artifact_expired', 'The artifact has expired; request the download again.');
    if (view.status === 'failed')
      throw new ReelayError('artifact_not_ready', 'The job failed, so it has no artifact; see the job for its error.');
    if (view.status === 'cancelled')
      throw new ReelayError('artifact_not_ready', 'The job was cancelled, so it has no artifact.');
    if (view.status !== 'completed')
      throw new ReelayError('artifact_not_ready', 'The job has not finished yet; poll the job until it is completed.');
    const stored = await this.artifacts.get(id).catch((err: unknown) => {
      // The store itself (S3) is unreachable: a temporary outage, not a server fault.
      throw new ReelayError('service_unavailable', 'The artifact store is unavailable; try again shortly.', {
        cause: err,
      });
    });
    if (!stored || stored.meta.expires_at <= Date.now())
      throw new ReelayError('artifact_expired', 'The artifact has expired; request the download again.');
    return stored;
  }
}

/**
 * States in which a job's hash read after them shows nothing that would raise its event id: a final
 * one (completed, failed) never changes, and BullMQ writes the result in the same step; a newer hash
 * of an active job counts the attempt under way (or a later one, only once it has begun).
 */
const SETTLED_STATES = new Set(['active', 'completed', 'failed']);
/** Reads of a job that keeps changing its state before the answer says how it stands at its end. */
const STATE_READS = 4;

/**
 * A job and its BullMQ state as they were at one moment. They are two reads (a state script and the
 * job's hash), and a job may move between them:
 * - read the hash first and a job finishing in between looks completed without its result (expired);
 * - read the state first and a job taken by a worker in between looks queued with the next attempt's
 *   count: "queued again", whose event id is above every id of the attempt that has just begun, so an
 *   event stream dropped the processing and completed events that followed and hung until the client
 *   gave up (seen in the CLI test about one run in twenty).
 * So: the state, then the hash, and for a job still waiting (or delayed) the state again, until the
 * two states agree. The hash then counts no attempt the state does not, and the event id is never
 * above the job's own.
 */
export async function readJob<T = unknown>(
  queue: Queue,
  id: string,
): Promise<{ job: Job<T>; state: string } | undefined> {
  let state = await queue.getJobState(id);
  for (let read = 1; ; read += 1) {
    if (state === 'unknown') return undefined;
    const job = await Job.fromId<T>(queue, id);
    if (!job) return undefined;
    if (SETTLED_STATES.has(state)) return { job, state };
    const after = await queue.getJobState(id);
    // Still moving after a few reads: a waiting state read after the hash is safe for the id too.
    if (after === state || (read >= STATE_READS && !SETTLED_STATES.has(after) && after !== 'unknown'))
      return { job, state: after };
    state = after;
  }
}
