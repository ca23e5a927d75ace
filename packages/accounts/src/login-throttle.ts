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
// Why scripts: checking the counts and counting the failure as two steps let 50 parallel wrong
// passwords all pass the check before any was counted. Each attempt now takes its places in atomic
// check-and-count steps before the password is verified; a successful sign-in hands them back.
// Two steps, because a Redis Cluster keeps the address's counter and the account's keys in
// different slots (the account's two share its hash tag): first the address's place, then the
// account's; an attempt the account's step refuses gives the address's place back. In between an
// address can look one attempt fuller than it is, never emptier, so no parallel attempt slips past.
import { ReelayError } from '@reelay/contracts';
import { ipBucket } from './limits.js';
import { hashTag, luaScript, type RedisClient } from '@reelay/redis';
import { guarded, guardedScript, sha256Hex } from './redis-calls.js';

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

// KEYS: a counter. ARGV: its limit, window in seconds. Returns {1, 0} when counted, {0, wait ms}
// when the counter is full.
const TAKE = luaScript(
  `if tonumber(redis.call('GET', KEYS[1]) or '0') >= tonumber(ARGV[1]) then
  local ttl = redis.call('PTTL', KEYS[1])
  -- A counter without an expiry (PTTL -1) would block for ever: give it its window again.
  if ttl < 0 then redis.call('EXPIRE', KEYS[1], ARGV[2]); ttl = tonumber(ARGV[2]) * 1000 end
  return {0, math.max(ttl, 1)}
end
local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('TTL', KEYS[1]) < 0 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return {1, 0}`,
  1,
);

// KEYS: (account, address) counter, account hash {n, last}: one slot. ARGV: (account, address)
// limit, window in seconds, free failures, first delay ms, longest delay ms.
// Returns {1, 0} when the attempt may go ahead (both charged), {0, wait ms} otherwise.
const ATTEMPT = luaScript(
  `local wait = 0
if tonumber(redis.call('GET', KEYS[1]) or '0') >= tonumber(ARGV[1]) then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then redis.call('EXPIRE', KEYS[1], ARGV[2]); ttl = tonumber(ARGV[2]) * 1000 end
  wait = math.max(ttl, 1)
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local over = tonumber(redis.call('HGET', KEYS[2], 'n') or '0') - tonumber(ARGV[3])
if over >= 0 then
  local delay = math.min(tonumber(ARGV[4]) * 2 ^ over, tonumber(ARGV[5]))
  wait = math.max(wait, tonumber(redis.call('HGET', KEYS[2], 'last') or '0') + delay - now)
end
if wait > 0 then return {0, math.ceil(wait)} end
local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('TTL', KEYS[1]) < 0 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
redis.call('HINCRBY', KEYS[2], 'n', 1)
redis.call('HSET', KEYS[2], 'last', now)
redis.call('EXPIRE', KEYS[2], ARGV[2])
return {1, 0}`,
  2,
);

// KEYS: the address's counter. Gives back one place, never more, and never creates a counter
// without an expiry.
const GIVE_BACK = luaScript(
  `if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end
return 1`,
  1,
);

export class LoginThrottle {
  private readonly limits: { pair: number; ip: number; window: number; free: number; delay: number; maxDelay: number };

  constructor(
    private readonly redis: RedisClient,
    options: LoginThrottleOptions = {},
    private readonly prefix = 'reelay:login-fail:',
  ) {
    this.limits = {
      pair: options.perAccountAddress ?? 5,
      ip: options.perIp ?? 20,
      window: options.windowSeconds ?? 15 * 60,
      free: options.accountFreeFailures ?? 5,
      delay: options.accountDelayMs ?? 1000,
      maxDelay: options.accountMaxDelayMs ?? 30_000,
    };
  }

  /** The address's counter; the (account, address) counter and the account's hash, tagged by account. */
  private keys(email: string, ip: string | undefined): { address: string; pair: string; account: string } {
    const address = ipBucket(ip);
    const account = hashTag(sha256Hex(email));
    return {
      address: `${this.prefix}ip:${address}`,
      pair: `${this.prefix}${account}:pair:${sha256Hex(address)}`,
      account: `${this.prefix}${account}:delay`,
    };
  }

  /**
   * Takes a place for one sign-in attempt, counted as a failure until succeeded() says otherwise.
   * Throws rate_limited (with Retry-After) when this address may not try this account now.
   */
  async attempt(email: string, ip: string | undefined): Promise<void> {
    const keys = this.keys(email, ip);
    const { pair, ip: perIp, window, free, delay, maxDelay } = this.limits;
    let [allowed, waitMs] = (await guardedScript(this.redis, TAKE, [keys.address], [perIp, window])) as [
      number,
      number,
    ];
    if (allowed === 1) {
      [allowed, waitMs] = (await guardedScript(
        this.redis,
        ATTEMPT,
        [keys.pair, keys.account],
        [pair, window, free, delay, maxDelay],
      )) as [number, number];
      if (allowed !== 1) await guardedScript(this.redis, GIVE_BACK, [keys.address], []);
    }
    if (allowed === 1) return;
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    throw new ReelayError('rate_limited', `Too many failed sign-ins; try again in ${seconds} seconds.`, {
      headers: { 'Retry-After': String(seconds) },
    });
  }

  /**
   * A successful sign-in clears the account's counts and hands back its own place at the address.
   * The address's other failures stay: otherwise an attacker could reset them by signing in to an
   * account of their own between guesses.
   */
  async succeeded(email: string, ip: string | undefined): Promise<void> {
    const keys = this.keys(email, ip);
    await guarded(() => this.redis.del(keys.pair, keys.account));
    await guardedScript(this.redis, GIVE_BACK, [keys.address], []);
  }
}
