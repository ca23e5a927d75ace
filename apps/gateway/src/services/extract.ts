// Extraction as a service both surfaces share: validate the URL, answer from the extract cache or
// run the registry with an overall deadline and the client's abort signal, record the sources (a
// cached answer records them again, so they stay downloadable), count the outcome.
import {
  parseContentUrl,
  ReelayError,
  type Collection,
  type CollectionEntry,
  type ExtractResult,
} from '@reelay/contracts';
import type { Egress } from '@reelay/egress';
import type { Extraction, ExtractorRegistry, PageRef } from '@reelay/extractors';
import type { Logger } from '@reelay/observability';
import type { SourceRegistry } from '@reelay/sources';
import type { GatewayMetrics } from '../metrics.js';
import { CursorSigner } from './collection-cursor.js';
import type { ExtractCache } from './extract-cache.js';

export interface ExtractServiceDeps {
  registry: ExtractorRegistry;
  egress: Egress;
  sources: SourceRegistry;
  metrics: GatewayMetrics;
  logger: Logger;
  endpoints: Record<string, string>;
  /** MAX_SEGMENTS: a manifest naming more segments a playlist is refused. */
  maxSegments?: number;
  /** Whole-extraction deadline; several fetches (page, manifests, APIs) share it. */
  timeoutMs?: number;
  /** EXTRACT_CACHE_SECONDS' cache and single flight; without it every extract fetches. */
  cache?: ExtractCache;
  /** Signs and checks collection cursors (COLLECTION_CURSOR_SECRET); default: a key of this process. */
  cursors?: CursorSigner;
  /** MAX_COLLECTION_ENTRIES: most entries a collection lists across its pages. */
  maxEntries?: number;
}

/** One page of a collection, for the steps that download or watch it (listCollection). */
export interface CollectionPage {
  url: string;
  platform: string;
  title: string;
  collection: Collection;
  entries: CollectionEntry[];
  /** The extraction the page's files (a feed's enclosures) were recorded under. */
  extraction_id: string;
}

export interface ExtractAnswer {
  result: ExtractResult;
  /** Seconds since the result was fetched, when this request did not fetch it (the Age header). */
  age?: number;
}

export class ExtractService {
  private readonly cursors: CursorSigner;

  constructor(private readonly deps: ExtractServiceDeps) {
    this.cursors = deps.cursors ?? new CursorSigner();
  }

  /**
   * A page of a collection: the first without `cursor`, else the page `cursor` (a next_cursor of the
   * same URL) names; undefined when the URL is not a collection. For collection downloads and
   * subscriptions: follow `collection.next_cursor` until it is absent.
   */
  async listCollection(
    rawUrl: string,
    cursor?: string,
    signal?: AbortSignal,
    options: { fresh?: boolean } = {},
  ): Promise<CollectionPage | undefined> {
    const { result } = await this.extract(rawUrl, signal, { cursor, fresh: options.fresh });
    if (result.content_type !== 'collection' || !result.collection || !result.entries) return undefined;
    return {
      url: result.url,
      platform: result.platform,
      title: result.title,
      collection: result.collection,
      entries: result.entries,
      extraction_id: result.extraction_id!,
    };
  }

  /**
   * `fresh`: the client sent Cache-Control: no-cache, so the origin is asked again. `cursor`: a
   * collection's next page (checked against this URL before anything is fetched).
   */
  async extract(
    rawUrl: string,
    clientSignal?: AbortSignal,
    options: { fresh?: boolean; cursor?: string } = {},
  ): Promise<ExtractAnswer> {
    const url = parseContentUrl(rawUrl);
    const page = options.cursor === undefined ? undefined : this.cursors.verify(url.href, options.cursor);
    const { registry, sources, metrics, cache } = this.deps;
    const platform = registry.platformOf(url);
    const started = process.hrtime.bigint();
    let outcome = 'success';
    try {
      const fetch = () => this.fetch(url, clientSignal, page);
      // A collection's later page is cached apart from its first.
      const key = page ? `${url.href}\n${JSON.stringify(page)}` : url.href;
      const served = cache
        ? await cache.serve(key, fetch, { fresh: options.fresh, signal: clientSignal })
        : { extraction: await fetch(), outcome: 'off' as const, age: undefined };
      metrics.extractCache.inc({ outcome: served.outcome });
      const { result, records, subtitles, next } = served.extraction;
      // Every answer, cached or not, records its sources under an extraction of its own.
      const extractionId = await sources.record(result.platform, records, subtitles);
      const answer: ExtractResult = { ...result, extraction_id: extractionId };
      if (next && answer.collection)
        answer.collection = { ...answer.collection, next_cursor: this.cursors.sign(url.href, next) };
      return { result: answer, age: served.age };
    } catch (err) {
      outcome = err instanceof ReelayError ? err.code : 'internal_error';
      throw err;
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.extracts.inc({ platform, outcome });
      metrics.extractDuration.observe({ platform, outcome }, seconds);
    }
  }

  /** One run of the registry against the origin, within the extraction deadline. */
  private async fetch(url: URL, clientSignal?: AbortSignal, page?: PageRef): Promise<Extraction> {
    const { registry, egress, logger } = this.deps;
    const controller = new AbortController();
    const onClientAbort = () => controller.abort(clientSignal?.reason);
    clientSignal?.addEventListener('abort', onClientAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new ReelayError('upstream_timeout', 'Extraction took too long; the origin is too slow.'));
      }, this.deps.timeoutMs ?? 30_000);
    });
    try {
      return await Promise.race([
        registry.extract(url, {
          egress,
          endpoints: this.deps.endpoints,
          maxSegments: this.deps.maxSegments,
          maxEntries: this.deps.maxEntries,
          page,
          signal: controller.signal,
          log: (msg, fields) => logger.debug({ ...fields, url: url.href }, msg),
        }),
        deadline,
      ]);
    } finally {
      clearTimeout(timer);
      clientSignal?.removeEventListener('abort', onClientAbort);
    }
  }
}

/** An AbortSignal that fires when the client goes away before the response is finished. */
export function clientGone(req: import('express').Request, res: import('express').Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new Error('client closed the connection'));
  });
  req.once('aborted', () => controller.abort(new Error('client aborted')));
  return controller.signal;
}

/** Cache-Control: no-cache (or Pragma: no-cache, HTTP/1.0's spelling) asks for a fresh extract. */
export function wantsFresh(req: import('express').Request): boolean {
  const directives = `${req.get('cache-control') ?? ''},${req.get('pragma') ?? ''}`
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  return directives.includes('no-cache');
}

/** Writes the Age header when the answer came from the cache or another request's fetch. */
export function sendExtract(res: import('express').Response, answer: ExtractAnswer): void {
  if (answer.age !== undefined) res.setHeader('Age', String(answer.age));
  res.json({ success: true, data: answer.result });
}
