// Subtitles (issue 18): the tracks an extract lists per media item, what the source registry keeps
// of them so a download can fetch or embed them, and the languages a download may ask to embed.
import { z } from 'zod';

/** How a track is delivered: a sidecar file (vtt, srt, ttml) or a segmented HLS/DASH track. */
export const SubtitleFormatSchema = z.enum(['vtt', 'srt', 'ttml', 'hls', 'dash']);
export type SubtitleFormat = z.infer<typeof SubtitleFormatSchema>;

/** What a subtitle download may be converted to (and the formats a subtitle artifact has). */
export const SubtitleOutputSchema = z.enum(['vtt', 'srt']);
export type SubtitleOutput = z.infer<typeof SubtitleOutputSchema>;

/**
 * A language as sites and yt-dlp name tracks: BCP 47 tags (`en`, `pt-BR`, `zh-Hans`) and yt-dlp's
 * keys (`en-nP7-2PuUl7o`, `live_chat`). Short and plain, so it is safe in logs, keys and ffmpeg tags.
 */
export const LanguageSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,34}$/, 'a language is 1-35 letters, digits, "-" or "_"');

/** Tracks listed per media item, at most: yt-dlp lists ~150 machine translations for some videos. */
export const MAX_ITEM_SUBTITLES = 100;
/** Languages one download may embed, at most. */
export const MAX_EMBEDDED_SUBTITLES = 8;

export const SubtitleSchema = z
  .object({
    language: LanguageSchema.describe('The track language (`und` when the origin names none)'),
    label: z.string().optional().describe('The name the origin gives the track'),
    url: z.string().describe('URL to pass to download, like a source url'),
    format: SubtitleFormatSchema,
    auto_generated: z.boolean().optional().describe('Machine-made captions'),
  })
  .meta({ id: 'Subtitle' });
export type Subtitle = z.infer<typeof SubtitleSchema>;

/** The `subtitles` field of a download request: languages of the item to embed. */
export const SubtitleLanguagesSchema = z
  .array(LanguageSchema)
  .min(1)
  .max(MAX_EMBEDDED_SUBTITLES)
  .refine((langs) => new Set(langs).size === langs.length, 'each language once')
  .describe(
    `Languages of the item's subtitles to embed (at most ${MAX_EMBEDDED_SUBTITLES}, each once): mov_text in mp4, WebVTT in mkv and webm`,
  )
  .meta({ uniqueItems: true });

/** What the registry keeps of a subtitle track, by its URL and in its item's list. */
export const SubtitleRecordSchema = z.object({
  kind: z.literal('subtitle'),
  url: z.string(),
  language: LanguageSchema,
  label: z.string().optional(),
  format: SubtitleFormatSchema,
  auto_generated: z.boolean().optional(),
  /** A segmented DASH track: its codecs (wvtt, stpp). */
  codecs: z.string().optional(),
  media_index: z.number().int().nonnegative(),
  title: z.string(),
  headers: z.record(z.string(), z.string()).optional(),
});
export type SubtitleRecord = z.infer<typeof SubtitleRecordSchema>;

export const StoredSubtitleSchema = SubtitleRecordSchema.extend({
  item_key: z.string(),
  platform: z.string(),
  recorded_at: z.number(),
});
export type StoredSubtitle = z.infer<typeof StoredSubtitleSchema>;

/** A subtitle track a job reads: alone (a subtitle download) or embedded beside the media. */
export const SubtitleInputSchema = z.object({
  url: z.string().url(),
  format: SubtitleFormatSchema.exclude(['ttml']),
  language: LanguageSchema,
  label: z.string().max(200).optional(),
  /** For a DASH track: the representation to take from the manifest. */
  representation: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
});
export type SubtitleInput = z.infer<typeof SubtitleInputSchema>;
