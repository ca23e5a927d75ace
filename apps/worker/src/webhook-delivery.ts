// Webhook deliveries (DESIGN.md "Job events and webhooks"): the processor of the WEBHOOK_QUEUE,
// which BullMQ hands a delivery once its download job has ended (the gateway adds both as one flow).
// Each attempt POSTs the message through the egress guard (the URL is checked again, redirects are
// not followed, the whole exchange has WEBHOOK_TIMEOUT's deadline and the answer's body is not read),
// signed per Standard Webhooks. A non-2xx answer or no answer throws, and BullMQ retries on the
// schedule of webhookRetryDelay. The secret is never logged and never part of an error.
import { createHmac } from 'node:crypto';
import { Job, UnrecoverableError, type Queue } from 'bullmq';
import type { RedisClient } from '@reelay/redis';
import {
  collectionChildrenKey,
  collectionView,
  readChildren,
  cancelledJobKey,
  CancelledRecordSchema,
  jobView,
  ReelayError,
  webhookKey,
  WebhookJobSchema,
  type JobPayload,
  type JobView,
  type WebhookEvent,
  type WebhookEventType,
} from '@reelay/contracts';
import type { Egress } from '@reelay/egress';
import { logRef, type Logger } from '@reelay/observability';

/** DESIGN.md: a 2xx within 10 s is a delivery. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** `v1,<signature>` for each key, space-separated (several while a secret is being rotated). */
export function webhookSignature(keys: Buffer[], id: string, timestamp: number, body: string): string {
  return keys
    .map((key) => `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`)
    .join(' ');
}

export interface WebhookDeps {
  egress: Pick<Egress, 'open'>;
  /** The download queue, whose job of the same id the message describes. */
  downloads: Queue;
  /** COLLECTION_QUEUE: a collection parent's delivery describes the parent (and reads its children). */
  collections?: Queue;
  prefix?: string;
  /** Where a job cancelled while queued left its record (it is no longer in the queue). */
  redis?: Pick<RedisClient, 'get'>;
  /** The deployment's WEBHOOK_SECRET list: signs deliveries whose request brought no secret. */
  secrets: readonly string[];
  logger: Logger;
  timeoutMs?: number;
  /** Each attempt's outcome, for reelay_webhook_attempts_total. */
  onAttempt?: (outcome: 'delivered' | 'retried' | 'failed') => void;
}

export type WebhookResult = { status: number };

export function createWebhookProcessor(
  deps: WebhookDeps,
): (job: Job<unknown, WebhookResult>) => Promise<WebhookResult> {
  return async (job) => {
    const parsed = WebhookJobSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError('The delivery job is invalid.');
    const data = parsed.data;
    const log = deps.logger.child({ job: logRef(data.job_id), webhook_attempt: job.attemptsMade + 1 });
    // Made once, at the first attempt: every retry sends the same body under the same webhook-id.
    const message = data.message ?? (await makeMessage(deps, data.job_id, data.subscription_id));
    if (!data.message) await job.updateData({ ...data, message });
    const keys = (data.secret ? [data.secret] : deps.secrets)
      .map(webhookKey)
      .filter((k): k is Buffer => k !== undefined);
    if (keys.length === 0) {
      await job.updateProgress({ last_error: 'invalid_request' });
      log.error('webhook not sent: the request gave no webhook_secret and WEBHOOK_SECRET is unset');
      throw new UnrecoverableError('No webhook secret to sign with.');
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'webhook-id': message.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': webhookSignature(keys, message.id, timestamp, message.body),
    };
    // Once no attempt follows, the secret has no more use: it leaves Redis at once rather than with the job.
    const last = async () => {
      if (data.secret) await job.updateData({ job_id: data.job_id, url: data.url, message });
    };
    const final = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    let status: number;
    try {
      const res = await deps.egress.open(data.url, {
        method: 'POST',
        body: message.body,
        headers,
        followRedirects: false,
        allowErrorStatus: true,
        identity: true,
        deadlineMs: deps.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
      });
      res.body.destroy(); // the status is the answer; a receiver's body is never read
      status = res.status;
    } catch (err) {
      const code = err instanceof ReelayError ? err.code : 'upstream_error';
      await job.updateProgress({ last_error: code });
      if (final) await last();
      deps.onAttempt?.(final ? 'failed' : 'retried');
      log.warn({ error: code }, 'webhook attempt failed');
      throw new Error(`The webhook attempt failed: ${code}.`);
    }
    await job.updateProgress({ last_status: status });
    if (status >= 200 && status < 300) {
      await last();
      deps.onAttempt?.('delivered');
      log.info({ status }, 'webhook delivered');
      return { status };
    }
    if (final) await last();
    deps.onAttempt?.(final ? 'failed' : 'retried');
    log.warn({ status }, 'webhook attempt failed');
    throw new Error(`The webhook answered HTTP ${status}.`);
  };
}

