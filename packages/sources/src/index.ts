// The source registry: every source an extract returns is kept in Redis for SOURCE_TTL_SECONDS with
// what a later download needs. One pipelined round trip per extract; keys are hashes of the URL so
// any URL length is fine.
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ReelayError, StoredSourceSchema, type SourceRecord, type StoredSource } from '@reelay/contracts';

export class SourceRegistry {
  constructor(
    private readonly redis: Redis,
    private readonly ttlSeconds: number,
    private readonly prefix = 'reelay:src:',
  ) {}

  key(url: string): string {
    return this.prefix + createHash('sha256').update(url).digest('base64url');
  }

  /** Records one extraction's sources; they share an extraction id so merge pairs can be checked. */
  async record(platform: string, records: readonly SourceRecord[]): Promise<void> {
    if (records.length === 0) return;
    const extraction = randomBytes(9).toString('base64url');
    const now = Date.now();
    const pipeline = this.redis.pipeline();
    for (const r of records) {
      const stored: StoredSource = { ...r, item_key: `${extraction}:${r.media_index}`, platform, recorded_at: now };
      pipeline.set(this.key(r.url), JSON.stringify(stored), 'EX', this.ttlSeconds);
    }
    const results = await pipeline.exec().catch((err: unknown) => {
      throw unavailable(err);
    });
    const failed = results?.find(([err]) => err);
    if (failed) throw unavailable(failed[0]);
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
    const parsed = StoredSourceSchema.safeParse(JSON.parse(raw));
    return parsed.success && parsed.data.url === url ? parsed.data : undefined;
  }
}

function unavailable(cause: unknown): ReelayError {
  return new ReelayError('service_unavailable', 'The source registry (Redis) is unavailable; try again shortly.', { cause });
}
