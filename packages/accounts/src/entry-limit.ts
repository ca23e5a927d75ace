// A throttle for the account entry points that are not the password sign-in (tokens, social sign-in,
// passkeys, confirmation mails): a fixed window per client address and, where the request names one,
// per account, each counted atomically in Redis so every replica shares them. Charged before any
// work, whether or not the account exists, so being refused reveals nothing. `chargeBuckets` is the
// shared step: the mail budget (mail-budget.ts) counts its own buckets with it.
import { type RedisClient, luaScript } from '@reelay/redis';
import { guardedScript, sha256Hex } from './redis-calls.js';
import { ReelayError } from '@reelay/contracts';
import { ipBucket } from './limits.js';

export interface EntryLimitOptions {
  perIp: number;
  /** Per account (e-mail address or account id) in the window; unset: no per-account count. */
  perAccount?: number;
  windowSeconds: number;
}

// One counter per script call, so it runs on a Redis Cluster too. KEYS: the counter. ARGV: window,
// limit. Returns {count within limit 1/0, ttl ms}.
const CHARGE = luaScript(
  `local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
if count > tonumber(ARGV[2]) then return {0, redis.call('PTTL', KEYS[1])} end
return {1, 0}`,
  1,
);

export interface Bucket {
  key: string;
  limit: number;
}

/**
 * Counts one try in each bucket, in order, and stops at the first that is over its limit (the ones
 * after it are not charged): rate_limited with Retry-After then.
 */
export async function chargeBuckets(redis: RedisClient, buckets: Bucket[], windowSeconds: number): Promise<void> {
  for (const bucket of buckets) {
    const [allowed, ttl] = (await guardedScript(redis, CHARGE, [bucket.key], [windowSeconds, bucket.limit])) as [
      number,
      number,
    ];
    if (allowed === 1) continue;
    const seconds = Math.max(1, Math.ceil(ttl / 1000));
    throw new ReelayError('rate_limited', `Too many attempts; try again in ${seconds} seconds.`, {
      headers: { 'Retry-After': String(seconds) },
    });
  }
}

export class EntryLimit {
  constructor(
    private readonly redis: RedisClient,
    private readonly name: string,
    private readonly options: EntryLimitOptions,
    private readonly prefix = 'reelay:entry:',
  ) {}

  /** Counts one try; rate_limited (with Retry-After) past either limit. */
  async charge(ip: string | undefined, account?: string): Promise<void> {
    const base = `${this.prefix}${this.name}:`;
    const buckets: Bucket[] = [{ key: `${base}ip:${ipBucket(ip)}`, limit: this.options.perIp }];
    if (account !== undefined && this.options.perAccount)
      buckets.push({ key: `${base}account:${sha256Hex(account)}`, limit: this.options.perAccount });
    await chargeBuckets(this.redis, buckets, this.options.windowSeconds);
  }
}
