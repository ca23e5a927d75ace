// A throttle for the account entry points that are not the password sign-in (forgotten password,
// reset, verification, social sign-in, passkeys): a fixed window per client address and, where the
// request names one, per account, both counted atomically in Redis so every replica shares them.
// Charged before any work, whether or not the account exists, so being refused reveals nothing.
import { ReelayError } from '@reelay/contracts';
import { ipBucket } from './limits.js';
import { luaScript, type RedisClient } from '@reelay/redis';
import { guardedScript, sha256Hex } from './redis-calls.js';

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
    let [allowed, ttl] = (await guardedScript(
      this.redis,
      CHARGE,
      [`${base}ip:${ipBucket(ip)}`],
      [this.options.windowSeconds, this.options.perIp],
    )) as [number, number];
    if (allowed === 1 && account !== undefined && this.options.perAccount) {
      [allowed, ttl] = (await guardedScript(
        this.redis,
        CHARGE,
        [`${base}account:${sha256Hex(account)}`],
        [this.options.windowSeconds, this.options.perAccount],
      )) as [number, number];
    }
    if (allowed === 1) return;
    const seconds = Math.max(1, Math.ceil(ttl / 1000));
    throw new ReelayError('rate_limited', `Too many attempts; try again in ${seconds} seconds.`, {
      headers: { 'Retry-After': String(seconds) },
    });
  }
}
