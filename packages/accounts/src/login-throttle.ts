// Slows password guessing: sign-in attempts are counted in Redis per account (by e-mail, whether or
// not it exists, so the answer says nothing about which addresses have accounts) and per client IP.
// Past the limit every attempt, even with the right password, is refused until the window ends.
//
// Why one script: checking the counts and counting the failure as two steps let 50 parallel wrong
// passwords all pass the check before any was counted. Each attempt now takes its place in ONE
// atomic step before the password is verified; a successful sign-in hands its place back.
import type { Redis } from 'ioredis';
import { ReelayError } from '@reelay/contracts';
import { ipBucket } from './limits.js';
import { luaScript, runScript, sha256Hex } from './redis.js';

export interface LoginThrottleOptions {
  perAccount?: number;
  /** Higher than per account: many people can share one address (offices, carrier NAT). */
  perIp?: number;
  windowSeconds?: number;
}

// KEYS: account counter, IP counter. ARGV: account limit, IP limit, window in seconds.
// Returns {1, 0} when the attempt may go ahead (both counters charged), {0, wait ms} otherwise.
const ATTEMPT = luaScript(
  `local blocked = false
local wait = 0
for i = 1, 2 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[i]) then
    blocked = true
    local ttl = redis.call('PTTL', KEYS[i])
    -- A counter without an expiry (PTTL -1) would block for ever: give it its window again.
    if ttl < 0 then redis.call('EXPIRE', KEYS[i], ARGV[3]); ttl = tonumber(ARGV[3]) * 1000 end
    wait = math.max(wait, ttl)
  end
end
if blocked then return {0, wait} end
for i = 1, 2 do
  local n = redis.call('INCR', KEYS[i])
  if n == 1 or redis.call('TTL', KEYS[i]) < 0 then redis.call('EXPIRE', KEYS[i], ARGV[3]) end
end
return {1, 0}`,
  2,
);

// KEYS: account counter, IP counter. The account's count is cleared; the IP's gives back the one
// place this attempt took, never more, and never creates a counter without an expiry.
const SUCCEEDED = luaScript(
  `redis.call('DEL', KEYS[1])
if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then redis.call('DECR', KEYS[2]) end
return 1`,
  2,
);

export class LoginThrottle {
  private readonly perAccount: number;
  private readonly perIp: number;
  private readonly windowSeconds: number;

  constructor(
    private readonly redis: Redis,
    options: LoginThrottleOptions = {},
    private readonly prefix = 'reelay:login-fail:',
  ) {
    this.perAccount = options.perAccount ?? 5;
    this.perIp = options.perIp ?? 20;
    this.windowSeconds = options.windowSeconds ?? 15 * 60;
  }

  private keys(email: string, ip: string | undefined): [string, string] {
    return [`${this.prefix}account:${sha256Hex(email)}`, `${this.prefix}ip:${ipBucket(ip)}`];
  }

  /**
   * Takes a place for one sign-in attempt, counted as a failure until succeeded() says otherwise.
   * Throws rate_limited (with Retry-After) when the account or the address has no places left.
   */
  async attempt(email: string, ip: string | undefined): Promise<void> {
    const [allowed, waitMs] = (await runScript(this.redis, ATTEMPT, this.keys(email, ip), [this.perAccount, this.perIp, this.windowSeconds])) as [number, number];
    if (allowed === 1) return;
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    throw new ReelayError('rate_limited', `Too many failed sign-ins; try again in ${seconds} seconds.`, { headers: { 'Retry-After': String(seconds) } });
  }

  /**
   * A successful sign-in clears the account's count and hands back its own place at the address. The
   * address's other failures stay: otherwise an attacker could reset them by signing in to an
   * account of their own between guesses.
   */
  async succeeded(email: string, ip: string | undefined): Promise<void> {
    await runScript(this.redis, SUCCEEDED, this.keys(email, ip), []);
  }
}
