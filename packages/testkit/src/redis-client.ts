// Tests' own Redis clients, through @reelay/redis like every other client (apart from redis-cluster.ts
// and redis.ts, which the jest global setup loads before anything is built, and which open none).
import { redisAt, type ConnectionOptions, type RedisClient } from '@reelay/redis';

/**
 * A plain client of the run's Redis, whichever it is: a `redis+cluster://` URL (REELAY_TEST_REDIS=cluster)
 * gives a cluster client over its seed nodes, any other URL one Redis; no command timeout unless given.
 */
export function testRedisClient(url = process.env.REDIS_URL!, options: Partial<ConnectionOptions> = {}): RedisClient {
  return redisAt(url, options);
}
