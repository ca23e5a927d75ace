// The gateway's Redis client. Commands fail fast while Redis is down (no offline queue, one retry),
// so requests answer 503 at once instead of hanging; the client keeps reconnecting in the background.
import { Redis } from 'ioredis';

export function connectRedis(url: string): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 5_000,
    disconnectTimeout: 200,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
}

/** Resolves once the client is ready, or rejects after `timeoutMs`. */
export function redisReady(redis: Redis, timeoutMs = 10_000): Promise<void> {
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
