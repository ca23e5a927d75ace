// The extract cache: a result is kept in Redis for EXTRACT_CACHE_SECONDS (never past its earliest
// signed media URL's expiry), so any replica answers the same URL again without the origin; and
// concurrent extracts of one new URL make one upstream fetch across all replicas (single flight).
//
// Single flight: the first request takes a lock (SET NX PX) and fetches; the lock lives LOCK_MS and
// its holder renews it while fetching, so a holder that dies frees it within LOCK_MS. The others
// subscribe to the URL's channel and wait for the holder's message (the result, or the error it
// met), re-checking the result key and the lock every RECHECK_MS in case a message was missed or
// the lock lapsed (then one of them takes it over). A waiter that waited longer than its bound
// fetches by itself. Only successes are cached; an error is handed to the requests already waiting
// for that fetch (they asked at the same moment and would meet the same origin), never kept.
import { createHash, randomUUID } from 'node:crypto';
import { ReelayError } from '@reelay/contracts';
import type { Extraction } from '@reelay/extractors';
import type { Logger } from '@reelay/observability';
import { hashTag, luaScript, runScript, type RedisClient } from '@reelay/redis';
import { cacheTtlMs, earliestExpiry } from './media-expiry.js';
import { FlightListener, type FlightMessage } from './flight-listener.js';

/** How a result was obtained, for the metrics and the Age header. */
export type CacheOutcome = 'off' | 'hit' | 'miss' | 'joined' | 'bypass' | 'unshared';

export interface Served {
  extraction: Extraction;
  outcome: CacheOutcome;
  /** Seconds since the result was fetched, when this request did not fetch it itself. */
  age?: number;
}

export interface ExtractCacheOptions {
  ttlSeconds: number;
  /** How long a waiter waits for another replica's fetch before fetching by itself. */
  waitMs: number;
  logger: Logger;
  prefix?: string;
  lockMs?: number;
  recheckMs?: number;
}

/** Stored under the result key, and sent to waiters as is. */
interface Entry {
  stored_at: number;
  extraction: Extraction;
}

const LOCK_MS = 5_000;
const RECHECK_MS = 1_000;
/** A client answered from the cache keeps at least this long to start downloading a signed URL. */
export const EXPIRY_MARGIN_MS = 30_000;

export class ExtractCache {
  private readonly prefix: string;
  private readonly lockMs: number;
  private readonly recheckMs: number;
  private readonly listener: FlightListener;

  constructor(
    private readonly redis: RedisClient,
    private readonly options: ExtractCacheOptions,
  ) {
    this.prefix = options.prefix ?? 'reelay:xc:';
    this.lockMs = options.lockMs ?? LOCK_MS;
    this.recheckMs = options.recheckMs ?? RECHECK_MS;
    this.listener = new FlightListener(redis, options.logger);
  }

  /** The Redis keys and channel of a URL (tests use them to play a dead holder). */
  keys(url: string): { result: string; lock: string; channel: string } {
    const hash = createHash('sha256').update(url).digest('base64url');
    // The URL's hash is the keys' hash tag: the scripts touch both, so on a Redis Cluster they share
    // a slot, while different URLs spread over all of them.
    return {
      result: `${this.prefix}r:${hashTag(hash)}`,
      lock: `${this.prefix}l:${hashTag(hash)}`,
      channel: `${this.prefix}c:${hash}`,
    };
  }

  /** The cached result of `url`, else the result of `fetch` (run here or on the replica holding the lock). */
  async serve(
    url: string,
    fetch: () => Promise<Extraction>,
    options: { fresh?: boolean; signal?: AbortSignal } = {},
  ): Promise<Served> {
    if (this.options.ttlSeconds === 0) return { extraction: await fetch(), outcome: 'off' };
    const keys = this.keys(url);
    const token = randomUUID();
    if (options.fresh) {
      // Cache-Control: no-cache: fetch afresh and refresh the entry, whoever else is fetching.
      const extraction = await fetch();
      await this.complete(keys, '', extraction, undefined);
      return { extraction, outcome: 'bypass' };
    }
    const deadline = Date.now() + this.options.waitMs;
    let flight: ReturnType<FlightListener['join']> | undefined;
    try {
      for (;;) {
        let state: [string, string?];
        try {
          state = (await runScript(this.redis, ACQUIRE, [keys.result, keys.lock], [token, this.lockMs])) as [
            string,
            string?,
          ];
        } catch (err) {
          // A cache that cannot be read is no reason to refuse an extract: fetch without it.
          this.options.logger.warn({ err: (err as Error).message }, 'extract cache unavailable: fetching without it');
          return { extraction: await fetch(), outcome: 'unshared' };
        }
        if (state[0] === 'hit') {
          const entry = parseEntry(state[1]);
          // An entry that does not read (written by another version, or damaged) is no answer.
          if (!entry) return { extraction: await fetch(), outcome: 'unshared' };
          return this.fromEntry(entry, flight ? 'joined' : 'hit');
        }
        if (state[0] === 'lock')
          return { extraction: await this.lead(keys, token, fetch, options.signal), outcome: 'miss' };
        // Another request holds the lock. Listen first, then look again, so no message falls between.
        if (!flight) {
          flight = this.listener.join(keys.channel);
          await flight.ready;
          continue;
        }
        const left = deadline - Date.now();
        if (left <= 0) return { extraction: await fetch(), outcome: 'unshared' };
        const message = await flight.next(Math.min(this.recheckMs, left), options.signal);
        if (options.signal?.aborted) throw cancelled(options.signal);
        if (message && 'extraction' in message) return this.fromEntry(message, 'joined');
        if (message && 'error' in message)
          throw new ReelayError(message.error.code, message.error.message, { headers: message.error.headers });
        // Nothing yet, or the holder gave up (its client left): look again, maybe take the lock.
      }
    } finally {
      flight?.leave();
    }
  }

