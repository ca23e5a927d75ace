// What the source registry keeps about every source an extract returned, so that download can
// refuse URLs no extract returned and knows how to fetch the ones it did (headers, profile, item).
import { z } from 'zod';
import { MediaTypeSchema, StreamProfileSchema } from './extract.js';

export const SourceRecordSchema = z.object({
  url: z.string(),
  stream_profile: StreamProfileSchema,
  media_index: z.number().int().nonnegative(),
  media_type: MediaTypeSchema,
  title: z.string(),
  headers: z.record(z.string(), z.string()).optional(),
  mime_type: z.string().optional(),
  ext: z.string().optional(),
  codecs: z.string().optional(),
  has_audio: z.boolean().optional(),
  has_video: z.boolean().optional(),
  size: z.number().optional(),
  duration: z.number().optional(),
  /** A live stream: download refuses it until live recording exists. */
  is_live: z.boolean().optional(),
  // What a job's tags and cover art come from (DESIGN.md "Tags").
  page_url: z.string().optional(),
  thumbnail: z.string().optional(),
  author: z.string().optional(),
  upload_date: z.string().optional(),
});
export type SourceRecord = z.infer<typeof SourceRecordSchema>;

/** A record as stored: which extraction (and so which media item) it came from. */
export const StoredSourceSchema = SourceRecordSchema.extend({
  /** `{extraction id}:{media index}` — two sources form a merge pair only if this matches. */
  item_key: z.string(),
  platform: z.string(),
  recorded_at: z.number(),
});
export type StoredSource = z.infer<typeof StoredSourceSchema>;