const EVENT_TYPES: Partial<Record<JobView['status'], WebhookEventType>> = {
  failed: 'job.failed',
  cancelled: 'job.cancelled',
};

/** The message for a download job that has ended: job.completed, job.failed or job.cancelled, with the Job. */
async function makeMessage(
  deps: Pick<WebhookDeps, 'downloads' | 'redis' | 'collections' | 'prefix'>,
  id: string,
  subscriptionId?: string,
): Promise<{ id: string; body: string }> {
  const [state, job] = await Promise.all([deps.downloads.getJobState(id), Job.fromId<JobPayload>(deps.downloads, id)]);
  const parent = !job && deps.collections ? await Job.fromId(deps.collections, id) : undefined;
  if (parent && deps.collections && deps.redis) {
    // A collection: announced once, when the parent has ended, with the parent's Job.
    const parentState = await deps.collections.getJobState(id);
    if (parentState !== 'completed' && parentState !== 'failed')
      throw new Error(`The collection job has not ended (${parentState}).`);
    const children = await readChildren(
      await deps.redis.get(collectionChildrenKey(deps.prefix, id)),
      async (childId) => {
        const [childState, child] = await Promise.all([
          deps.downloads.getJobState(childId),
          Job.fromId(deps.downloads, childId),
        ]);
        return { state: childState, job: child };
      },
    );
    const view = collectionView(id, parent, parentState, children);
    const event: WebhookEvent = {
      type: EVENT_TYPES[view.status] ?? 'job.completed',
      timestamp: new Date(parent.finishedOn ?? Date.now()).toISOString(),
      data: view,
    };
    return { id: `msg_${id}`, body: JSON.stringify(event) };
  }
  if (!job) {
    // Cancelled while queued: the job left the queue (which released this delivery) and its record stayed.
    const raw = await deps.redis?.get(cancelledJobKey(id));
    const record = raw ? CancelledRecordSchema.safeParse(JSON.parse(raw)) : undefined;
    if (!record?.success) throw new UnrecoverableError('The download job is gone: there is nothing to announce.');
    const timestamp = record.data.view.finished_at ?? new Date().toISOString();
    const event: WebhookEvent = subscriptionId
      ? { type: 'subscription.item.failed', timestamp, data: { ...record.data.view, subscription_id: subscriptionId } }
      : { type: 'job.cancelled', timestamp, data: record.data.view };
    return { id: `msg_${id}`, body: JSON.stringify(event) };
  }
  if (state !== 'completed' && state !== 'failed') throw new Error(`The download job has not ended (${state}).`);
  const view = jobView(id, job, state);
  const timestamp = new Date(job.finishedOn ?? Date.now()).toISOString();
  // A subscription's item (DESIGN.md "Subscriptions"): its own type, and the Job names the subscription.
  const event: WebhookEvent = subscriptionId
    ? {
        type: view.status === 'completed' ? 'subscription.item.completed' : 'subscription.item.failed',
        timestamp,
        data: { ...view, subscription_id: subscriptionId },
      }
    : { type: EVENT_TYPES[view.status] ?? 'job.completed', timestamp, data: view };
  return { id: `msg_${id}`, body: JSON.stringify(event) };
}
