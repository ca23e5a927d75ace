// The worker's Redis clients, from REDIS_URL or, with REDIS_SENTINELS, through the sentinels: ioredis
// then finds the current primary itself, also after a failover, without a restart. A cluster
// REDIS_URL makes them ioredis Clusters, which follow the slot map and its failovers the same way.
//
// Every command the worker sends itself (heartbeat, /metrics counts) and every command BullMQ sends on
// the Worker's connection (lock renewal, moving a job to completed, the stalled check) fails after
// REDIS_COMMAND_TIMEOUT_MS, so a frozen Redis cannot wedge a scrape or the lock-renewal loop (BullMQ
// retries a renewal that failed on its next tick). BullMQ's blocking fetch (BZPOPMIN, up to 10 s)
// runs on a duplicate of that connection, and ioredis' commandTimeout also cuts blocking commands: the
// duplicate therefore carries no commandTimeout. BullMQ bounds that wait itself (a watchdog at the
// block time + 1 s resets the connection), so it still cannot hang.
import { redisTarget, type Config } from '@reelay/config';
import { Cluster, Redis, type RedisOptions } from 'ioredis';

/** One Redis (maybe behind sentinels) or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** A client whose duplicates (BullMQ's blocking connection) have no command timeout. */
class TimedRedis extends Redis {
  override duplicate<Override extends Partial<RedisOptions> | undefined = undefined>(
    override?: Override,
  ): ReturnType<Redis['duplicate']> {
    return new Redis({ ...this.options, commandTimeout: undefined, ...override });
  }
}

/** The same for a cluster: the timeout lives in every node's options. */
class TimedCluster extends Cluster {
  override duplicate(): Cluster {
    return super.duplicate(undefined, {
      ...this.options,
      redisOptions: { ...this.options.redisOptions, commandTimeout: undefined },
    });
  }
}

type RedisConfig = Pick<Config, 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_NAME' | 'REDIS_COMMAND_TIMEOUT_MS'> &
  Partial<Pick<Config, 'REDIS_CLUSTER'>>;

const retryStrategy = (attempt: number) => Math.min(attempt * 200, 2_000);

export function connectRedis(
  config: RedisConfig,
  extra: Pick<RedisOptions, 'maxRetriesPerRequest' | 'enableOfflineQueue'>,
): RedisClient {
  const target = redisTarget(config);
  const options: Omit<RedisOptions, 'replyMapping'> = {
    ...(target.options as Omit<RedisOptions, 'replyMapping'>),
    commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS,
    retryStrategy,
    // READONLY comes from an old primary demoted to replica by a failover: reconnect to the new one.
    reconnectOnError: (err) => err.message.startsWith('READONLY'),
    ...extra,
  };
  if (target.cluster) {
    const { retryStrategy: _nodeRetry, enableOfflineQueue, ...redisOptions } = options;
    return new TimedCluster(target.cluster, {
      redisOptions,
      clusterRetryStrategy: retryStrategy,
      slotsRefreshTimeout: 2_000,
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    });
  }
  if (target.options.sentinels) options.sentinelRetryStrategy = retryStrategy;
  return target.url ? new TimedRedis(target.url, options) : new TimedRedis(options);
}
