// The gateway's Redis client. Commands fail fast while Redis is down (no offline queue, one retry),
// so requests answer 503 at once instead of hanging; the client keeps reconnecting in the background.
// A Redis that holds the connection but does not answer (frozen, swapping, a dead peer behind a
// proxy) fails each command after REDIS_COMMAND_TIMEOUT_MS: the gateway sends no blocking commands,
// so one deadline fits every command it sends, BullMQ's Queue.add included.
// With REDIS_SENTINELS, ioredis asks the sentinels for the current primary and, after a failover,
// reconnects to the new one by itself. With a cluster REDIS_URL it is an ioredis Cluster, which
// learns the slot map from the seed nodes and follows MOVED/ASK and failovers itself.
import { parseConfig, redisTarget, type Config } from '@reelay/config';
import type { RedisClient } from '@reelay/accounts';
import { Cluster, Redis, type RedisOptions } from 'ioredis';

type RedisConfig = Pick<Config, 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_NAME' | 'REDIS_COMMAND_TIMEOUT_MS'> &
  Partial<Pick<Config, 'REDIS_CLUSTER'>>;

const retryStrategy = (attempt: number) => Math.min(attempt * 200, 2_000);

/** From the config, or from a URL alone with every other setting at its default. */
export function connectRedis(config: string | RedisConfig): RedisClient {
  const settings = typeof config === 'string' ? parseConfig({ REDIS_URL: config }) : config;
  const target = redisTarget(settings);
  const options: RedisOptions = {
    ...(target.options as RedisOptions),
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
    return new Cluster(target.cluster, {
      redisOptions,
      enableOfflineQueue: false,
      clusterRetryStrategy: retryStrategy,
      slotsRefreshTimeout: 2_000,
    });
  }
  if (target.options.sentinels) options.sentinelRetryStrategy = retryStrategy;
  return target.url ? new Redis(target.url, options) : new Redis(options);
}

/**
 * A second connection like `redis` with some options changed (a subscriber, a blocking reader): a
 * cluster's options are its nodes', one Redis's its own.
 */
export function duplicateRedis(redis: RedisClient, override: Partial<RedisOptions>): RedisClient {
  if (redis instanceof Cluster) {
    const { enableOfflineQueue, ...node } = override;
    return redis.duplicate(undefined, {
      ...redis.options,
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
      redisOptions: { ...redis.options.redisOptions, ...node },
    });
  }
  return redis.duplicate(override);
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
