// Download requests, jobs and the BullMQ payload. The gateway checks the payload when it enqueues
// and the worker when it dequeues, so both sides agree on one schema.
import { z } from 'zod';
import { ErrorCodeSchema } from './errors.js';
import { httpUrlSchema } from './http-url.js';
import { MAX_URL_LENGTH, StreamProfileSchema } from './extract.js';
import {
  WEBHOOK_SECRET_NEEDS_URL,
  WEBHOOK_SECRET_SETTING_RULE,
  WebhookSecretSchema,
  WebhookUrlSchema,
  WebhookViewSchema,
} from './webhooks.js';
import {
  MAX_EMBEDDED_SUBTITLES,
  SubtitleInputSchema,
  SubtitleLanguagesSchema,
  SubtitleOutputSchema,
} from './subtitles.js';
import { QualitySchema } from './choose-source.js';
import { ARCHIVE_NAME_PATTERN, EntrySelectionSchema } from './collection-download.js';
import { dependentRequired } from './stated-rules.js';

/** Formats that hold video (and audio): what a merge or a video conversion writes. */
export const ContainerSchema = z.enum(['mp4', 'webm', 'mkv']);
export type Container = z.infer<typeof ContainerSchema>;
/** Formats that hold audio only. */
export const AudioFormatSchema = z.enum(['mp3', 'm4a', 'opus', 'wav']);
export type AudioFormat = z.infer<typeof AudioFormatSchema>;
/** Every format a download may ask for: the one list the gateway, the worker and ffmpeg's side share. */
export const OutputFormatSchema = z.enum([
  ...ContainerSchema.options,
  ...AudioFormatSchema.options,
  ...SubtitleOutputSchema.options,
]);
export type OutputFormat = z.infer<typeof OutputFormatSchema>;
export const AUDIO_FORMATS: ReadonlySet<OutputFormat> = new Set(AudioFormatSchema.options);
/** Formats of a subtitle download (a subtitle track's url only). */
export const SUBTITLE_FORMATS: ReadonlySet<OutputFormat> = new Set(SubtitleOutputSchema.options);

const mediaUrl = z.string().min(1).max(MAX_URL_LENGTH);

// ---- Clips and tags (DESIGN.md "Clips, tags, cover art and subtitles") ----

/** Longest media a clip may point into: a day. Beyond it a number is a mistake, not a timestamp. */
export const MAX_CLIP_SECONDS = 86_400;
export const ClipModeSchema = z.enum(['fast', 'precise']);
export type ClipMode = z.infer<typeof ClipModeSchema>;

const CLIP_ORDER_MESSAGE = 'clip.end must be after clip.start (by at least a millisecond).';

/** A clip time with its stated bounds, refused as invalid_clip like the clip's other checks. */
function clipSeconds(name: 'start' | 'end') {
  const number =
    name === 'start' ? z.number().min(0, 'clip.start must be 0 or more.') : z.number().gt(0, CLIP_ORDER_MESSAGE);
  return number
    .max(MAX_CLIP_SECONDS, `clip times must be at most ${MAX_CLIP_SECONDS} seconds.`)
    .meta({ 'x-error-code': 'invalid_clip' });
}

/**
 * `fast` copies streams and may start up to one keyframe interval early; `precise` re-encodes so the
 * file starts at `start`. Bad types are invalid_request; numbers out of order or range invalid_clip
 * (the issue's `params.error_code`, read by the gateway's body parser).
 */
export const ClipSchema = z
  .object({
    start: clipSeconds('start').describe(
      `Seconds from the start of the media, 0 to ${MAX_CLIP_SECONDS} (millisecond precision)`,
    ),
    end: clipSeconds('end').describe(
      `Seconds, > start (by a millisecond at least) and at most ${MAX_CLIP_SECONDS}; past the media's end it is cut there`,
    ),
    mode: ClipModeSchema.optional().describe(
      'fast (default): stream copy from the keyframe at or before start; precise: re-encoded, exact',
    ),
  })
  .strict()
  .superRefine((clip, ctx) => {
    const problem = clipProblem(clip.start, clip.end);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, params: { error_code: 'invalid_clip' } });
  })
  .meta({
    id: 'Clip',
    examples: [{ start: 12.5, end: 42 }],
    // JSON Schema cannot compare two numbers of one object: the order of start and end is stated as a rule.
    'x-rules': [
      {
        rule: 'end is after start by a millisecond at least, both rounded to the millisecond',
        code: 'invalid_clip',
        message: CLIP_ORDER_MESSAGE,
      },
    ],
  });