  /** Holds the lock while fetching, then stores and announces the outcome. */
  private async lead(
    keys: Keys,
    token: string,
    fetch: () => Promise<Extraction>,
    signal?: AbortSignal,
  ): Promise<Extraction> {
    const renew = setInterval(
      () => {
        runScript(this.redis, RENEW, [keys.lock], [token, this.lockMs]).catch(() => undefined);
      },
      Math.max(50, Math.floor(this.lockMs / 3)),
    );
    renew.unref();
    try {
      const extraction = await fetch();
      await this.complete(keys, token, extraction, undefined);
      return extraction;
    } catch (err) {
      // The holder's own client leaving, or a bug, says nothing about the URL: the waiters try again.
      const shared = err instanceof ReelayError && !signal?.aborted;
      const message: FlightMessage = shared
        ? { error: { code: err.code, message: err.message, headers: err.headers } }
        : { abandoned: true };
      await this.complete(keys, token, undefined, message);
      throw err;
    } finally {
      clearInterval(renew);
    }
  }

  /** Stores a success (for as long as its URLs allow), releases the lock, tells the waiters. */
  private async complete(
    keys: Keys,
    token: string,
    extraction: Extraction | undefined,
    failure: FlightMessage | undefined,
  ): Promise<void> {
    const now = Date.now();
    const entry = extraction ? JSON.stringify({ stored_at: now, extraction } satisfies Entry) : '';
    const ttl = extraction ? cacheTtlMs(this.options.ttlSeconds, earliestExpiry(extraction), now, EXPIRY_MARGIN_MS) : 0;
    try {
      await runScript(
        this.redis,
        COMPLETE,
        [keys.result, keys.lock],
        [token, entry, ttl, keys.channel, failure ? JSON.stringify(failure) : ''],
      );
    } catch (err) {
      // The result is still answered; the waiters take over once the lock lapses.
      this.options.logger.warn({ err: (err as Error).message }, 'extract cache: could not store the result');
    }
  }

  private fromEntry(entry: Entry, outcome: CacheOutcome): Served {
    return {
      extraction: entry.extraction,
      outcome,
      age: Math.max(0, Math.floor((Date.now() - entry.stored_at) / 1000)),
    };
  }

  async close(): Promise<void> {
    await this.listener.close();
  }
}

type Keys = ReturnType<ExtractCache['keys']>;

/** The cached entry, else the lock when free, else 'busy'. */
const ACQUIRE = luaScript(
  `local v = redis.call('GET', KEYS[1])
if v then return {'hit', v} end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'lock'} end
return {'busy'}`,
  2,
);

/** Stores ARGV[2] for ARGV[3] ms (when both are set), frees the lock if ARGV[1] holds it, publishes. */
const COMPLETE = luaScript(
  `if ARGV[2] ~= '' and tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
local message = ARGV[5]
if message == '' then message = ARGV[2] end
if message ~= '' then redis.call('PUBLISH', ARGV[4], message) end
return 1`,
  2,
);

/** Extends the lock only while ARGV[1] still holds it. */
const RENEW = luaScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`,
  1,
);

function parseEntry(text: string | undefined): Entry | undefined {
  try {
    const entry = JSON.parse(text ?? '') as Partial<Entry>;
    return typeof entry.stored_at === 'number' && entry.extraction?.result && Array.isArray(entry.extraction.records)
      ? (entry as Entry)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The client left while waiting: its own reason, as the egress reports a cancelled fetch. */
function cancelled(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error
    ? reason
    : Object.assign(new Error('The request was cancelled.'), { name: 'AbortError' });
}
