// Expanding a manifest URL found elsewhere (a page's og:video, a <source>, a JSON-LD contentUrl)
// into its variants, with the same parsers the manifest extractors use.
import { ReelayError, type ManifestKind } from '@reelay/contracts';
import { isMaster, looksLikeHls, looksLikeMpd } from '@reelay/manifests';
import { urlExtension } from './document.js';
import { parseHls } from './hls.js';
import { judgeMaster } from './hls-live.js';
import { parseMpd } from './dash.js';
import { DASH_TYPES, HLS_TYPES } from './media-types.js';
import type { ExtractContext, MediaDraft } from './types.js';

/** Whether a URL (with an optional declared MIME type) names an HLS or DASH manifest. */
export function manifestKind(url: string, mime?: string): ManifestKind | undefined {
  const type = mime?.split(';')[0].trim().toLowerCase();
  if (type && HLS_TYPES.has(type)) return 'hls';
  if (type && DASH_TYPES.has(type)) return 'dash';
  const ext = urlExtension(url);
  if (ext === 'm3u8') return 'hls';
  if (ext === 'mpd') return 'dash';
  return undefined;
}

/**
 * Fetches a manifest through the egress guard and returns its media items. `headers` are sent with
 * the fetch and recorded on every source (e.g. the page as Referer).
 */
export async function expandManifest(
  url: string,
  ctx: ExtractContext,
  headers?: Record<string, string>,
): Promise<MediaDraft[]> {
  const res = await ctx.egress.fetchText(url, { headers, signal: ctx.signal });
  const finalUrl = new URL(res.url);
  const options = { headers, maxSegments: ctx.maxSegments, fetchedAs: new URL(url) };
  if (looksLikeHls(res.text)) {
    const media = parseHls(res.text, finalUrl, options);
    return isMaster(res.text) ? judgeMaster(media, ctx) : media;
  }
  if (looksLikeMpd(res.text)) return parseMpd(res.text, finalUrl, options);
  throw new ReelayError('upstream_error', 'The linked manifest is neither HLS nor DASH.');
}