export type Clip = { start: number; end: number; mode: ClipMode };

/** Why a clip's numbers are unusable, after rounding to the millisecond; undefined when they are fine. */
export function clipProblem(start: number, end: number): string | undefined {
  const s = roundMs(start);
  const e = roundMs(end);
  if (start < 0) return 'clip.start must be 0 or more.'; // before rounding: -0.0001 is no time either
  if (e > MAX_CLIP_SECONDS || s > MAX_CLIP_SECONDS) return `clip times must be at most ${MAX_CLIP_SECONDS} seconds.`;
  if (e <= s) return CLIP_ORDER_MESSAGE;
  return undefined;
}

export const roundMs = (seconds: number): number => Math.round(seconds * 1000) / 1000;

/** The tags a job writes (DESIGN.md: title, artist, date, comment), each in its container's convention. */
export const TagsSchema = z.object({
  title: z.string().max(500).optional(),
  artist: z.string().max(500).optional(),
  /** YYYY-MM-DD */
  date: z.string().max(10).optional(),
  /** The page URL. */
  comment: z.string().max(MAX_URL_LENGTH).optional(),
});
export type Tags = z.infer<typeof TagsSchema>;

/** The thumbnail a job fetches (through the egress guard) to embed as cover art. */
export const CoverSchema = z.object({
  url: z.string().url().max(MAX_URL_LENGTH),
  headers: z.record(z.string(), z.string()).optional(),
});
export type Cover = z.infer<typeof CoverSchema>;

/** The highest item index a page_url download may name (a gallery's items are far fewer). */
export const MAX_PAGE_ITEM = 10_000;

// ---- Live recording (DESIGN.md "Live streams, stopping and cancelling") ----

/** The schema's own ceiling for live.duration; the gateway holds it to MAX_RECORD_SECONDS (default 4 h). */
export const MAX_RECORD_SECONDS_CEILING = 7 * 86_400;

export const LiveOptionsSchema = z
  .object({
    duration: z
      .number()
      .int()
      .min(1)
      .max(MAX_RECORD_SECONDS_CEILING)
      .optional()
      .describe(
        'Seconds to record, 1..MAX_RECORD_SECONDS (default: until the stream ends, a stop, or MAX_RECORD_SECONDS)',
      ),
    from_start: z
      .boolean()
      .optional()
      .describe('Start at the oldest segment the playlist still lists instead of the live edge'),
  })
  .strict()
  .meta({ id: 'LiveOptions' });
export type LiveOptions = z.infer<typeof LiveOptionsSchema>;

/** Why a recording ended: the stream's end, a stall, a stop, live.duration, MAX_RECORD_SECONDS, MAX_MEDIA_BYTES, or codecs that changed mid-stream. */
export const RecordingEndSchema = z.enum([
  'stream_end',
  'stalled',
  'stopped',
  'duration',
  'max_duration',
  'max_bytes',
  'codec_change',
]);
export type RecordingEnd = z.infer<typeof RecordingEndSchema>;

export const RecordingGapSchema = z.object({
  at: z.number().nonnegative().describe('Seconds into the recording where media is missing'),
  seconds: z.number().nonnegative().describe('How much media (seconds of the stream) is missing there'),
  track: z
    .enum(['video', 'audio'])
    .optional()
    .describe('A recording of a video and an audio representation (live DASH): the track that lost it'),
});
export type RecordingGap = z.infer<typeof RecordingGapSchema>;
export const RecordingSchema = z
  .object({
    seconds: z.number().nonnegative().describe('Seconds of media recorded so far'),
    bytes: z.number().int().nonnegative().describe('Bytes of media recorded so far'),
    gaps: z
      .array(RecordingGapSchema)
      .max(1000)
      .describe('Stretches lost (segments that failed after retries, a worker that died)'),
  })
  .meta({ id: 'Recording' });
export type Recording = z.infer<typeof RecordingSchema>;

/** A merge pair with an audio or subtitle format (the Merge pair form states its formats). */
export const MERGE_FORMAT_MESSAGE =
  'A merge makes a video: choose mp4, webm or mkv, or download the audio source alone.';

