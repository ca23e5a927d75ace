// The Redis client reelay uses everywhere: one Redis (maybe found through sentinels) or a Redis
// Cluster, from ioredis. Its command timeout (REDIS_COMMAND_TIMEOUT_MS) bounds every command the apps
// send, so a frozen Redis cannot wedge a request, a scrape or BullMQ's lock renewal. A blocking
// command waits longer than that on purpose (BullMQ's BZPOPMIN until the next job is due, QueueEvents'
// XREAD), and ioredis' commandTimeout cuts those too: cut every 2 s, a Worker's fetch never returned
// and a delayed job (a subscription's due check) waited until a restart. So a client's duplicate()
// (what BullMQ opens for its blocking reads, and a subscriber) carries no command timeout; BullMQ
// bounds those waits itself (a watchdog at the block time + 1 s resets the connection).
import { Cluster, Redis, type ClusterNode, type RedisOptions } from 'ioredis';

/** One Redis (maybe behind sentinels) or a Redis Cluster: every store works on both. */
export type RedisClient = Redis | Cluster;

/** Options of one connection, with the RESP2 replies (ioredis' default) that RedisClient is typed for. */
export type ConnectionOptions = Omit<RedisOptions, 'replyMapping'>;

/** Cluster options with RESP2 replies. */
export type ClusterConnectionOptions = NonNullable<ConstructorParameters<typeof Cluster<'legacy'>>[1]>;

/** A client whose duplicates (blocking readers, subscribers) have no command timeout. */
export class TimedRedis extends Redis {
  override duplicate<Override extends Partial<RedisOptions> | undefined = undefined>(
    override?: Override,
  ): ReturnType<Redis['duplicate']> {
    return new Redis({ ...this.options, commandTimeout: undefined, ...override });
  }
}

/** The same for a cluster: the timeout lives in every node's options. */
export class TimedCluster extends Cluster {
  constructor(
    /** The seed nodes, for copies of this cluster client. */
    readonly seeds: ClusterNode[],
    options: ClusterConnectionOptions,
  ) {
    super(seeds, options);
  }

  override duplicate(): Cluster {
    return new Cluster(this.seeds, {
      ...this.options,
      redisOptions: { ...this.options.redisOptions, commandTimeout: undefined },
    } as ClusterConnectionOptions);
  }
}

/**
 * A second connection like `redis` with some options changed (a subscriber, a BullMQ Worker's own
 * connection, which must wait out outages): it keeps the command timeout unless `override` drops it,
 * and its own duplicates (the Worker's blocking connection) carry none. A cluster's connection
 * options are its nodes', one Redis's its own.
 */
export function duplicateRedis(redis: RedisClient, override: Partial<ConnectionOptions>): RedisClient {
  if (redis instanceof Cluster) {
    const { enableOfflineQueue, ...node } = override;
    const options = {
      ...redis.options,
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
      redisOptions: { ...redis.options.redisOptions, ...node },
    } as ClusterConnectionOptions;
    return redis instanceof TimedCluster ? new TimedCluster(redis.seeds, options) : redis.duplicate(undefined, options);
  }
  return new TimedRedis({ ...(redis.options as ConnectionOptions), ...override });
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
