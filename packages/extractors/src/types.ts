// What every extractor shares: its context (the guarded client, configuration), the draft shapes it
// fills, and the two kinds of extractor the registry knows.
import type {
  CollectionKind,
  ContentType,
  ExtractResult,
  MediaType,
  Source,
  SourceRecord,
  Subtitle,
  SubtitleRecord,
} from '@reelay/contracts';
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
  /** The page of a collection a cursor asks for (absent: the first page). */
  page?: PageRef;
  /** MAX_COLLECTION_ENTRIES: most entries a collection lists across its pages (default 200). */
  maxEntries?: number;
}

/**
 * Where the next page of a collection starts: what a cursor carries, signed by the gateway. `state` is
 * the extractor's own (an API's page token, an offset, a feed's next page URL), opaque to the rest.
 */
export interface PageRef {
  /** The name of the extractor that listed the collection: only it reads `state`. */
  extractor: string;
  state: string;
  /** Entries listed on the pages before this one (the next entry's index is this + 1). */
  index: number;
  /** Pages listed before this one. */
  page: number;
}

/** One entry of a collection before result assembly. */
export interface EntryDraft {
  url: string;
  title?: string;
  duration?: number;
  thumbnail?: string;
  /** As MediaDraft's: result assembly keeps the day. */
  upload_date?: string | number;
  id?: string;
  /** Files the collection itself names for the entry (a podcast feed's enclosures). */
  media?: MediaDraft[];
}

/** A collection page: at most COLLECTION_PAGE_SIZE entries, and the state its next page starts from. */
export interface CollectionDraft {
  kind: CollectionKind;
  entries: EntryDraft[];
  entry_count?: number;
  /** The extractor's state for the next page; absent on the last. */
  next?: string;
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
  /** A playlist, channel, feed or profile: `media` is then empty and the entries are listed here. */
  collection?: CollectionDraft;
}

export type { SourceRecord, SubtitleRecord };

export interface Extraction {
  result: ExtractResult;
  /** One record per source of the result, in result order. */
  records: SourceRecord[];
  /** One record per subtitle track of the result. */
  subtitles: SubtitleRecord[];
  /** A collection with more pages: where the next starts (the gateway signs it into next_cursor). */
  next?: PageRef;
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
  /** A collection's later page (`ctx.page`, listed by this extractor), fetched from `url` again. */
  resume?(url: URL, ctx: ExtractContext & { page: PageRef }): Promise<ResultDraft>;
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