/** The fields that choose among a page's sources: they go with page_url only. */
const PRESET_FIELDS = ['item', 'quality', 'audio_only'];
/** JSON Schema for "none of these fields is present" (a form's `not`). */
const anyOfFields = (fields: string[]) => ({ anyOf: fields.map((f) => ({ required: [f] })) });

export const DownloadRequestSchema = dependentRequired(
  z
    .object({
      url: mediaUrl.optional().describe('A source url from an extract result'),
      video_url: mediaUrl.optional().describe('The video member of a merge pair'),
      audio_url: mediaUrl.optional().describe('The audio member of a merge pair'),
      format: OutputFormatSchema.optional().describe('Convert to this format (a job)'),
      filename: z.string().min(1).max(200).optional().describe('File name without path; sanitised'),
      extraction_id: z
        .string()
        .regex(/^[A-Za-z0-9-]{1,64}$/)
        .optional()
        .describe(
          "The extract answer's extraction_id: the sources as that extract returned them (title, headers); without it, as the latest extract that named the URL did",
        ),
      // Clips and tags
      clip: ClipSchema.optional().describe('Cut the media to [start, end) seconds (always a job)'),
      metadata: z
        .boolean()
        .optional()
        .describe("Write title, artist, date and comment tags (default true); false writes none and drops the inputs'"),
      cover: z.boolean().optional().describe('Embed the thumbnail as cover art in mp3, m4a and opus (default true)'),
      // Subtitles (issue 18).
      subtitles: SubtitleLanguagesSchema.optional(),
      // Webhooks: part of the request's identity, so the same media with another webhook is another job.
      webhook_url: WebhookUrlSchema.optional(),
      webhook_secret: WebhookSecretSchema.optional(),
      // One-step downloads (DESIGN.md "One-step downloads (presets)"): the gateway extracts and chooses.
      page_url: httpUrlSchema()
        .optional()
        .describe(
          'A content page (what extract takes): the gateway extracts it and downloads the source or pair the preset chooses',
        ),
      item: z
        .number()
        .int()
        .min(0)
        .max(MAX_PAGE_ITEM)
        .optional()
        .describe('With page_url: the media item, counted from 0 (default 0)'),
      quality: QualitySchema.optional().describe(
        'With page_url: the best at or below this height (default best; none that low: the lowest)',
      ),
      audio_only: z
        .boolean()
        .optional()
        .describe('With page_url: the best audio-only source, else the audio of the best source that has it'),
      live: LiveOptionsSchema.optional().describe(
        'For a live source (is_live): how to record it (a job with operation record)',
      ),
      // Collection downloads (DESIGN.md "Collections"): a parent job whose children are one-step downloads.
      collection_url: httpUrlSchema()
        .optional()
        .describe(
          'A playlist, channel, profile or feed (what extract answers with content_type collection): each selected entry becomes a child job with this preset',
        ),
      entries: EntrySelectionSchema.optional(),
      bundle: z
        .enum(['zip', 'none'])
        .optional()
        .describe("With a collection: one ZIP of the completed children's files (default), or none"),
      archive: z
        .string()
        .regex(ARCHIVE_NAME_PATTERN, 'archive is 16 to 128 characters of A-Z a-z 0-9 _ -')
        .optional()
        .describe('With a collection: entries completed under this name before are skipped, completed ones are added'),
    })
    .strict(),
  { webhook_secret: { fields: ['webhook_url'], message: WEBHOOK_SECRET_NEEDS_URL } },
)
  .superRefine((body, ctx) => {
    const single = body.url !== undefined;
    const pair = body.video_url !== undefined || body.audio_url !== undefined;
    const page = body.page_url !== undefined;
    const collection = body.collection_url !== undefined;
    if (Number(single) + Number(pair) + Number(page) + Number(collection) !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: 'Give exactly one of url, video_url with audio_url, page_url, or collection_url.',
      });
    } else if (pair && (body.video_url === undefined || body.audio_url === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'A merge pair needs both video_url and audio_url.' });
    }
    for (const field of ['item', 'quality', 'audio_only'] as const) {
      if (body[field] !== undefined && !page && !(collection && field !== 'item'))
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `${field} chooses among a page's sources: it goes with page_url${field === 'item' ? '' : ' or collection_url'}.`,
        });
    }
    for (const field of ['entries', 'bundle', 'archive'] as const) {
      if (body[field] !== undefined && !page && !collection)
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `${field} is for a collection: it goes with collection_url (or page_url of a collection).`,
        });
    }
    if (
      collection &&
      (body.clip !== undefined ||
        body.filename !== undefined ||
        body.extraction_id !== undefined ||
        body.cover !== undefined)
    ) {
      ctx.addIssue({
        code: 'custom',
        message:
          'A collection download takes the preset (quality, audio_only, format, metadata, subtitles), entries, bundle, archive and a webhook; not clip, filename, cover or extraction_id.',
      });
    }
    if (page && body.extraction_id !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['extraction_id'],
        message: 'page_url extracts the page itself: leave extraction_id out.',
      });
    if (
      body.subtitles !== undefined &&
      body.format !== undefined &&
      (AUDIO_FORMATS.has(body.format) || SUBTITLE_FORMATS.has(body.format))
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['subtitles'],
        message: `Subtitles are embedded in a video: choose mp4, webm or mkv, not ${body.format}.`,
      });
    }
    // After the subtitles' rule, so a pair with subtitles and mp3 is told about the subtitles first.
    if (pair && body.format !== undefined && !(ContainerSchema.options as string[]).includes(body.format))
      ctx.addIssue({ code: 'custom', path: ['format'], message: MERGE_FORMAT_MESSAGE });
  })
  // The three forms and the rules between fields, as JSON Schema states them (the superRefine above
  // enforces them: exactly one form is given).
  .meta({
    id: 'DownloadRequest',
    'x-rules': [WEBHOOK_SECRET_SETTING_RULE],
    oneOf: [
      {
        title: 'One source',
        required: ['url'],
        not: anyOfFields([
          'video_url',
          'audio_url',
          'page_url',
          'collection_url',
          'entries',
          'bundle',
          'archive',
          ...PRESET_FIELDS,
        ]),
      },
      {
        title: 'Merge pair',
        required: ['video_url', 'audio_url'],
        properties: { format: { enum: ContainerSchema.options } },
        not: anyOfFields(['url', 'page_url', 'collection_url', 'entries', 'bundle', 'archive', ...PRESET_FIELDS]),
      },
      {
        title: 'One step (page and preset)',
        required: ['page_url'],
        not: anyOfFields(['url', 'video_url', 'audio_url', 'extraction_id', 'collection_url']),
      },
      {
        title: 'Collection (entries and preset)',
        required: ['collection_url'],
        not: anyOfFields([
          'url',
          'video_url',
          'audio_url',
          'page_url',
          'item',
          'extraction_id',
          'clip',
          'filename',
          'cover',
        ]),
      },
    ],
    dependentSchemas: { subtitles: { properties: { format: { enum: ContainerSchema.options } } } },
  });
