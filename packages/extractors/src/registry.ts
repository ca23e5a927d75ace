// The extractor registry: a list. Platform extractors are asked first, by URL shape; otherwise the
// URL is fetched once and the generic extractors are tried in order on what came back. Nothing
// else in reelay switches on platform names.
import { ReelayError } from '@reelay/contracts';
import { fetchDocument } from './document.js';
import { buildResult } from './result.js';
import type { DocumentExtractor, ExtractContext, Extraction, UrlExtractor } from './types.js';

export class ExtractorRegistry {
  constructor(
    readonly platforms: readonly UrlExtractor[],
    readonly generic: readonly DocumentExtractor[],
  ) {}

  /** The platform extractor that claims this URL, if any. */
  find(url: URL): UrlExtractor | undefined {
    return this.platforms.find((p) => p.matches(url));
  }

  /** The platform name a URL will be reported under (for metrics, even when extraction fails). */
  platformOf(url: URL): string {
    return this.find(url)?.platform ?? 'generic';
  }

  async extract(url: URL, ctx: ExtractContext): Promise<Extraction> {
    const platform = this.find(url);
    if (platform) return buildResult(await platform.extract(url, ctx));

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
