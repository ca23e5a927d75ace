// One private redis-server for the whole run (tests read REDIS_URL), and the directory where the
// ffmpeg test media is made on first use. With REELAY_TEST_REDIS=cluster the run gets a private
// Redis Cluster instead (3 primaries, 3 replicas) and REDIS_URL names it (`pnpm test:cluster`).
import os from 'node:os';
import path from 'node:path';
import { startRedis } from '../packages/testkit/src/redis.ts';
import { startRedisCluster } from '../packages/testkit/src/redis-cluster.ts';

export default async function setup(): Promise<void> {
  const redis = process.env.REELAY_TEST_REDIS === 'cluster' ? await startRedisCluster() : await startRedis();
  (globalThis as { __REELAY_REDIS__?: { stop(): Promise<void> } }).__REELAY_REDIS__ = redis;
  process.env.REDIS_URL = redis.url;
  process.env.REELAY_TEST_MEDIA ??= path.join(os.tmpdir(), `reelay-test-media-v1-${process.getuid?.() ?? 0}`);
}
