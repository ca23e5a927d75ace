// What every extractor shares: its context (the guarded client, configuration), the draft shapes it
// fills, and the two kinds of extractor the registry knows.
import type { ContentType, ExtractResult, MediaType, Source, SourceRecord, Subtitle, SubtitleRecord } from '@reelay/contracts';
import type { Egress } from '@reelay/egress';
import type { FetchedDocument } from './document.js';

export interface ExtractContext {
  egress: Egress;
  /** Per-platform API/CDN base URL overrides, keyed `{platform}_{name}` in lower case. */
  endpoints: Record<string, string>;
  signal?: AbortSignal;
  /**
   * The platform whose extractor runs (set by the registry): its API requests pass it to egress,
   * which paces them (per-platform slots, one retry after a short Retry-After).
   */
  platform?: string;
  /** MAX_SEGMENTS: most segments a manifest's playlist or representation may name (default 20,000). */
  maxSegments?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** What the manifest parsers take besides the text: headers for every source, and the segment bound. */
export interface ManifestOptions {
  headers?: Record<string, string>;
  maxSegments?: number;
  /** Other URLs the playlist was fetched as (before redirects): a variant naming one names itself. */
  fetchedAs?: URL;
}

/** A source before result assembly: `quality` may be left for the labeller; headers feed the registry. */
export type SourceDraft = Omit<Source, 'quality'> & {
  quality?: string;
  /** HTTP headers the download of this source must send (Referer, User-Agent...). */
  headers?: Record<string, string>;
};

/** A subtitle track before result assembly; headers and codecs feed the registry. */
export type SubtitleDraft = Subtitle & {
  headers?: Record<string, string>;
  /** A segmented DASH track's codecs (wvtt, stpp). */
  codecs?: string;
};

export interface MediaDraft {
  type: MediaType;
  sources: SourceDraft[];
  subtitles?: SubtitleDraft[];
  thumbnail?: string;
  duration?: number;
  /** A live stream (its duration is then dropped); result.ts marks its sources live too. */
  is_live?: boolean;
  title?: string;
  author?: string;
  /** YYYY-MM-DD, an ISO date-time, YYYYMMDD or Unix seconds: result.ts keeps the day (UTC). */
  upload_date?: string | number;
  description?: string;
}

export interface ResultDraft {
  url: string;
  platform: string;
  extract_profile: string;
  title?: string;
  media: MediaDraft[];
  content_type?: ContentType;
  /** The post's or video's author, date and description, for every item that names none itself. */
  describing?: Pick<MediaDraft, 'author' | 'upload_date' | 'description'>;
}

export type { SourceRecord, SubtitleRecord };

export interface Extraction {
  result: ExtractResult;
  /** One record per source of the result, in result order. */
  records: SourceRecord[];
  /** One record per subtitle track of the result. */
  subtitles: SubtitleRecord[];
}

/** An extractor that claims URLs by their shape (platforms) and fetches what it needs itself. */
export interface UrlExtractor {
  name: string;
  platform: string;
  /** Shown by GET /api/v1/platforms. */
  patterns: readonly RegExp[];
  /** What it extracts, for the platform list (e.g. ['video', 'image', 'gallery']). */
  kinds: readonly string[];
  matches(url: URL): boolean;
  extract(url: URL, ctx: ExtractContext): Promise<ResultDraft>;
}

/** A generic extractor that reads a fetched document (file, manifest or page). */
export interface DocumentExtractor {
  name: string;
  detect(doc: FetchedDocument): boolean;
  extract(doc: FetchedDocument, ctx: ExtractContext): Promise<ResultDraft>;
}

/**
 * A last-resort extractor behind every other (yt-dlp). It takes the URLs it claims (hosts configured
 * for it) before anything else, and, when it takes leftovers, the URLs no platform claims and the
 * generic extractors cannot read.
 */
export interface FallbackExtractor {
  name: string;
  /** What a person calls it ("yt-dlp"), for messages that list where reelay looked. */
  readonly label: string;
  /** Whether it can take what the generic extractors could not read (false when its tool is missing). */
  readonly takesLeftovers: boolean;
  claims(url: URL): boolean;
  /** Whether a page the generic extractors found only pictures in draws its player with a script. */
  wantsPage?(doc: FetchedDocument): Promise<boolean>;
  extract(url: URL, ctx: ExtractContext): Promise<ResultDraft>;
  close?(): Promise<void>;
}
