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

export const ContentTypeSchema = z.enum(['video', 'audio', 'image', 'gallery']);
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
    is_live: z.boolean().optional().describe('true for a live stream that has not ended (an HLS playlist without EXT-X-ENDLIST, a dynamic DASH manifest, yt-dlp\'s is_live); absent otherwise'),
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
    is_live: z.boolean().optional().describe('true when the item is a live stream: then it has no duration, and its sources are live too'),
    title: z.string().optional(),
    author: z.string().optional().describe('The author, channel or uploader, when the page or platform names one'),
    upload_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional().describe('YYYY-MM-DD'),
    description: z.string().optional(),
    // Subtitles (issue 18).
    subtitles: z.array(SubtitleSchema).max(MAX_ITEM_SUBTITLES).optional().describe('Subtitle tracks, each downloadable by its url'),
  })
  .meta({ id: 'MediaItem' });
export type MediaItem = z.infer<typeof MediaItemSchema>;

export const ExtractResultSchema = z
  .object({
    url: z.string(),
    platform: z.string().regex(/^[a-z0-9_]+$/),
    extract_profile: z.string(),
    content_type: ContentTypeSchema,
    title: z.string(),
    media: z.array(MediaItemSchema).min(1),
    extraction_id: z
      .string()
      .optional()
      .describe("This extraction's id (on every gateway answer): pass it to download to get this page's title and headers for a URL other pages name too"),
  })
  .meta({ id: 'ExtractResult' });
export type ExtractResult = z.infer<typeof ExtractResultSchema>;

export const ExtractRequestSchema = z
  .object({
    url: httpUrlSchema().describe(
      `Absolute http(s) URL of public content, 1 to ${MAX_URL_LENGTH} characters, without credentials; port 0 and a host that does not parse are refused too (invalid_url)`,
    ),
  })
  .meta({ id: 'ExtractRequest' });
export type ExtractRequest = z.infer<typeof ExtractRequestSchema>;

export const ExtractEnvelopeSchema = z
  .object({ success: z.literal(true), data: ExtractResultSchema })
  .meta({ id: 'ExtractEnvelope' });

/** The BullMQ queue download jobs go through. */
export const DOWNLOAD_QUEUE = 'downloads';
