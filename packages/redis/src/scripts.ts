// Lua scripts, run by SHA in one round trip: EVALSHA, and EVAL once when this Redis has not seen the
// script yet (after a restart, a FLUSH or a failover). A script's keys must share a slot on a Redis
// Cluster (keys.ts: hashTag). Errors pass through as the client throws them; each store decides what
// a lost connection means to its callers.
import { createHash } from 'node:crypto';
import type { RedisClient } from './client.js';

export type RedisReply = string | number | null | RedisReply[];

export interface LuaScript {
  source: string;
  sha: string;
  /** How many of a call's arguments are keys; undefined: as many as each call gives. */
  numberOfKeys?: number;
}

export function luaScript(source: string, numberOfKeys?: number): LuaScript {
  return { source, numberOfKeys, sha: createHash('sha1').update(source).digest('hex') };
}

/** An error Redis answered (as opposed to a connection that failed). */
export function isReplyError(err: unknown): boolean {
  return err instanceof Error && err.name === 'ReplyError';
}

export async function runScript(
  redis: RedisClient,
  script: LuaScript,
  keys: string[],
  args: (string | number)[],
): Promise<RedisReply> {
  if (script.numberOfKeys !== undefined && keys.length !== script.numberOfKeys)
    throw new Error(`script expects ${script.numberOfKeys} keys, got ${keys.length}`);
  try {
    return (await redis.evalsha(script.sha, keys.length, ...keys, ...args)) as RedisReply;
  } catch (err) {
    if (!(isReplyError(err) && String((err as Error).message).startsWith('NOSCRIPT'))) throw err;
    return (await redis.eval(script.source, keys.length, ...keys, ...args)) as RedisReply;
  }
}
