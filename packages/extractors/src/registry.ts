// The extractor registry: a list. Platform extractors are asked first, by URL shape; otherwise the
// URL is fetched once and the generic extractors are tried in order on what came back. Nothing
// else in reelay switches on platform names.
//
// A platform that runs on any host (Mastodon, PeerTube) can only claim a URL by its path, and only
// its API's answer tells whether the host really is one of its servers. Such an extractor throws
// NotMyUrl when the answer says no; the registry then goes on as if matches() had been false: the
// next platform that matches, and finally the generic path. Every other error is the answer.
//
// An optional fallback (yt-dlp) stands behind all of them: it takes the URLs it claims first, and
// the URLs nothing else could read (the generic path ended in no_media_found, or found only pictures
// on a page whose player is drawn by a script).
import { ReelayError } from '@reelay/contracts';
import { fetchDocument } from './document.js';
import { isNothingFound, markNothingFound, nothingFound } from './no-media.js';
import { buildCollection } from './collection.js';
import { buildResult } from './result.js';
import type {
  DocumentExtractor,
  ExtractContext,
  Extraction,
  FallbackExtractor,
  PageRef,
  ResultDraft,
  UrlExtractor,
} from './types.js';

/**
 * Thrown by a platform extractor that claimed a URL by its shape but found, on asking the host, that
 * the host is not its platform (e.g. `/api/v1/statuses/{id}` answered with an HTML page, not
 * Mastodon's JSON). Not a failure: the registry tries the next extractor.
 */
export class NotMyUrl extends Error {
  constructor(
    readonly extractor: string,
    reason: string,
  ) {
    super(`${extractor} does not handle this URL: ${reason}`);
    this.name = 'NotMyUrl';
  }
}

export class ExtractorRegistry {
  constructor(
    readonly platforms: readonly UrlExtractor[],
    readonly generic: readonly DocumentExtractor[],
    readonly fallback?: FallbackExtractor,
  ) {}

  /** The platform extractor that claims this URL, if any. */
  find(url: URL): UrlExtractor | undefined {
    return this.platforms.find((p) => p.matches(url));
  }

  /**
   * The platform name a URL will be reported under (for metrics, even when extraction fails). It is
   * decided before anything is fetched, so a URL an any-host platform later declines still counts
   * under that platform.
   */
  platformOf(url: URL): string {
    if (this.fallback?.claims(url)) return this.fallback.name;
    return this.find(url)?.platform ?? 'generic';
  }

  async extract(url: URL, ctx: ExtractContext): Promise<Extraction> {
    if (ctx.page) return this.resume(url, { ...ctx, page: ctx.page });
    const fallback = this.fallback;
    if (fallback?.claims(url)) return finish(await fallback.extract(url, ctx), fallback.name, ctx);
    for (const platform of this.platforms) {
      if (!platform.matches(url)) continue;
      try {
        return finish(await platform.extract(url, { ...ctx, platform: platform.platform }), platform.name, ctx);
      } catch (err) {
        if (!(err instanceof NotMyUrl)) throw err;
        ctx.log?.('platform extractor declined the URL', { extractor: platform.name, reason: err.message });
      }
    }

    ctx.egress.assertUrlAllowed(url);
    const leftovers = fallback?.takesLeftovers ? fallback : undefined;
    const generic = await this.readGeneric(url, ctx, leftovers);
    if (generic.extraction && !generic.scripted) return generic.extraction;
    if (!leftovers) throw generic.failure();
    ctx.log?.(
      generic.extraction
        ? 'only pictures on a page drawn by a script; asking the fallback'
        : 'the generic extractors found no media; asking the fallback',
      { extractor: leftovers.name },
    );
    try {
      const extraction = finish(await leftovers.extract(url, ctx), leftovers.name, ctx);
      if (extraction.result.content_type === 'collection') return extraction;
      // A fallback that offers the fetched document itself as the media (yt-dlp's "could be a direct
      // link" guess) says nothing new: the generic path read those bytes and found no media in them.
      const sources = extraction.result.media.flatMap((m) => m.sources);
      if (sources.every((s) => generic.fetched.includes(s.url))) throw markNothingFound(generic.failure());
      return extraction;
    } catch (err) {
      // Pictures are still an answer; only a bug is worth failing the request for.
      if (generic.extraction && err instanceof ReelayError) {
        ctx.log?.('the fallback found nothing more on a scripted page', { extractor: leftovers.name, code: err.code });
        return generic.extraction;
      }
      if (!isNothingFound(err)) throw err;
      // Both came up empty: say everywhere that was looked, unless the generic path knew better (DRM…).
      const failure = generic.failure();
      throw isNothingFound(failure) ? nothingFound([leftovers.label]) : failure;
    }
  }

  /**
   * A later page of a collection: only the extractor that listed the first page reads its state. A
   * page reference naming no extractor here (another version's) is a stale cursor.
   */
  private async resume(url: URL, ctx: ExtractContext & { page: PageRef }): Promise<Extraction> {
    const name = ctx.page.extractor;
    if (this.fallback?.name === name) return finish(await this.fallback.extract(url, ctx), name, ctx);
    const platform = this.platforms.find((p) => p.name === name);
    if (platform) return finish(await platform.extract(url, { ...ctx, platform: platform.platform }), name, ctx);
    const generic = this.generic.find((g) => g.name === name);
    if (generic?.resume) {
      ctx.egress.assertUrlAllowed(url);
      return finish(await generic.resume(url, ctx), name, ctx);
    }
    throw new ReelayError(
      'invalid_request',
      'The cursor is not valid for this URL (it names a listing this service no longer has); start again without it.',
    );
  }

  /** Lets the fallback release what it holds (yt-dlp's proxy). */
  async close(): Promise<void> {
    await this.fallback?.close?.();
  }

  /**
   * The generic path. `extraction` is what it found, unless it found nothing (`failure()`, always
   * no_media_found; other errors are thrown); `scripted` when it found only pictures and the fallback
   * wants the page; `fetched` the URLs of the document it read (as submitted and after redirects).
   */
  private async readGeneric(
    url: URL,
    ctx: ExtractContext,
    leftovers: FallbackExtractor | undefined,
  ): Promise<GenericOutcome> {
    const doc = await fetchDocument(ctx.egress, url, ctx.signal);
    const fetched = [url.href, doc.finalUrl.href];
    // Built only when nothing is found: an error's stack trace costs time on every successful extract.
    let failure: ReelayError | undefined;
    try {
      for (const extractor of this.generic) {
        if (!extractor.detect(doc)) continue;
        try {
          const extraction = finish(await extractor.extract(doc, ctx), extractor.name, ctx);
          const onlyPictures =
            extraction.result.media.length > 0 && extraction.result.media.every((m) => m.type === 'image');
          const scripted = onlyPictures && leftovers?.wantsPage !== undefined && (await leftovers.wantsPage(doc));
          return { extraction, scripted, fetched, failure: () => nothingFound() };
        } catch (err) {
          if (!(err instanceof ReelayError) || err.code !== 'no_media_found') throw err;
          failure = err;
          break;
        }
      }
    } finally {
      doc.close();
    }
    const found = failure;
    return { scripted: false, fetched, failure: () => found ?? nothingFound() };
  }
}

interface GenericOutcome {
  extraction?: Extraction;
  scripted: boolean;
  fetched: string[];
  failure: () => ReelayError;
}

/** A draft as an Extraction: a collection page, or media. */
function finish(draft: ResultDraft, extractor: string, ctx: ExtractContext): Extraction {
  return draft.collection ? buildCollection(draft, extractor, ctx) : buildResult(draft, ctx.egress);
}