export type DownloadRequest = z.infer<typeof DownloadRequestSchema>;

export const JobStatusSchema = z.enum(['queued', 'processing', 'completed', 'failed', 'expired', 'cancelled']);
export type JobStatus = z.infer<typeof JobStatusSchema>;
export const JobOperationSchema = z.enum(['merge', 'convert', 'remux', 'record']);
export type JobOperation = z.infer<typeof JobOperationSchema>;

export const JobErrorSchema = z.object({ code: z.string(), message: z.string() });
export type JobError = z.infer<typeof JobErrorSchema>;

export const ArtifactSchema = z
  .object({
    url: z.string(),
    filename: z.string(),
    content_type: z.string(),
    size: z.number().int().nonnegative(),
    expires_at: z.string().describe('ISO 8601'),
  })
  .meta({ id: 'Artifact' });
export type Artifact = z.infer<typeof ArtifactSchema>;

/** What a page_url download chose (DESIGN.md "One-step downloads"): its quality and the source or pair. */
export const ChosenSourceSchema = z
  .object({
    quality: z.string().describe("The chosen video's height (720p) or the audio's label (128k)"),
    url: z.string().max(MAX_URL_LENGTH).optional().describe('The one source chosen'),
    video_url: z.string().max(MAX_URL_LENGTH).optional().describe('The video of the chosen merge pair'),
    audio_url: z.string().max(MAX_URL_LENGTH).optional().describe('The audio of the chosen merge pair'),
    description: z
      .string()
      .max(200)
      .optional()
      .describe(
        "What was chosen, in words: '640x360 video (mp4) + 128k audio (m4a), merged', 'video with audio (mp4)'",
      ),
  })
  .meta({ id: 'ChosenSource' });
export type ChosenSource = z.infer<typeof ChosenSourceSchema>;

