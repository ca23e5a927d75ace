// The gateway's Redis client. Commands fail fast while Redis is down (no offline queue, one retry),
// so requests answer 503 at once instead of hanging; the client keeps reconnecting in the background.
// A Redis that holds the connection but does not answer (frozen, swapping, a dead peer behind a
// proxy) fails each command after REDIS_COMMAND_TIMEOUT_MS, BullMQ's Queue.add included. A blocking
// command (BullMQ's BZPOPMIN, QueueEvents' XREAD) waits longer than that on purpose, and ioredis'
// commandTimeout cuts those too: cut every 2 s, a Worker's fetch never returned, and a subscription's
// due check waited in the delayed set until a restart. So a client's duplicate() (what BullMQ opens
// for its blocking reads) carries no command timeout; BullMQ bounds those waits itself.
// With REDIS_SENTINELS, ioredis asks the sentinels for the current primary and, after a failover,
// reconnects to the new one by itself. With a cluster REDIS_URL it is an ioredis Cluster, which
// learns the slot map from the seed nodes and follows MOVED/ASK and failovers itself.
import { parseConfig, redisTarget, type Config } from '@reelay/config';
import type { RedisClient } from '@reelay/accounts';
import { Cluster, Redis, type ClusterNode, type RedisOptions } from 'ioredis';

/** Cluster options with RESP2 replies (ioredis' default), which is what RedisClient is typed for. */
type ClusterOptions = NonNullable<ConstructorParameters<typeof Cluster<'legacy'>>[1]>;

/** A client whose duplicates (BullMQ's blocking connections, subscribers) have no command timeout. */
class TimedRedis extends Redis {
  override duplicate<Override extends Partial<RedisOptions> | undefined = undefined>(
    override?: Override,
  ): ReturnType<Redis['duplicate']> {
    return new Redis({ ...this.options, commandTimeout: undefined, ...override });
  }
}

/** The same for a cluster: the timeout lives in every node's options. */
class TimedCluster extends Cluster {
  constructor(
    readonly seeds: ClusterNode[],
    options: ClusterOptions,
  ) {
    super(seeds, options);
  }

  override duplicate(): Cluster {
    return new Cluster(this.seeds, {
      ...this.options,
      redisOptions: { ...this.options.redisOptions, commandTimeout: undefined },
    } as ClusterOptions);
  }
}

type RedisConfig = Pick<Config, 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_NAME' | 'REDIS_COMMAND_TIMEOUT_MS'> &
  Partial<Pick<Config, 'REDIS_CLUSTER'>>;

const retryStrategy = (attempt: number) => Math.min(attempt * 200, 2_000);

/** From the config, or from a URL alone with every other setting at its default. */
export function connectRedis(config: string | RedisConfig): RedisClient {
  const settings = typeof config === 'string' ? parseConfig({ REDIS_URL: config }) : config;
  const target = redisTarget(settings);
  const options: Omit<RedisOptions, 'replyMapping'> = {
    ...(target.options as Omit<RedisOptions, 'replyMapping'>),
    commandTimeout: settings.REDIS_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 5_000,
    disconnectTimeout: 200,
    retryStrategy,
    // A failover's READONLY answer (an old primary now a replica) means: reconnect and find the new one.
    reconnectOnError: (err) => err.message.startsWith('READONLY'),
  };
  if (target.cluster) {
    // The per-node retryStrategy is the cluster's own business (it reconnects through the slot map).
    const { retryStrategy: _nodeRetry, ...redisOptions } = options;
    return new TimedCluster(target.cluster, {
      redisOptions,
      enableOfflineQueue: false,
      clusterRetryStrategy: retryStrategy,
      slotsRefreshTimeout: 2_000,
    });
  }
  if (target.options.sentinels) options.sentinelRetryStrategy = retryStrategy;
  return target.url ? new TimedRedis(target.url, options) : new TimedRedis(options);
}

/**
 * A second connection like `redis` with some options changed (a subscriber, a BullMQ Worker's own
 * connection): it keeps the command timeout unless `override` drops it, and its own duplicates (the
 * Worker's blocking connection) carry none. A cluster's options are its nodes', one Redis's its own.
 */
export function duplicateRedis(redis: RedisClient, override: Partial<Omit<RedisOptions, 'replyMapping'>>): RedisClient {
  if (redis instanceof Cluster) {
    const { enableOfflineQueue, ...node } = override;
    const options = {
      ...redis.options,
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
      redisOptions: { ...redis.options.redisOptions, ...node },
    } as ClusterOptions;
    return redis instanceof TimedCluster ? new TimedCluster(redis.seeds, options) : redis.duplicate(undefined, options);
  }
  return new TimedRedis({ ...(redis.options as Omit<RedisOptions, 'replyMapping'>), ...override });
}

/** Resolves once the client is ready, or rejects after `timeoutMs`. */
export function redisReady(redis: RedisClient, timeoutMs = 10_000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error(`Redis did not become ready within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', onReady);
  });
}
