// The parent Job of a collection download as the gateway reads it: the children's records from
// Redis and each child's state from BullMQ, through the shared view (contracts' collection-view.ts).
import { Job, type Queue } from 'bullmq';
import type { RedisClient } from '@reelay/redis';
import { collectionChildrenKey, readChildren as readChildViews, type ChildView } from '@reelay/contracts';

export { collectionView, type ChildView } from '@reelay/contracts';

export async function readChildren(
  redis: RedisClient,
  downloads: Queue,
  prefix: string | undefined,
  id: string,
): Promise<ChildView[]> {
  return readChildViews(await redis.get(collectionChildrenKey(prefix, id)), async (jobId) => {
    // The state before the hash, not beside it: a child that fails or is cancelled between the two
    // reads then looks still running, never failed without its reason (a cancelled child shown as
    // failed). A child has no event ids of its own, so the other tear (a newer attempt count) shows
    // nothing (see readJob in jobs.ts).
    const state = await downloads.getJobState(jobId);
    return { state, job: await Job.fromId(downloads, jobId) };
  });
}
