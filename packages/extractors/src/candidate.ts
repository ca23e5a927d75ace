// What each page method (JSON-LD, HTML5, Twitter card, OpenGraph) hands to the merger: candidate
// media items in one shape, and the one rule for whether a URL found on a page is media at all —
// its scheme, its extension and its declared MIME type.
import type { ManifestKind, MediaType } from '@reelay/contracts';
import type { SubtitleDraft } from './types.js';
import { urlExtension } from './document.js';
import { manifestKind } from './manifest.js';
import { parseTypeAttr } from './labels.js';
import { extOfMime, kindOfMime, mimeOfExt } from './media-types.js';

export type PageMethod = 'json_ld' | 'html5' | 'twitter_card' | 'opengraph';

export interface FoundSource {
  url: string;
  kind: MediaType;
  /** Set when the URL is an HLS or DASH manifest, to be expanded into its variants. */
  manifest?: ManifestKind;
  mime?: string;
  ext?: string;
  codecs?: string;
  width?: number;
  height?: number;
  bitrate?: number;
  size?: number;
}

export interface Candidate {
  method: PageMethod;
  type: MediaType;
  sources: FoundSource[];
  thumbnail?: string;
  duration?: number;
  title?: string;
  author?: string;
  /** As the page wrote it (an ISO date or date-time): result.ts keeps the day. */
  upload_date?: string;
  description?: string;
  /** Subtitle tracks the page names for this item (HTML5 <track>). */
  subtitles?: SubtitleDraft[];
}

// Players, scripts, pages and subtitle files that sites put where media belongs (yt-dlp's
// filter_video drops the same kinds).
const NOT_MEDIA_EXT = new Set([
  'swf',
  'js',
  'css',
  'html',
  'htm',
  'xhtml',
  'xml',
  'json',
  'srt',
  'vtt',
  'ttml',
  'sbv',
  'sub',
  'txt',
  'svg',
]);

// Declared types that name a player or an embed rather than a file.
const NOT_MEDIA_MIME =
  /^(?:text\/|application\/(?:x-shockwave-flash|javascript|json|xhtml)|video\/(?:youtube|vimeo|x-youtube))/;

/** An absolute http(s) URL, or undefined for empty values, data:, blob:, javascript: and garbage. */
export function resolveUrl(raw: string | undefined, base: URL): string | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  try {
    const url = new URL(value, base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined; // not a URL at all: nothing to extract from this attribute
  }
}

export interface SourceHints {
  /** A type attribute or declared type, possibly with a codecs parameter. */
  type?: string;
  /** What the surrounding markup says the media is (a <video>, an og:audio, an ImageObject). */
  declared?: MediaType;
  /** Accept the URL only when its MIME type or extension shows it is media (og:video is often a player page). */
  strict?: boolean;
  codecs?: string;
  width?: number;
  height?: number;
  bitrate?: number;
  size?: number;
}

/** A media source for a URL found on the page, or undefined when the URL is not media. */
export function findSource(raw: string | undefined, base: URL, hints: SourceHints = {}): FoundSource | undefined {
  const url = resolveUrl(raw, base);
  if (!url) return undefined;
  const ext = urlExtension(url);
  if (NOT_MEDIA_EXT.has(ext)) return undefined;
  const typed = parseTypeAttr(hints.type);
  let mime = typed.mime && typed.mime !== 'application/octet-stream' ? typed.mime : undefined;
  if (mime && NOT_MEDIA_MIME.test(mime)) return undefined;
  const manifest = manifestKind(url, mime);
  if (manifest && hints.declared === 'image') return undefined;
  const extMime = mimeOfExt(ext);
  if (hints.strict && !manifest && !kindOfMime(mime) && !extMime) return undefined;
  const kind = manifest ? (hints.declared ?? 'video') : (kindOfMime(mime) ?? hints.declared ?? kindOfMime(extMime));
  if (!kind) return undefined;
  // A picture where a video was announced (or the reverse) is a thumbnail or a mistake, not the media.
  if (hints.declared && (kind === 'image') !== (hints.declared === 'image')) return undefined;
  if (!manifest) mime ??= extMime;
  const source: FoundSource = { url, kind };
  if (manifest) source.manifest = manifest;
  if (mime && !manifest) source.mime = mime;
  const knownExt = (mime && extOfMime(mime)) || (extMime ? ext : undefined);
  if (knownExt && !manifest) source.ext = knownExt;
  const codecs = typed.codecs ?? hints.codecs;
  if (codecs) source.codecs = codecs;
  for (const key of ['width', 'height', 'bitrate', 'size'] as const) {
    const value = hints[key];
    if (value !== undefined && Number.isFinite(value) && value > 0) source[key] = Math.round(value);
  }
  return source;
}

/** Adds a source to a list unless its URL is already there (then fills the fields it lacked). */
export function addSource(list: FoundSource[], source: FoundSource): void {
  const existing = list.find((s) => s.url === source.url);
  if (!existing) list.push({ ...source });
  else
    for (const [key, value] of Object.entries(source)) (existing as unknown as Record<string, unknown>)[key] ??= value;
}
