// How the account stores call Redis (the client, scripts and keys are @reelay/redis's): one rule for
// failures — a lost connection is service_unavailable (503, never "allow"), while an error Redis
// itself answered passes through as it is: the gateway's error middleware answers the replies of a
// sick Redis (OOM, MISCONF, READONLY, …) with 503 and any other (a bad script, a wrong type) as the
// bug it is (@reelay/redis failures.ts).
// Raw secrets (passwords, API keys, session ids) never travel to Redis, only their hashes, so the
// command arguments ioredis attaches to its errors cannot leak one into a log.
import { createHash } from 'node:crypto';
import { ReelayError } from '@reelay/contracts';
import { isReplyError, runScript, type LuaScript, type RedisClient, type RedisReply } from '@reelay/redis';

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

/** runScript, with a connection failure as service_unavailable. */
export function guardedScript(
  redis: RedisClient,
  script: LuaScript,
  keys: string[],
  args: (string | number)[],
): Promise<RedisReply> {
  return guarded(() => runScript(redis, script, keys, args));
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