/** How a job cut its clip: copied from a keyframe (fast), or precise: smart (only the head re-encoded) or re-encoded whole. */
export const ClipMethodSchema = z.enum(['copy', 'smart', 'reencode']);
export type ClipMethod = z.infer<typeof ClipMethodSchema>;

/** The Job's clip: the request's, with the method once the job has chosen how to cut. */
export const JobClipSchema = z
  .object({
    start: z.number(),
    end: z.number(),
    mode: ClipModeSchema,
    method: ClipMethodSchema.optional().describe(
      'copy (fast), smart (only the stretch from start to the next keyframe re-encoded, the rest copied) or reencode; shown once the job has chosen',
    ),
  })
  .meta({ id: 'JobClip' });

export const JobSchema = z
  .object({
    id: z.string(),
    status: JobStatusSchema,
    operation: z.enum([...JobOperationSchema.options, 'collection']),
    progress: z.number().min(0).max(100),
    created_at: z.string(),
    started_at: z.string().optional(),
    finished_at: z.string().optional(),
    error: JobErrorSchema.optional(),
    artifact: ArtifactSchema.optional(),
    clip: JobClipSchema.optional().describe(
      "The clip the job cuts, as resolved (end cut to the media's end when known)",
    ),
    webhook: WebhookViewSchema.optional().describe(
      'The webhook delivery, when the request named a webhook_url (never its secret)',
    ),
    source: ChosenSourceSchema.optional().describe('What a page_url download chose'),
    recording: RecordingSchema.optional().describe(
      'A recording (operation record): what it has recorded so far, or in all once completed',
    ),
    ended: RecordingEndSchema.optional().describe('A completed recording: why it ended'),
    entries: z
      .object({
        total: z.number().int(),
        queued: z.number().int(),
        running: z.number().int(),
        completed: z.number().int(),
        failed: z.number().int(),
        skipped: z.number().int(),
      })
      .optional()
      .describe('A collection: how many selected entries are in each state (cancelled children count as failed)'),
    partial: z.boolean().optional().describe('A collection that completed while some entries failed'),
    title: z.string().optional().describe("A collection's title"),
  })
  .meta({ id: 'Job' });
export type JobView = z.infer<typeof JobSchema>;

export const WebhookEventTypeSchema = z.enum([
  'job.completed',
  'job.failed',
  'job.cancelled',
  'subscription.item.completed',
  'subscription.item.failed',
]);
export type WebhookEventType = z.infer<typeof WebhookEventTypeSchema>;

/** The body of every webhook delivery (its `data` is the Job as GET /api/v1/jobs/{id} shows it, without `webhook`). */
export const WebhookEventSchema = z
  .object({
    type: WebhookEventTypeSchema,
    timestamp: z.string().describe('ISO 8601: when the job ended and the message was made'),
    data: JobSchema.extend({
      subscription_id: z
        .string()
        .optional()
        .describe('subscription.item.*: the subscription whose entry this job downloaded'),
    }),
  })
  .meta({ id: 'WebhookEvent' });
export type WebhookEvent = z.infer<typeof WebhookEventSchema>;

export const JobEnvelopeSchema = z.object({ success: z.literal(true), data: JobSchema }).meta({ id: 'JobEnvelope' });

/** A job's control token: 32 random bytes (256 bits) in base64url. Only its SHA-256 is stored. */
export const CONTROL_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const JobAcceptedSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      job_id: z.string(),
      status: JobStatusSchema,
      status_url: z.string(),
      control_token: z
        .string()
        .regex(CONTROL_TOKEN_PATTERN)
        .describe(
          "The capability to cancel or stop this job: send it back as `Authorization: Bearer <control_token>` on DELETE /api/v1/jobs/{id} and POST /api/v1/jobs/{id}/stop. Shown only in this answer (each 202 gives a new one, a repeated request too; all stay valid for the job); keep it with the job id. A collection's token also controls its entries' jobs.",
        ),
    }),
  })
  .meta({ id: 'JobAccepted' });

/** Job ids: 16 random bytes in base64url (128 bits), never containing ':' (BullMQ forbids it). */
export const JOB_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;

