// The source registry: every source an extract returns is kept in Redis for SOURCE_TTL_SECONDS with
// what a later download needs. One command per extract (a small Lua script sets every key with its
// TTL: an ioredis pipeline costs more CPU to build than the whole command); keys are hashes of the
// URL so any URL length is fine.
import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ReelayError, StoredSourceSchema, type SourceRecord, type StoredSource } from '@reelay/contracts';

export class SourceRegistry {
  constructor(
    private readonly redis: Redis,
    private readonly ttlSeconds: number,
    private readonly prefix = 'reelay:src:',
  ) {
    // A defined command runs by SHA: the script's text travels (and Redis hashes it) only when this
    // Redis has not seen it yet. Defining it again on a shared client is harmless.
    redis.defineCommand('reelaySetSources', { lua: SET_ALL });
  }

  key(url: string): string {
    return this.prefix + createHash('sha256').update(url).digest('base64url');
  }

  /** Records one extraction's sources; they share an extraction id so merge pairs can be checked. */
  async record(platform: string, records: readonly SourceRecord[]): Promise<void> {
    if (records.length === 0) return;
    // randomUUID draws from a pooled buffer; randomBytes was a synchronous RNG call per extract.
    const extraction = randomUUID();
    const now = Date.now();
    const keys: string[] = [];
    const values: string[] = [];
    for (const r of records) {
      const stored: StoredSource = { ...r, item_key: `${extraction}:${r.media_index}`, platform, recorded_at: now };
      keys.push(this.key(r.url));
      values.push(JSON.stringify(stored));
    }
    try {
      await (this.redis as ScriptedRedis).reelaySetSources(keys.length, ...keys, ...values, this.ttlSeconds);
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** The stored source for an exact URL, or undefined when no extract returned it within the TTL. */
  async get(url: string): Promise<StoredSource | undefined> {
    let raw: string | null;
    try {
      raw = await this.redis.get(this.key(url));
    } catch (err) {
      throw unavailable(err);
    }
    if (!raw) return undefined;
    const parsed = StoredSourceSchema.safeParse(parseOrNull(raw));
    return parsed.success && parsed.data.url === url ? parsed.data : undefined;
  }
}

/** SET every KEYS[i] to ARGV[i] with the TTL in the last ARGV, in one command. */
const SET_ALL = "local ttl = ARGV[#KEYS + 1]\nfor i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[i], 'EX', ttl) end\nreturn #KEYS";

/** The client with SET_ALL defined on it (ioredis sends EVALSHA, and EVAL once when Redis lacks it). */
type ScriptedRedis = Redis & { reelaySetSources(numberOfKeys: number, ...args: (string | number)[]): Promise<number> };

function unavailable(cause: unknown): ReelayError {
  return new ReelayError('service_unavailable', 'The source registry (Redis) is unavailable; try again shortly.', { cause });
}

/** JSON, or null for a value that is not (written by something else, or corrupted): read as unknown. */
function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
