// Download requests, jobs and the BullMQ payload. The gateway checks the payload when it enqueues
// and the worker when it dequeues, so both sides agree on one schema.
import { z } from 'zod';
import { ErrorCodeSchema } from './errors.js';
import { MAX_URL_LENGTH, StreamProfileSchema } from './extract.js';

/** Formats that hold video (and audio): what a merge or a video conversion writes. */
export const ContainerSchema = z.enum(['mp4', 'webm', 'mkv']);
export type Container = z.infer<typeof ContainerSchema>;
/** Formats that hold audio only. */
export const AudioFormatSchema = z.enum(['mp3', 'm4a', 'opus', 'wav']);
export type AudioFormat = z.infer<typeof AudioFormatSchema>;
/** Every format a download may ask for: the one list the gateway, the worker and ffmpeg's side share. */
export const OutputFormatSchema = z.enum([...ContainerSchema.options, ...AudioFormatSchema.options]);
export type OutputFormat = z.infer<typeof OutputFormatSchema>;
export const AUDIO_FORMATS: ReadonlySet<OutputFormat> = new Set(AudioFormatSchema.options);

const mediaUrl = z.string().min(1).max(MAX_URL_LENGTH);

export const DownloadRequestSchema = z
  .object({
    url: mediaUrl.optional().describe('A source url from an extract result'),
    video_url: mediaUrl.optional().describe('The video member of a merge pair'),
    audio_url: mediaUrl.optional().describe('The audio member of a merge pair'),
    format: OutputFormatSchema.optional().describe('Convert to this format (a job)'),
    filename: z.string().min(1).max(200).optional().describe('File name without path; sanitised'),
  })
  .strict()
  .superRefine((body, ctx) => {
    const single = body.url !== undefined;
    const pair = body.video_url !== undefined || body.audio_url !== undefined;
    if (single === pair) {
      ctx.addIssue({ code: 'custom', message: 'Give exactly one of url, or video_url with audio_url.' });
    } else if (pair && (body.video_url === undefined || body.audio_url === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'A merge pair needs both video_url and audio_url.' });
    }
  })
  .meta({ id: 'DownloadRequest' });
export type DownloadRequest = z.infer<typeof DownloadRequestSchema>;

export const JobStatusSchema = z.enum(['queued', 'processing', 'completed', 'failed', 'expired']);
export type JobStatus = z.infer<typeof JobStatusSchema>;
export const JobOperationSchema = z.enum(['merge', 'convert', 'remux']);
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

export const JobSchema = z
  .object({
    id: z.string(),
    status: JobStatusSchema,
    operation: JobOperationSchema,
    progress: z.number().min(0).max(100),
    created_at: z.string(),
    started_at: z.string().optional(),
    finished_at: z.string().optional(),
    error: JobErrorSchema.optional(),
    artifact: ArtifactSchema.optional(),
  })
  .meta({ id: 'Job' });
export type JobView = z.infer<typeof JobSchema>;

export const JobEnvelopeSchema = z.object({ success: z.literal(true), data: JobSchema }).meta({ id: 'JobEnvelope' });

export const JobAcceptedSchema = z
  .object({
    success: z.literal(true),
    data: z.object({ job_id: z.string(), status: JobStatusSchema, status_url: z.string() }),
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
  headers: z.record(z.string(), z.string()).optional(),
  codecs: z.string().optional(),
  has_audio: z.boolean().optional(),
  has_video: z.boolean().optional(),
});
export type JobInput = z.infer<typeof JobInputSchema>;

export const JobPayloadSchema = z.object({
  id: z.string().regex(JOB_ID_PATTERN),
  operation: JobOperationSchema,
  /** merge/remux pair: [video, audio]; convert/remux of one source: [input]. */
  inputs: z.array(JobInputSchema).min(1).max(2),
  /** The requested format, if any; otherwise the worker picks the container from the codecs. */
  format: OutputFormatSchema.optional(),
  /** Sanitised base name for the artifact, without extension. */
  basename: z.string().min(1).max(200),
  /** Seconds, when the extract knew it (for progress). */
  duration: z.number().positive().optional(),
  request_key: z.string(),
  created_at: z.number().int(),
});
export type JobPayload = z.infer<typeof JobPayloadSchema>;

/** What the worker returns for a finished job (BullMQ returnvalue). */
export const JobResultSchema = z.object({
  filename: z.string(),
  content_type: z.string(),
  size: z.number().int().nonnegative(),
  expires_at: z.number().int(),
});
export type JobResult = z.infer<typeof JobResultSchema>;

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
