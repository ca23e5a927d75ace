// The parent Job of a collection download as the gateway reads it: the children's records from
// Redis and each child's state from BullMQ, through the shared view (contracts' collection-view.ts).
import { Job, type Queue } from 'bullmq';
import type { RedisClient } from '@reelay/accounts';
import { collectionChildrenKey, readChildren as readChildViews, type ChildView } from '@reelay/contracts';

export { collectionView, type ChildView } from '@reelay/contracts';

export async function readChildren(redis: RedisClient, downloads: Queue, prefix: string | undefined, id: string): Promise<ChildView[]> {
  return readChildViews(await redis.get(collectionChildrenKey(prefix, id)), async (jobId) => {
    const [state, job] = await Promise.all([downloads.getJobState(jobId), Job.fromId(downloads, jobId)]);
    return { state, job };
  });
}
