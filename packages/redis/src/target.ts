// Where Redis is, from the configuration: one Redis at REDIS_URL, the primary the sentinels name
// (REDIS_SENTINELS; REDIS_URL then lends only its password, database and TLS), or a Redis Cluster's
// seed nodes (redis+cluster://, or REDIS_CLUSTER=true). ioredis follows a sentinel failover and a
// cluster's slot map and failovers by itself.
import { clusterSeeds, isCluster, redisUrlCredentials, type Config } from '@reelay/config';

export type RedisConfig = Pick<Config, 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_NAME'> &
  Partial<Pick<Config, 'REDIS_CLUSTER'>>;

/**
 * Connection settings for ioredis. With sentinels, REDIS_URL may still carry the password, db and
 * TLS. For a Redis Cluster, `cluster` lists the seed nodes and `options` are every node's.
 */
export function redisTarget(config: RedisConfig): {
  url?: string;
  options: Record<string, unknown>;
  cluster?: { host: string; port: number }[];
} {
  if (isCluster(config) && config.REDIS_URL) {
    const seeds = clusterSeeds(config.REDIS_URL);
    if (typeof seeds === 'string') throw new Error(`REDIS_URL: ${seeds}`);
    return { options: seeds.options, cluster: seeds.nodes };
  }
  if (!config.REDIS_SENTINELS?.length) return { url: config.REDIS_URL, options: {} };
  const options: Record<string, unknown> = { sentinels: config.REDIS_SENTINELS, name: config.REDIS_SENTINEL_NAME };
  if (config.REDIS_URL) Object.assign(options, redisUrlCredentials(new URL(config.REDIS_URL)));
  return { options };
}
