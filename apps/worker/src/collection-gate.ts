// COLLECTION_CONCURRENCY: a collection's children beyond the first few wait delayed; each child that
// ends releases the next one in entry order. The pop is atomic, so two workers never release the
// same child, and a collection never has more than its share in the queue ahead of other clients.
import type { Job, Queue } from 'bullmq';
import type { RedisClient } from '@reelay/redis';
import { COLLECTION_QUEUE, collectionGateKey } from '@reelay/contracts';
import { logRef, type Logger } from '@reelay/observability';

/** The parent's id when `job` is a child of a collection. */
export function collectionOf(job: Pick<Job, 'parent'>): string | undefined {
  const parent = job.parent;
  return parent?.id && parent.queueKey.endsWith(`:${COLLECTION_QUEUE}`) ? parent.id : undefined;
}

/** Releases the next gated child of the collection `job` belongs to (after `job` ended for good). */
export async function releaseNext(
  job: Pick<Job, 'parent'>,
  deps: { redis: RedisClient; queue: Queue; prefix?: string; logger: Logger },
): Promise<void> {
  const parentId = collectionOf(job);
  if (!parentId) return;
  for (;;) {
    const next = await deps.redis.lpop(collectionGateKey(deps.prefix, parentId));
    if (!next) return;
    const child = await deps.queue.getJob(next);
    // A child cancelled (removed) while gated is skipped: the next one takes its place.
    if (!child || !(await child.isDelayed())) continue;
    await child
      .promote()
      .catch((err: unknown) => deps.logger.warn({ err, job: logRef(next) }, 'could not release a collection child'));
    return;
  }
}
