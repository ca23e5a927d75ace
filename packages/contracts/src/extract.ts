// The extract result of spec §2.1 with DESIGN.md's extra fields. Extractors return this shape and
// the gateway serialises it unchanged, so this file is the whole contract of POST /api/v1/extract.
import { z } from 'zod';
import { httpUrlSchema, MAX_URL_LENGTH } from './http-url.js';
import { MAX_ITEM_SUBTITLES, SubtitleSchema } from './subtitles.js';

export { MAX_URL_LENGTH };

export const StreamProfileSchema = z.enum(['muxed_progressive', 'video_only', 'audio_only', 'image', 'hls', 'dash']);
export type StreamProfile = z.infer<typeof StreamProfileSchema>;
/** The stream profiles that are manifests (a playlist of segments rather than one file). */
export type ManifestKind = Extract<StreamProfile, 'hls' | 'dash'>;

export const MediaTypeSchema = z.enum(['video', 'audio', 'image']);
export type MediaType = z.infer<typeof MediaTypeSchema>;

export const ContentTypeSchema = z.enum(['video', 'audio', 'image', 'gallery', 'collection']);
export type ContentType = z.infer<typeof ContentTypeSchema>;

export const SourceSchema = z
  .object({
    quality: z.string().describe('Quality label: 1080p, 128k, or original when unknown'),
    url: z.string().describe('Exact media URL to pass to download'),
    stream_profile: StreamProfileSchema,
    mime_type: z.string().optional(),
    ext: z.string().optional(),
    width: z.number().int().positive().optional(),
    height: z.number().int().positive().optional(),
    bitrate: z.number().int().positive().optional().describe('Bits per second'),
    codecs: z.string().optional(),
    size: z.number().int().nonnegative().optional().describe('Bytes, when the origin says'),
    has_audio: z.boolean().optional(),
    has_video: z.boolean().optional(),
    fps: z.number().positive().optional(),
    language: z.string().optional(),
    is_live: z
      .boolean()
      .optional()
      .describe(
        "true for a live stream that has not ended (an HLS playlist without EXT-X-ENDLIST, a dynamic DASH manifest, yt-dlp's is_live); absent otherwise",
      ),
  })
  .meta({ id: 'Source' });
export type Source = z.infer<typeof SourceSchema>;

export const MediaItemSchema = z
  .object({
    index: z.number().int().nonnegative(),
    type: MediaTypeSchema,
    sources: z.array(SourceSchema).min(1),
    thumbnail: z.string().optional(),
    duration: z.number().nonnegative().optional().describe('Seconds (never for a live item)'),
    is_live: z
      .boolean()
      .optional()
      .describe('true when the item is a live stream: then it has no duration, and its sources are live too'),
    title: z.string().optional(),
    author: z.string().optional().describe('The author, channel or uploader, when the page or platform names one'),
    upload_date: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/)
      .optional()
      .describe('YYYY-MM-DD'),
    description: z.string().optional(),
    // Subtitles (issue 18).
    subtitles: z
      .array(SubtitleSchema)
      .max(MAX_ITEM_SUBTITLES)
      .optional()
      .describe('Subtitle tracks, each downloadable by its url'),
  })
  .meta({ id: 'MediaItem' });
export type MediaItem = z.infer<typeof MediaItemSchema>;

// Collections (DESIGN.md "Collections: playlists, channels, feeds"): a playlist, channel, feed or
// profile lists entries, a page at a time, each a URL that extract takes again.
/** Most entries one page of a collection lists. */
export const COLLECTION_PAGE_SIZE = 100;
/** Longest cursor extract accepts (a signed page reference, never a person's text). */
export const MAX_CURSOR_LENGTH = 4096;

export const CollectionKindSchema = z.enum(['playlist', 'channel', 'feed', 'profile']);
export type CollectionKind = z.infer<typeof CollectionKindSchema>;

