// Usage per key, counted once the response is finished (off the request's critical path): total
// requests, successful (2xx) requests and the last time the key was presented — atomically, and only
// while the key still exists, so a request racing a delete cannot bring back a stub record.
// A second script counts the key's day (UTC) in a hash of its own, `key-usage:<key hash>:<date>`,
// which expires USAGE_DAY_TTL_SECONDS after the day's first request: history is bounded by time, not
// by how busy a key is, and any gateway replica adds to the same day.
import { apiKeyRecord } from './keys.js';
import { luaScript, type RedisClient } from '@reelay/redis';
import { guarded, guardedScript } from './redis-calls.js';

/** The longest history a client may ask for. */
export const MAX_USAGE_DAYS = 90;
/** A day's counts are kept this long: 90 days and a margin for time zones and clock skew. */
export const USAGE_DAY_TTL_SECONDS = (MAX_USAGE_DAYS + 2) * 86_400;

export interface UsageDay {
  /** YYYY-MM-DD, UTC. */
  date: string;
  requests: number;
  successful: number;
}

export function usageDayKey(keyHash: string, date: string): string {
  return `reelay:key-usage:${keyHash}:${date}`;
}

/** `YYYY-MM-DD` of a time, in UTC. */
export function utcDate(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** The `days` dates ending with the day of `now`, oldest first. */
export function lastDays(days: number, now = Date.now()): string[] {
  return Array.from({ length: days }, (_, i) => utcDate(now - (days - 1 - i) * 86_400_000));
}

// One key per script, so it runs on a Redis Cluster too (the key's record and its days live in
// different slots). KEYS: key record. ARGV: successful (1/0), time in ms. 1 when the key exists.
const RECORD = luaScript(
  `if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[1], 'total', 1)
if ARGV[1] == '1' then redis.call('HINCRBY', KEYS[1], 'successful', 1) end
redis.call('HSET', KEYS[1], 'last_used_at', ARGV[2])
return 1`,
  1,
);

// KEYS: the day's hash. ARGV: successful (1/0), day TTL in seconds.
const RECORD_DAY = luaScript(
  `if redis.call('HINCRBY', KEYS[1], 'requests', 1) == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
if ARGV[1] == '1' then redis.call('HINCRBY', KEYS[1], 'successful', 1) end
return 1`,
  1,
);

export class UsageCounter {
  constructor(private readonly redis: RedisClient) {}

  async record(keyHash: string, successful: boolean, at = Date.now()): Promise<void> {
    const flag = successful ? '1' : '0';
    // The day is counted only for a key that still exists (a request racing a delete adds nothing).
    if ((await guardedScript(this.redis, RECORD, [apiKeyRecord(keyHash)], [flag, at])) !== 1) return;
    await guardedScript(this.redis, RECORD_DAY, [usageDayKey(keyHash, utcDate(at))], [flag, USAGE_DAY_TTL_SECONDS]);
  }

  /** One row per day for the last `days` days (today last), zeros where the key was not used. */
  async history(keyHash: string, days: number, now = Date.now()): Promise<UsageDay[]> {
    const dates = lastDays(days, now);
    // One command per day, not a pipeline or MGET: the days live in different cluster slots.
    const rows = await guarded(() =>
      Promise.all(dates.map((date) => this.redis.hmget(usageDayKey(keyHash, date), 'requests', 'successful'))),
    );
    return dates.map((date, i) => ({ date, requests: Number(rows[i][0] ?? 0), successful: Number(rows[i][1] ?? 0) }));
  }

  /** Forgets a key's history (the key was deleted). */
  async forget(keyHash: string, now = Date.now()): Promise<void> {
    // A day's hash lives at most USAGE_DAY_TTL_SECONDS, so these dates cover every one that exists.
    const dates = lastDays(MAX_USAGE_DAYS + 3, now + 86_400_000);
    await guarded(() => Promise.all(dates.map((d) => this.redis.del(usageDayKey(keyHash, d)))));
  }
}
