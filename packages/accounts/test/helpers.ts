// A Redis client with the gateway's fail-fast options, and unique names so test files never meet.
import { randomBytes } from 'node:crypto';
import { testRedisClient } from '@reelay/testkit';
import type { RedisClient } from '@reelay/redis';

/** The run's Redis (one server, or a cluster with REELAY_TEST_REDIS=cluster). */
export async function testRedis(url = process.env.REDIS_URL!): Promise<RedisClient> {
  const redis = testRedisClient(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: () => 200,
    connectTimeout: 5_000,
    disconnectTimeout: 200,
  });
  redis.on('error', () => {}); // fault tests stop servers on purpose
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  return redis;
}

export const unique = (label: string) => `${label}-${randomBytes(6).toString('hex')}`;
export const uniqueEmail = () => `${unique('user')}@example.com`;
/** A random private address: one bucket per test (2^24 of them). */
export const uniqueIp = () => `10.${[...randomBytes(3)].join('.')}`;
