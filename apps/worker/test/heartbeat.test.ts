// The heartbeat against a real Redis: every beat rewrites this worker's entry, and dead workers'
// entries are pruned on the first beat and then once every PRUNE_EVERY beats, not on each one (a
// prune reads the whole hash, which with many workers is the costly part of a beat).
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { WORKER_HEALTH_TTL_SECONDS } from '@reelay/contracts';
import { createLogger } from '@reelay/observability';
import { Heartbeat, PRUNE_EVERY } from '../src/heartbeat.js';
import { testRedisClient } from '@reelay/testkit';
import type { RedisClient } from '@reelay/redis';

const PREFIX = `reelay-test-heartbeat-${process.pid}`;
let redis: RedisClient;

beforeAll(() => {
  redis = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  await redis?.quit();
});

test('a worker prunes dead entries on its first beat and then once every PRUNE_EVERY beats, and writes its own on each', async () => {
  const beat = new Heartbeat(redis, PREFIX, createLogger({ name: 'heartbeat-test', level: 'silent' }));
  const dead = JSON.stringify({ healthy: true, at: Date.now() - (WORKER_HEALTH_TTL_SECONDS + 5) * 1000 });
  await redis.hset(beat.key, 'dead-1', dead, 'garbled', 'not json');

  await beat.beat({ healthy: true });
  expect(Object.keys(await redis.hgetall(beat.key))).toEqual([beat.id]);

  // A worker that died after the first prune stays until the next one.
  await redis.hset(beat.key, 'dead-2', dead);
  for (let i = 1; i < PRUNE_EVERY; i++) {
    const at = Date.now();
    await beat.beat({ healthy: i % 2 === 0, reason: i % 2 === 0 ? undefined : 'ffmpeg cannot be run' });
    const mine = JSON.parse((await redis.hget(beat.key, beat.id))!) as { healthy: boolean; at: number };
    expect(mine.at).toBeGreaterThanOrEqual(at);
    expect(mine.healthy).toBe(i % 2 === 0);
    expect(await redis.hexists(beat.key, 'dead-2')).toBe(1);
  }
  await beat.beat({ healthy: true });
  expect(Object.keys(await redis.hgetall(beat.key))).toEqual([beat.id]);
  expect(await redis.ttl(beat.key)).toBeGreaterThan(0);

  await beat.stop();
  expect(await redis.hexists(beat.key, beat.id)).toBe(0);
});
