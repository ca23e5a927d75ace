// Surface A's gate: the API key check and the rate limit in ONE Redis round trip, shared by every
// gateway replica. With a key, a Lua script looks the key up by its hash and counts the request in
// the key's bucket, atomically; without one (the playground, a keyless request) a script counts it
// in the client IP's bucket. A key that is not found is charged to the IP's bucket in a second
// round trip: the key's record and bucket share a Redis Cluster hash slot (the bucket's name carries
// the record's name as its hash tag), the IP's bucket lives in a slot of its own, and no script may
// touch two slots.
//
// Why a script and not rate-limiter-flexible: the limiter's consume() is one round trip, but which
// bucket to charge depends on the key lookup, so it would need a second round trip first (or a
// speculative charge of both buckets). The script keeps it to one EVALSHA. Like the library's
// RateLimiterRedis, it counts in a fixed window that starts with a bucket's first request, and it has
// no in-memory fallback: when Redis cannot be reached the call fails and the request is refused
// with 503, never let through unlimited.
//
// Requests with an unknown or deleted key are charged to the IP bucket, so guessing keys is held to
// the public limit; a disabled key is a real key and is charged to its own bucket.
import ipaddr from 'ipaddr.js';
import { apiKeyRecord, hashSecret } from './keys.js';
import { hashTag, luaScript, type RedisClient, type RedisReply } from '@reelay/redis';
import { guardedScript } from './redis-calls.js';

/**
 * `v1`: surface B's POST /api/v1/extract and /download; `subscriptions`: the routes under
 * /api/v1/subscriptions. Both counted per client address like the playground, each in buckets of its own.
 */
export type Surface = 'api' | 'playground' | 'v1' | 'subscriptions';
/** `none`: the playground and surface B, which take no key. */
export type AuthOutcome = 'ok' | 'missing' | 'invalid' | 'disabled' | 'none';

export interface GateDecision {
  auth: AuthOutcome;
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends and the bucket is full again. */
  resetSeconds: number;
  /** The key's lookup hash, when a known key (enabled or disabled) was sent; usage is counted on it. */
  keyHash?: string;
}

// Counts a request in a bucket whose window starts with its first request. Used inline by both scripts.
const CHARGE_BUCKET = `local count = redis.call('INCR', bucket)
local ttl = redis.call('PTTL', bucket)
if ttl < 0 then
  redis.call('PEXPIRE', bucket, window)
  ttl = tonumber(window)
end`;

// KEYS: key record, key bucket (same slot). ARGV: key limit, window in ms.
// Returns {auth, count, limit, ttl ms}, or {'invalid'} (nothing charged) when there is no such key.
const KEY_GATE = luaScript(
  `local record = redis.call('HMGET', KEYS[1], 'id', 'enabled')
if not record[1] then return {'invalid'} end
local auth, bucket, limit, window = record[2] == '1' and 'ok' or 'disabled', KEYS[2], tonumber(ARGV[1]), ARGV[2]
${CHARGE_BUCKET}
return {auth, count, limit, ttl}`,
  2,
);

// KEYS: the IP's bucket. ARGV: auth to report, limit, window in ms. Returns {auth, count, limit, ttl ms}.
const IP_GATE = luaScript(
  `local auth, bucket, limit, window = ARGV[1], KEYS[1], tonumber(ARGV[2]), ARGV[3]
${CHARGE_BUCKET}
return {auth, count, limit, ttl}`,
  1,
);

export interface SurfaceLimits {
  keyPerMinute: number;
  publicPerMinute: number;
  /** Surface B's limit per client address (RATE_LIMIT_V1_PER_MIN), in buckets of its own. */
  v1PerMinute?: number;
  /** The subscriptions API's limit per client address (RATE_LIMIT_SUBSCRIPTIONS_PER_MIN), in buckets of its own. */
  subscriptionsPerMinute?: number;
  /** The window; a minute unless a test needs a shorter one. */
  windowMs?: number;
}

export class SurfaceGate {
  private readonly windowMs: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly limits: SurfaceLimits,
    private readonly prefix = 'reelay:rl:',
  ) {
    this.windowMs = limits.windowMs ?? 60_000;
  }

  async check(input: { surface: Surface; secret?: string; ip: string }): Promise<GateDecision> {
    const secret = input.surface === 'api' ? input.secret?.trim() || undefined : undefined;
    const keyHash = secret ? hashSecret(secret) : undefined;
    const mode = input.surface === 'api' ? (keyHash ? 'key' : 'missing') : 'playground';
    // Surface B and the subscriptions API count in buckets of their own: extracting through /api/v1
    // must not use up the playground, nor managing subscriptions the extracts.
    const own = { v1: ['v1:', this.limits.v1PerMinute], subscriptions: ['subs:', this.limits.subscriptionsPerMinute] };
    const [bucketPrefix, ownLimit] =
      input.surface === 'v1' || input.surface === 'subscriptions' ? own[input.surface] : ['', undefined];
    const ipKey = `${this.prefix}${bucketPrefix}ip:${ipBucket(input.ip)}`;
    const publicLimit = bucketPrefix ? (ownLimit ?? 0) : this.limits.publicPerMinute;
    let reply: RedisReply = ['invalid'];
    if (mode === 'key') {
      const record = apiKeyRecord(keyHash!);
      reply = await guardedScript(
        this.redis,
        KEY_GATE,
        [record, `${this.prefix}key:${hashTag(record)}`],
        [this.limits.keyPerMinute, this.windowMs],
      );
    }
    if (mode !== 'key' || (reply as string[])[0] === 'invalid') {
      reply = await guardedScript(
        this.redis,
        IP_GATE,
        [ipKey],
        [mode === 'key' ? 'invalid' : mode === 'missing' ? 'missing' : 'none', publicLimit, this.windowMs],
      );
    }
    const [auth, count, limit, ttl] = reply as [AuthOutcome, number, number, number];
    return {
      auth,
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: Math.max(1, Math.ceil(ttl / 1000)),
      keyHash: auth === 'ok' || auth === 'disabled' ? keyHash : undefined,
    };
  }
}

/**
 * The bucket of a client address: IPv4 as it is, IPv6 by its /64 (one subscriber's usual
 * allocation, so rotating through it does not buy a fresh limit each time).
 */
export function ipBucket(ip: string | undefined): string {
  if (!ip) return 'unknown';
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.parse(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  // ipaddr.js expands '::', embedded IPv4 and zone ids; the first four groups are the /64.
  return `${v6.parts
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
