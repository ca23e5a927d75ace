// Sign-ups per client address: each one costs a scrypt hash and a Redis record, so a script could
// otherwise fill the store with accounts (or burn CPU) from one address. A fixed window per IP bucket,
// counted atomically in Redis so every gateway replica shares it; charged before any hashing.
import { ReelayError } from '@reelay/contracts';
import { ipBucket } from './limits.js';
import { luaScript, type RedisClient } from '@reelay/redis';
import { guardedScript } from './redis-calls.js';

export interface SignupLimitOptions {
  perIp?: number;
  windowSeconds?: number;
}

// KEYS: the IP's counter. ARGV: window in seconds. Returns {count, ttl ms}.
const CHARGE = luaScript(
  `local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}`,
  1,
);

export class SignupLimit {
  private readonly perIp: number;
  private readonly windowSeconds: number;

  constructor(
    private readonly redis: RedisClient,
    options: SignupLimitOptions = {},
    private readonly prefix = 'reelay:signup:',
  ) {
    this.perIp = options.perIp ?? 10;
    this.windowSeconds = options.windowSeconds ?? 60 * 60;
  }

  /** Counts a sign-up from this address; rate_limited (with Retry-After) past the limit. */
  async charge(ip: string | undefined): Promise<void> {
    const [count, ttl] = (await guardedScript(
      this.redis,
      CHARGE,
      [`${this.prefix}ip:${ipBucket(ip)}`],
      [this.windowSeconds],
    )) as [number, number];
    if (count <= this.perIp) return;
    const seconds = Math.max(1, Math.ceil(ttl / 1000));
    throw new ReelayError('rate_limited', `Too many sign-ups from this address; try again in ${seconds} seconds.`, {
      headers: { 'Retry-After': String(seconds) },
    });
  }
}
