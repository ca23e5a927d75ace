// The apps' Redis connections, from the configuration. Every one has REDIS_COMMAND_TIMEOUT_MS and
// reconnects on its own (a failover's READONLY answer, from an old primary now a replica, too); what
// differs is what a command does while Redis is away, named by the caller:
// - FAIL_FAST (the gateway's client): no offline queue and one retry, so a request answers 503 at
//   once instead of hanging while the client reconnects in the background;
// - WAIT_OUT_OUTAGES (BullMQ Workers, subscribers): commands wait for Redis to come back, as BullMQ
//   requires of a Worker's connection (maxRetriesPerRequest: null).
// Their duplicates carry no command timeout (client.ts).
import { parseConfig, type Config } from '@reelay/config';
import { TimedCluster, TimedRedis, type ConnectionOptions, type RedisClient } from './client.js';
import { redisTarget, type RedisConfig } from './target.js';

/** What commands do while Redis is away, and how long a connection attempt and a close may take. */
export type OutageBehaviour = Pick<
  ConnectionOptions,
  'maxRetriesPerRequest' | 'enableOfflineQueue' | 'connectTimeout' | 'disconnectTimeout'
>;

/** The gateway's: a command fails at once while Redis is away (the request answers 503). */
export const FAIL_FAST: OutageBehaviour = {
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  connectTimeout: 5_000,
  disconnectTimeout: 200,
};

/** BullMQ Workers' and subscribers': commands wait until Redis is back. */
export const WAIT_OUT_OUTAGES: OutageBehaviour = { maxRetriesPerRequest: null };

const retryStrategy = (attempt: number) => Math.min(attempt * 200, 2_000);

/**
 * A client of the configured Redis (one, through sentinels, or a cluster), or of a URL alone with
 * every other setting at its default (tests).
 */
export function connectRedis(
  config: string | (RedisConfig & Pick<Config, 'REDIS_COMMAND_TIMEOUT_MS'>),
  behaviour: OutageBehaviour = FAIL_FAST,
): RedisClient {
  const settings = typeof config === 'string' ? parseConfig({ REDIS_URL: config }) : config;
  const target = redisTarget(settings);
  const options: ConnectionOptions = {
    ...(target.options as ConnectionOptions),
    commandTimeout: settings.REDIS_COMMAND_TIMEOUT_MS,
    retryStrategy,
    reconnectOnError: (err) => err.message.startsWith('READONLY'),
    ...behaviour,
  };
  if (target.cluster) {
    // A node's retries and offline queue are the cluster's business: it reconnects through the slot
    // map, and queues (or not) for all its nodes.
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

/**
 * A client of `url` (one Redis, or a cluster's `redis+cluster://` seeds) with exactly `options` and
 * no command timeout unless they set one: for tests and tools that choose their own.
 */
export function redisAt(url: string, options: Partial<ConnectionOptions> = {}): RedisClient {
  const target = redisTarget(parseConfig({ REDIS_URL: url }));
  if (target.cluster) {
    const { enableOfflineQueue, ...redisOptions } = options;
    return new TimedCluster(target.cluster, {
      redisOptions: { ...(target.options as ConnectionOptions), ...redisOptions },
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    });
  }
  return new TimedRedis(url, options);
}
