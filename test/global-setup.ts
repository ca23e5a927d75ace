// One private redis-server for the whole run (tests read REDIS_URL), and the directory where the
// ffmpeg test media is made on first use.
import os from 'node:os';
import path from 'node:path';
import { startRedis, type RedisHandle } from '../packages/testkit/src/redis.ts';

export default async function setup(): Promise<void> {
  const redis = await startRedis();
  (globalThis as { __REELAY_REDIS__?: RedisHandle }).__REELAY_REDIS__ = redis;
  process.env.REDIS_URL = redis.url;
  process.env.REELAY_TEST_MEDIA ??= path.join(os.tmpdir(), `reelay-test-media-v1-${process.getuid?.() ?? 0}`);
}
