// Slows password guessing without handing the attacker a way to lock the owner out. Failures are
// counted in Redis three ways:
// - per (account, client address): an address that keeps failing for one account is blocked from it
//   for the window;
// - per client address: one address failing across many accounts is blocked for the window;
// - per account, from any address: past a few failures each further attempt waits a short, growing
//   delay after the last one (1 s, 2 s, 4 s … at most 30 s). This is all that wrong passwords from
//   other addresses can do to the owner, and it still holds an attacker spread over many addresses
//   to a couple of guesses a minute.
// The account is counted by e-mail whether or not it exists, so the answer says nothing about which
// addresses have accounts.
//
// Why one script: checking the counts and counting the failure as two steps let 50 parallel wrong
// passwords all pass the check before any was counted. Each attempt now takes its place in ONE
// atomic step before the password is verified; a successful sign-in hands its place back.
import type { Redis } from 'ioredis';
import { ReelayError } from '@reelay/contracts';
import { ipBucket } from './limits.js';
import { luaScript, runScript, sha256Hex } from './redis.js';

export interface LoginThrottleOptions {
  /** Failures one address may have for one account in the window. */
  perAccountAddress?: number;
  /** Higher than per account and address: many people can share one address (offices, carrier NAT). */
  perIp?: number;
  windowSeconds?: number;
  /** Failures an account may have, from any addresses, before each attempt waits the growing delay. */
  accountFreeFailures?: number;
  /** The first delay; it doubles with every further failure, up to accountMaxDelayMs. */
  accountDelayMs?: number;
  accountMaxDelayMs?: number;
}

// KEYS: (account, address) counter, address counter, account hash {n, last}. ARGV: (account,
// address) limit, address limit, window in seconds, free failures, first delay ms, longest delay ms.
// Returns {1, 0} when the attempt may go ahead (everything charged), {0, wait ms} otherwise.
const ATTEMPT = luaScript(
  `local wait = 0
for i = 1, 2 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[i]) then
    local ttl = redis.call('PTTL', KEYS[i])
    -- A counter without an expiry (PTTL -1) would block for ever: give it its window again.
    if ttl < 0 then redis.call('EXPIRE', KEYS[i], ARGV[3]); ttl = tonumber(ARGV[3]) * 1000 end
    wait = math.max(wait, ttl, 1)
  end
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local over = tonumber(redis.call('HGET', KEYS[3], 'n') or '0') - tonumber(ARGV[4])
if over >= 0 then
  local delay = math.min(tonumber(ARGV[5]) * 2 ^ over, tonumber(ARGV[6]))
  wait = math.max(wait, tonumber(redis.call('HGET', KEYS[3], 'last') or '0') + delay - now)
end
if wait > 0 then return {0, math.ceil(wait)} end
for i = 1, 2 do
  local n = redis.call('INCR', KEYS[i])
  if n == 1 or redis.call('TTL', KEYS[i]) < 0 then redis.call('EXPIRE', KEYS[i], ARGV[3]) end
end
redis.call('HINCRBY', KEYS[3], 'n', 1)
redis.call('HSET', KEYS[3], 'last', now)
redis.call('EXPIRE', KEYS[3], ARGV[3])
return {1, 0}`,
  3,
);

// KEYS: as above. The account's counts are cleared; the address's gives back the one place this
// attempt took, never more, and never creates a counter without an expiry.
const SUCCEEDED = luaScript(
  `redis.call('DEL', KEYS[1], KEYS[3])
if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then redis.call('DECR', KEYS[2]) end
return 1`,
  3,
);

export class LoginThrottle {
  private readonly args: number[];

  constructor(
    private readonly redis: Redis,
    options: LoginThrottleOptions = {},
    private readonly prefix = 'reelay:login-fail:',
  ) {
    this.args = [
      options.perAccountAddress ?? 5,
      options.perIp ?? 20,
      options.windowSeconds ?? 15 * 60,
      options.accountFreeFailures ?? 5,
      options.accountDelayMs ?? 1000,
      options.accountMaxDelayMs ?? 30_000,
    ];
  }

  private keys(email: string, ip: string | undefined): [string, string, string] {
    const address = ipBucket(ip);
    // The account's own key is a hash under a name of its own (older versions kept a counter at account:).
    return [`${this.prefix}pair:${sha256Hex(`${email}\n${address}`)}`, `${this.prefix}ip:${address}`, `${this.prefix}account-delay:${sha256Hex(email)}`];
  }

  /**
   * Takes a place for one sign-in attempt, counted as a failure until succeeded() says otherwise.
   * Throws rate_limited (with Retry-After) when this address may not try this account now.
   */
  async attempt(email: string, ip: string | undefined): Promise<void> {
    const [allowed, waitMs] = (await runScript(this.redis, ATTEMPT, this.keys(email, ip), this.args)) as [number, number];
    if (allowed === 1) return;
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    throw new ReelayError('rate_limited', `Too many failed sign-ins; try again in ${seconds} seconds.`, { headers: { 'Retry-After': String(seconds) } });
  }

  /**
   * A successful sign-in clears the account's counts and hands back its own place at the address.
   * The address's other failures stay: otherwise an attacker could reset them by signing in to an
   * account of their own between guesses.
   */
  async succeeded(email: string, ip: string | undefined): Promise<void> {
    await runScript(this.redis, SUCCEEDED, this.keys(email, ip), []);
  }
}
