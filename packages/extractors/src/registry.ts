// The extractor registry: a list. Platform extractors are asked first, by URL shape; otherwise the
// URL is fetched once and the generic extractors are tried in order on what came back. Nothing
// else in reelay switches on platform names.
//
// A platform that runs on any host (Mastodon, PeerTube) can only claim a URL by its path, and only
// its API's answer tells whether the host really is one of its servers. Such an extractor throws
// NotMyUrl when the answer says no; the registry then goes on as if matches() had been false: the
// next platform that matches, and finally the generic path. Every other error is the answer.
import { ReelayError } from '@reelay/contracts';
import { fetchDocument } from './document.js';
import { buildResult } from './result.js';
import type { DocumentExtractor, ExtractContext, Extraction, UrlExtractor } from './types.js';

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
    return this.find(url)?.platform ?? 'generic';
  }

  async extract(url: URL, ctx: ExtractContext): Promise<Extraction> {
    for (const platform of this.platforms) {
      if (!platform.matches(url)) continue;
      try {
        return buildResult(await platform.extract(url, ctx));
      } catch (err) {
        if (!(err instanceof NotMyUrl)) throw err;
        ctx.log?.('platform extractor declined the URL', { extractor: platform.name, reason: err.message });
      }
    }

    ctx.egress.assertUrlAllowed(url);
    const doc = await fetchDocument(ctx.egress, url, ctx.signal);
    try {
      for (const extractor of this.generic) {
        if (extractor.detect(doc)) return buildResult(await extractor.extract(doc, ctx));
      }
    } finally {
      doc.close();
    }
    throw new ReelayError('no_media_found', 'The URL was fetched but holds no media reelay can read.');
  }
}