export const CollectionSchema = z
  .object({
    kind: CollectionKindSchema,
    entry_count: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('Entries the whole collection has, when the site says'),
    next_cursor: z
      .string()
      .optional()
      .describe(
        'Opaque: POST /api/v1/extract with the same url and this cursor for the next page; absent on the last page',
      ),
    truncated: z
      .boolean()
      .optional()
      .describe('true when the listing stopped at MAX_COLLECTION_ENTRIES entries while the collection had more'),
  })
  .meta({ id: 'Collection' });
export type Collection = z.infer<typeof CollectionSchema>;

export const CollectionEntrySchema = z
  .object({
    index: z.number().int().positive().describe('Position in the collection, from 1'),
    url: z.string().describe("The entry's own content URL: what extract (and download) take"),
    title: z.string().optional(),
    duration: z.number().nonnegative().optional().describe('Seconds'),
    thumbnail: z.string().optional(),
    upload_date: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/)
      .optional()
      .describe('YYYY-MM-DD'),
    id: z.string().optional().describe("The entry's id on its site, when it has one"),
    media: z
      .array(MediaItemSchema)
      .optional()
      .describe(
        "The files the collection itself names for this entry (a podcast feed's enclosures), downloadable like any extract source",
      ),
  })
  .meta({ id: 'CollectionEntry' });
export type CollectionEntry = z.infer<typeof CollectionEntrySchema>;

export const ExtractResultSchema = z
  .object({
    url: z.string(),
    platform: z.string().regex(/^[a-z0-9_]+$/),
    extract_profile: z.string(),
    content_type: ContentTypeSchema,
    title: z.string(),
    media: z.array(MediaItemSchema).describe('The media items; empty for a collection, whose entries carry their own'),
    // Collections only.
    collection: CollectionSchema.optional(),
    entries: z.array(CollectionEntrySchema).max(COLLECTION_PAGE_SIZE).optional().describe('This page of a collection'),
    extraction_id: z
      .string()
      .optional()
      .describe(
        "This extraction's id (on every gateway answer): pass it to download to get this page's title and headers for a URL other pages name too",
      ),
  })
  .refine(
    (r) =>
      r.content_type === 'collection'
        ? r.collection !== undefined && r.entries !== undefined && r.media.length === 0
        : r.media.length > 0 && r.entries === undefined,
    {
      message: 'a collection has collection and entries and no media; anything else has media',
    },
  )
  .meta({ id: 'ExtractResult' });
export type ExtractResult = z.infer<typeof ExtractResultSchema>;

export const ExtractRequestSchema = z
  .object({
    url: httpUrlSchema().describe(
      `Absolute http(s) URL of public content, 1 to ${MAX_URL_LENGTH} characters, without credentials; port 0 and a host that does not parse are refused too (invalid_url)`,
    ),
    cursor: z
      .string()
      .min(1)
      .max(MAX_CURSOR_LENGTH)
      .optional()
      // A value the server signed: only a next_cursor it issued for this url is taken; any other string
      // of this form is 400 invalid_request. `x-server-issued` and the rule say so to the document's readers.
      .meta({
        'x-server-issued': true,
        'x-rules': [
          {
            rule: 'cursor is a next_cursor an extract of this same url returned, unedited',
            code: 'invalid_request',
            message: 'The cursor is not valid for this URL{advice}',
          },
        ],
      })
      .describe(
        "A collection's next_cursor, with the same url: the next page of its entries. Only a cursor this deployment issued for this url is accepted; an edited or foreign one is 400 invalid_request",
      ),
  })
  .meta({ id: 'ExtractRequest' });
export type ExtractRequest = z.infer<typeof ExtractRequestSchema>;

export const ExtractEnvelopeSchema = z
  .object({ success: z.literal(true), data: ExtractResultSchema })
  .meta({ id: 'ExtractEnvelope' });

/** The BullMQ queue download jobs go through. */
export const DOWNLOAD_QUEUE = 'downloads';
