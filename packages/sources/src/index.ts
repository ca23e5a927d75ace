// The source registry: every source an extract returns is kept in Redis for SOURCE_TTL_SECONDS with
// what a later download needs. One command per extract (a small Lua script sets every key with its
// TTL: an ioredis pipeline costs more CPU to build than the whole command); keys are hashes of the
// URL so any URL length is fine. On a Redis Cluster those keys spread over the slots, so there they
// are set one command each, all sent at once.
//
// Two pages can name the same media URL with different titles and headers (a Referer each). Every
// source and subtitle track is kept twice: under its extraction and URL, which a download naming
// `extraction_id` reads (that page's own title and headers, whatever was extracted since), and under
// the URL alone, for downloads without one: there the latest extract wins, so a merge pair from the
// extract a client just made stays one item even when another page named one of its URLs before.
// Each item's subtitle list is kept once, under its item key (which names the extraction).
import { createHash, randomUUID } from 'node:crypto';
import {
  ReelayError,
  StoredSourceSchema,
  StoredSubtitleSchema,
  type SourceRecord,
  type StoredSource,
  type StoredSubtitle,
  type SubtitleRecord,
} from '@reelay/contracts';
import { luaScript, runScript, type RedisClient } from '@reelay/redis';

export class SourceRegistry {
  constructor(
    private readonly redis: RedisClient,
    private readonly ttlSeconds: number,
    private readonly prefix = 'reelay:src:',
  ) {}

  /** The key of a URL's source: one extraction's when `extraction` is given, else the latest extract's. */
  key(url: string, extraction?: string): string {
    const hash = createHash('sha256').update(url).digest('base64url');
    return extraction === undefined ? this.prefix + hash : `${this.prefix}${extraction}:${hash}`;
  }

  /** The key of a media item's subtitle list. */
  private itemKey(itemKey: string): string {
    return `${this.prefix}item:${itemKey}`;
  }

  /**
   * Records one extraction's sources; they share an extraction id so merge pairs can be checked.
   * Subtitle tracks are kept by URL like sources (a download may name one) and as their item's list
   * (a download of the item's video may embed them by language). Returns the id (the extract
   * answer's `extraction_id`); a caller re-registering an answer it already gave may pass its id.
   * (randomUUID draws from a pooled buffer; randomBytes was a synchronous RNG call per extract.)
   */
  async record(
    platform: string,
    records: readonly SourceRecord[],
    subtitles: readonly SubtitleRecord[] = [],
    extraction: string = randomUUID(),
  ): Promise<string> {
    if (records.length === 0) return extraction;
    const now = Date.now();
    const pairKeys: string[] = [];
    const pairValues: string[] = [];
    for (const r of records) {
      const stored: StoredSource = { ...r, item_key: `${extraction}:${r.media_index}`, platform, recorded_at: now };
      pairKeys.push(this.key(r.url, extraction), this.key(r.url));
      pairValues.push(JSON.stringify(stored));
    }
    const perItem = new Map<string, StoredSubtitle[]>();
    for (const r of subtitles) {
      const stored: StoredSubtitle = { ...r, item_key: `${extraction}:${r.media_index}`, platform, recorded_at: now };
      pairKeys.push(this.key(r.url, extraction), this.key(r.url));
      pairValues.push(JSON.stringify(stored));
      perItem.set(stored.item_key, [...(perItem.get(stored.item_key) ?? []), stored]);
    }
    const singleKeys = [...perItem.keys()].map((item) => this.itemKey(item));
    const singleValues = [...perItem.values()].map((list) => JSON.stringify(list));
    try {
      if (this.redis.isCluster) await this.setEach(pairKeys, pairValues, singleKeys, singleValues);
      else
        await runScript(
          this.redis,
          SET_ALL,
          [...pairKeys, ...singleKeys],
          [pairValues.length, ...pairValues, ...singleValues, this.ttlSeconds],
        );
    } catch (err) {
      throw unavailable(err);
    }
    return extraction;
  }

  /**
   * On a Redis Cluster the keys live in different slots, which one script may not touch: one SET
   * each, sent together (ioredis pipelines them per node), so the extract still waits one round trip.
   */
  private async setEach(
    pairKeys: string[],
    pairValues: string[],
    singleKeys: string[],
    singleValues: string[],
  ): Promise<void> {
    const ttl = this.ttlSeconds;
    await Promise.all([
      ...pairKeys.map((key, i) => this.redis.set(key, pairValues[i >> 1], 'EX', ttl)),
      ...singleKeys.map((key, i) => this.redis.set(key, singleValues[i], 'EX', ttl)),
    ]);
  }

  /**
   * The stored source for an exact URL, as the given extraction returned it, or (without one) as the
   * latest extract that named it did; undefined when none did within the TTL.
   */
  async get(url: string, extraction?: string): Promise<StoredSource | undefined> {
    const found = await this.lookup(url, extraction);
    return found?.kind === 'source' ? found.source : undefined;
  }

  /** What an extract (the given one, else the latest) returned at this exact URL within the TTL: a source or a subtitle track. */
  async lookup(
    url: string,
    extraction?: string,
  ): Promise<{ kind: 'source'; source: StoredSource } | { kind: 'subtitle'; subtitle: StoredSubtitle } | undefined> {
    const value = parseOrNull(await this.read(this.key(url, extraction)));
    const source = StoredSourceSchema.safeParse(value);
    if (source.success && source.data.url === url) return { kind: 'source', source: source.data };
    const subtitle = StoredSubtitleSchema.safeParse(value);
    if (subtitle.success && subtitle.data.url === url) return { kind: 'subtitle', subtitle: subtitle.data };
    return undefined;
  }

  /** The subtitle tracks of a media item (by a source's item_key), in the extract's order. */
  async subtitlesOf(itemKey: string): Promise<StoredSubtitle[]> {
    const list = parseOrNull(await this.read(this.itemKey(itemKey)));
    if (!Array.isArray(list)) return [];
    return list.flatMap((value: unknown) => {
      const parsed = StoredSubtitleSchema.safeParse(value);
      return parsed.success ? [parsed.data] : [];
    });
  }

  private async read(key: string): Promise<string | null> {
    try {
      return await this.redis.get(key);
    } catch (err) {
      throw unavailable(err);
    }
  }
}

/**
 * ARGV[1] = n, the number of pairs. For each pair i, SET KEYS[2i-1] (its extraction's key) and
 * KEYS[2i] (its URL's) to ARGV[1+i]; every later key j is a single, SET to the next ARGV in turn.
 * The TTL is the last ARGV. One command, and a value sent once however many keys it goes under.
 */
const SET_ALL = luaScript(
  [
    'local n = tonumber(ARGV[1])',
    'local ttl = ARGV[#ARGV]',
    'for i = 1, n do',
    "  redis.call('SET', KEYS[2 * i - 1], ARGV[1 + i], 'EX', ttl)",
    "  redis.call('SET', KEYS[2 * i], ARGV[1 + i], 'EX', ttl)",
    'end',
    'for j = 2 * n + 1, #KEYS do',
    "  redis.call('SET', KEYS[j], ARGV[1 + n + j - 2 * n], 'EX', ttl)",
    'end',
    'return #KEYS',
  ].join('\n'),
);

function unavailable(cause: unknown): ReelayError {
  return new ReelayError('service_unavailable', 'The source registry (Redis) is unavailable; try again shortly.', {
    cause,
  });
}

/** JSON, or null for a value that is not (written by something else, or corrupted): read as unknown. */
function parseOrNull(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