/** One input of a job, with what the worker needs to fetch it as the extract saw it. */
export const JobInputSchema = z.object({
  url: z.string().url(),
  stream_profile: StreamProfileSchema,
  /** For a DASH source: the representation to take from the manifest. */
  representation: z.string().optional(),
  /** For a DASH source whose id an audio and a video representation share: which of the two to take. */
  representation_type: z.enum(['video', 'audio']).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  codecs: z.string().optional(),
  has_audio: z.boolean().optional(),
  has_video: z.boolean().optional(),
});
export type JobInput = z.infer<typeof JobInputSchema>;

export const JobPayloadSchema = z
  .object({
    id: z.string().regex(JOB_ID_PATTERN),
    operation: JobOperationSchema,
    /** merge/remux pair: [video, audio]; convert/remux of one source: [input]; none for a subtitle download. */
    inputs: z.array(JobInputSchema).max(2),
    /** Subtitle tracks to embed beside the inputs; with no inputs, the one track a subtitle download writes. */
    subtitles: z.array(SubtitleInputSchema).min(1).max(MAX_EMBEDDED_SUBTITLES).optional(),
    /** The requested format, if any; otherwise the worker picks the container from the codecs. */
    format: OutputFormatSchema.optional(),
    /** Sanitised base name for the artifact, without extension. */
    basename: z.string().min(1).max(200),
    /** Seconds, when the extract knew it (for progress). */
    duration: z.number().positive().optional(),
    request_key: z.string(),
    created_at: z.number().int(),
    // Clips and tags. Absent in payloads queued before them: no cut, ffmpeg's default tags, no cover.
    clip: z
      .object({
        start: z.number().min(0).max(MAX_CLIP_SECONDS),
        end: z.number().positive().max(MAX_CLIP_SECONDS),
        mode: ClipModeSchema,
      })
      .refine((c) => c.end > c.start)
      .optional(),
    /** The tags to write, or false to write none and drop the inputs'. */
    tags: z.union([TagsSchema, z.literal(false)]).optional(),
    cover: CoverSchema.optional(),
    /** Where the job's end is announced (the secret lives only in the delivery job: webhooks.ts). */
    webhook_url: z.string().optional(),
    /** What a page_url download chose, shown on the Job. */
    source: ChosenSourceSchema.optional(),
    /** A recording's options (operation record). */
    live: LiveOptionsSchema.optional(),
    /**
     * The one input is a whole file the job keeps in its own format (a collection's or subscription's
     * entry that needs no conversion): the worker fetches it first, in parallel parts, then copies its
     * streams locally (apps/worker/src/whole-file.ts). Absent: ffmpeg reads the input as it goes.
     */
    whole_file: z.literal(true).optional(),
  })
  .refine(
    (p) =>
      p.inputs.length > 0 || (p.subtitles?.length === 1 && p.format !== undefined && SUBTITLE_FORMATS.has(p.format)),
    {
      message: 'A job reads one or two media inputs, or one subtitle track written as vtt or srt.',
    },
  );
export type JobPayload = z.infer<typeof JobPayloadSchema>;

/** What the worker returns for a finished job (BullMQ returnvalue). */
export const JobResultSchema = z.object({
  filename: z.string(),
  content_type: z.string(),
  size: z.number().int().nonnegative(),
  expires_at: z.number().int(),
  /** How a clip was cut (absent without a clip, and in results stored before smart cut). */
  clip_method: ClipMethodSchema.optional(),
  recording: RecordingSchema.optional(),
  ended: RecordingEndSchema.optional(),
});
export type JobResult = z.infer<typeof JobResultSchema>;

/** A recording's progress as the worker stores it (BullMQ progress is a number for other jobs). */
export const RecordingProgressSchema = z.object({ percent: z.number().min(0).max(100), recording: RecordingSchema });
export type RecordingProgress = z.infer<typeof RecordingProgressSchema>;

/**
 * BullMQ keeps only a message for failed jobs; the worker stores `{code, message}` as JSON in it
 * and the gateway reads it back. Anything else (a stalled job, a crash) is internal_error.
 */
export function encodeJobError(error: JobError): string {
  return JSON.stringify({ code: error.code, message: error.message });
}

export function decodeJobError(reason: string | undefined): JobError {
  if (reason) {
    try {
      const parsed = JobErrorSchema.safeParse(JSON.parse(reason));
      if (parsed.success) return parsed.data;
    } catch {
      /* a plain message: below */
    }
  }
  return { code: 'internal_error', message: reason ? `The job failed: ${reason}` : 'The job failed.' };
}

export { ErrorCodeSchema };
