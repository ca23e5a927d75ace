// Browsers an account was signed in on: a `reelay_device` cookie (32 random bytes) set at every
// sign-in, its SHA-256 kept in the account's set of devices (a hash: device → when it was last seen).
// It grants nothing by itself; it lets the forgotten-password budget tell the owner from strangers
// (mail-budget.ts), as OWASP's "device cookies" do for lockouts. What a maker of the account could
// have added before its address was proven goes at the proof (proof.ts clears the set), and at every
// reset; at most MAX_DEVICES are kept (the least recently seen leave first).
import { type RedisClient, luaScript } from '@reelay/redis';
import { guarded, guardedScript, sha256Hex } from './redis-calls.js';
import { randomBytes } from 'node:crypto';

export const DEVICE_COOKIE = 'reelay_device';
/** How long a browser stays known without signing in again. */
export const DEVICE_TTL_SECONDS = 180 * 86_400;
const MAX_DEVICES = 50;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

const devices = (accountId: string) => `reelay:account-devices:${accountId}`;

// KEYS: the account's devices. ARGV: device hash, now (ms), most devices, ttl (s). Keeps the set bounded.
const REMEMBER = luaScript(
  `redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
local all = redis.call('HGETALL', KEYS[1])
local count = #all / 2
if count <= tonumber(ARGV[3]) then return count end
local oldest, at = nil, nil
for i = 1, #all, 2 do
  local seen = tonumber(all[i + 1]) or 0
  if at == nil or seen < at then oldest, at = all[i], seen end
end
redis.call('HDEL', KEYS[1], oldest)
return count - 1`,
  1,
);

export class KnownDevices {
  constructor(private readonly redis: RedisClient) {}

  /** Remembers this browser for the account; returns the cookie's value (the browser's own, if it had a sane one). */
  async remember(accountId: string, current: string | undefined): Promise<string> {
    const token = current && TOKEN.test(current) ? current : randomBytes(32).toString('base64url');
    await guardedScript(
      this.redis,
      REMEMBER,
      [devices(accountId)],
      [sha256Hex(token), Date.now(), MAX_DEVICES, DEVICE_TTL_SECONDS],
    );
    return token;
  }

  /** Whether the browser's device cookie was seen signing in to this account. */
  async known(accountId: string | undefined, token: string | undefined): Promise<boolean> {
    if (!accountId || !token || !TOKEN.test(token)) return false;
    return (await guarded(() => this.redis.hexists(devices(accountId), sha256Hex(token)))) === 1;
  }

  /** Forgets every browser of the account (its address was proven, it was reset, or it is deleted). */
  async forgetAll(accountId: string): Promise<void> {
    await guarded(() => this.redis.del(devices(accountId)));
  }
}
