// API keys: `rly_` + 32 random bytes (base64url), shown once at creation. Only the SHA-256 of a
// secret is stored, and keys are found by that hash, so checking a key is a lookup, never a
// comparison of secrets. A key's record (hash `apikey:<sha256>`) holds its owner, name, state and
// usage counters; each account keeps an index of its key ids, which also holds the limit: a key's
// place is checked and taken there in one script (one key, so one hash slot on a Redis Cluster).
import { randomBytes } from 'node:crypto';
import { ReelayError } from '@reelay/contracts';
import { luaScript, type RedisClient } from '@reelay/redis';
import { guarded, guardedScript, sha256Hex } from './redis-calls.js';

export const KEY_PREFIX = 'rly_';
/** A bound on keys per account, so one account cannot fill Redis; far above one key per application. */
export const MAX_KEYS_PER_ACCOUNT = 100;
const SHOWN_PREFIX_LENGTH = 8;

export interface ApiKeyView {
  id: string;
  name: string;
  /** The first characters of the secret (`rly_AbCd`), to tell keys apart. */
  prefix: string;
  enabled: boolean;
  created_at: string;
  last_used_at: string | null;
  usage: { total_requests: number; successful_requests: number; success_rate: number | null };
}

export function apiKeyRecord(hash: string): string {
  return `reelay:apikey:${hash}`;
}

export function hashSecret(secret: string): string {
  return sha256Hex(secret);
}

export function newSecret(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

function accountIndex(accountId: string): string {
  return `reelay:account-keys:${accountId}`;
}

function notFound(): ReelayError {
  return new ReelayError('not_found', 'No such API key.');
}

// Changes the state only of a key that still exists: a concurrent delete must not leave a stub record.
const SET_ENABLED = luaScript(
  `if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
redis.call('HSET', KEYS[1], 'enabled', ARGV[1])
return redis.call('HGETALL', KEYS[1])`,
  1,
);

// Takes a place in the account's index if it has one free. KEYS: the index. ARGV: limit, key id, hash.
// 1 when taken, 0 when the account is full.
const TAKE_PLACE = luaScript(
  `if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
return 1`,
  1,
);

export function toView(fields: Record<string, string>): ApiKeyView {
  const total = Number(fields.total ?? 0);
  const successful = Number(fields.successful ?? 0);
  return {
    id: fields.id,
    name: fields.name,
    prefix: fields.prefix,
    enabled: fields.enabled === '1',
    created_at: new Date(Number(fields.created_at)).toISOString(),
    last_used_at: fields.last_used_at ? new Date(Number(fields.last_used_at)).toISOString() : null,
    usage: {
      total_requests: total,
      successful_requests: successful,
      success_rate: total ? Math.round((successful / total) * 10_000) / 10_000 : null,
    },
  };
}

function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]] = flat[i + 1];
  return out;
}

export class KeyStore {
  constructor(private readonly redis: RedisClient) {}

  /** Creates an enabled key; the returned secret is the only copy there will ever be. */
  async create(accountId: string, name: string): Promise<ApiKeyView & { secret: string }> {
    const secret = newSecret();
    const hash = hashSecret(secret);
    const fields = {
      id: randomBytes(12).toString('base64url'),
      account_id: accountId,
      name,
      prefix: secret.slice(0, SHOWN_PREFIX_LENGTH),
      enabled: '1',
      created_at: String(Date.now()),
    };
    // The place in the index first, checked and taken in one step, so concurrent requests cannot pass
    // the limit; then the record, in another slot on a Redis Cluster. A failure in between leaves an
    // entry without a record (not listed, deletable), never a working key its owner cannot see.
    const taken = await guardedScript(
      this.redis,
      TAKE_PLACE,
      [accountIndex(accountId)],
      [MAX_KEYS_PER_ACCOUNT, fields.id, hash],
    );
    if (taken !== 1) {
      throw new ReelayError(
        'key_limit_reached',
        `An account can have at most ${MAX_KEYS_PER_ACCOUNT} keys; delete one first.`,
      );
    }
    await guarded(() => this.redis.hset(apiKeyRecord(hash), fields));
    return { ...toView(fields), secret };
  }

  /** The account's keys, oldest first. */
  async list(accountId: string): Promise<ApiKeyView[]> {
    const index = await guarded(() => this.redis.hgetall(accountIndex(accountId)));
    const hashes = Object.values(index);
    if (hashes.length === 0) return [];
    // Sent together, one command each: the records live in different slots on a Redis Cluster.
    const records = await guarded(() => Promise.all(hashes.map((hash) => this.redis.hgetall(apiKeyRecord(hash)))));
    // Keys made in the same millisecond tie on created_at; the index hash keeps insertion order
    // (a listpack while it holds at most 128 fields, and an account has at most 100 keys), so its
    // position breaks the tie where a random id would not.
    const position = new Map(Object.keys(index).map((id, i) => [id, i]));
    return records
      .filter((r) => r.id && r.account_id === accountId)
      .map(toView)
      .sort(
        (a, b) => a.created_at.localeCompare(b.created_at) || (position.get(a.id) ?? 0) - (position.get(b.id) ?? 0),
      );
  }

  async setEnabled(accountId: string, id: string, enabled: boolean): Promise<ApiKeyView> {
    const hash = await this.hashOf(accountId, id);
    const flat = await guardedScript(this.redis, SET_ENABLED, [apiKeyRecord(hash)], [enabled ? '1' : '0']);
    if (!Array.isArray(flat)) throw notFound();
    return toView(pairs(flat as string[]));
  }

  /** Removes the key for good: its record goes, so its secret is unknown from now on. Returns its hash. */
  async delete(accountId: string, id: string): Promise<string> {
    const hash = await this.hashOf(accountId, id);
    // The record first (the key is refused from then on), then the index entry: two slots on a cluster.
    await guarded(() => this.redis.del(apiKeyRecord(hash)));
    await guarded(() => this.redis.hdel(accountIndex(accountId), id));
    return hash;
  }

  /** Removes every key of the account at once (it is being deleted); returns their hashes. */
  async deleteAll(accountId: string): Promise<string[]> {
    const hashes = Object.values(await guarded(() => this.redis.hgetall(accountIndex(accountId))));
    // Records first (each is refused at once), one command each: they live in different cluster slots.
    await guarded(() => Promise.all(hashes.map((hash) => this.redis.del(apiKeyRecord(hash)))));
    await guarded(() => this.redis.del(accountIndex(accountId)));
    return hashes;
  }

  /** The lookup hash of one of this account's keys; another account's key is not found. */
  async hashOf(accountId: string, id: string): Promise<string> {
    const hash = await guarded(() => this.redis.hget(accountIndex(accountId), id));
    if (!hash) throw notFound();
    return hash;
  }
}
