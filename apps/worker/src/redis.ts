// The worker's Redis clients, from REDIS_URL or, with REDIS_SENTINELS, through the sentinels: ioredis
// then finds the current primary itself, also after a failover, without a restart.
import { redisTarget, type Config } from '@reelay/config';
import { Redis, type RedisOptions } from 'ioredis';

export function connectRedis(config: Pick<Config, 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_NAME'>, extra: RedisOptions): Redis {
  const target = redisTarget(config);
  const options: RedisOptions = {
    ...(target.options as RedisOptions),
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    // READONLY comes from an old primary demoted to replica by a failover: reconnect to the new one.
    reconnectOnError: (err) => err.message.startsWith('READONLY'),
    ...extra,
  };
  if (target.options.sentinels) options.sentinelRetryStrategy = (attempt) => Math.min(attempt * 200, 2_000);
  return target.url ? new Redis(target.url, options) : new Redis(options);
}
