// Redis plumbing the stores share: Lua scripts run by SHA in one round trip, and one rule for
// failures — a lost connection is service_unavailable (503, never "allow"), while an error Redis
// itself answered passes through as it is: the gateway's error middleware answers the replies of a
// sick Redis (OOM, MISCONF, READONLY, …) with 503 and any other (a bad script, a wrong type) as the
// bug it is (@reelay/contracts redis-failure.ts).
// Raw secrets (passwords, API keys, session ids) never travel to Redis, only their hashes, so the
// command arguments ioredis attaches to its errors cannot leak one into a log.
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { ReelayError } from '@reelay/contracts';

/** One Redis (maybe behind sentinels) or a Redis Cluster: every store works on both. */
export type RedisClient = Redis | Cluster;

export type RedisReply = string | number | null | RedisReply[];

export interface LuaScript {
  source: string;
  sha: string;
  numberOfKeys: number;
}

export function luaScript(source: string, numberOfKeys: number): LuaScript {
  return { source, numberOfKeys, sha: createHash('sha1').update(source).digest('hex') };
}

/** A Redis answer that is an error reply (as opposed to a connection that failed). */
function isReplyError(err: unknown): boolean {
  return err instanceof Error && err.name === 'ReplyError';
}

export function unavailable(cause: unknown): ReelayError {
  return new ReelayError(
    'service_unavailable',
    'Accounts and limits are unavailable (Redis cannot be reached); try again shortly.',
    { cause },
  );
}

/** Runs a Redis call, turning connection failures into service_unavailable. */
export async function guarded<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof ReelayError || isReplyError(err)) throw err;
    throw unavailable(err);
  }
}

/** EVALSHA, and EVAL once when this Redis has not seen the script yet (after a restart or FLUSH). */
export function runScript(
  redis: RedisClient,
  script: LuaScript,
  keys: string[],
  args: (string | number)[],
): Promise<RedisReply> {
  if (keys.length !== script.numberOfKeys)
    throw new Error(`script expects ${script.numberOfKeys} keys, got ${keys.length}`);
  return guarded(async () => {
    try {
      return (await redis.evalsha(script.sha, keys.length, ...keys, ...args)) as RedisReply;
    } catch (err) {
      if (!(isReplyError(err) && String((err as Error).message).startsWith('NOSCRIPT'))) throw err;
      return (await redis.eval(script.source, keys.length, ...keys, ...args)) as RedisReply;
    }
  });
}

/** Fails on the first error inside a pipeline's or transaction's results. */
export function checkResults(results: [Error | null, unknown][] | null): unknown[] {
  if (!results) throw unavailable(new Error('transaction aborted'));
  const failed = results.find(([err]) => err);
  if (failed) throw failed[0];
  return results.map(([, value]) => value);
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
