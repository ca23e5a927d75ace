// The Job as clients see it (DESIGN.md's Job), from what BullMQ stores of a download job. One
// function, so the gateway's GET /api/v1/jobs/{id} and the worker's webhook message say the same.
import { decodeJobError, JobResultSchema, RecordingProgressSchema, type JobPayload, type JobView } from './download.js';
import { isCancelledReason } from './job-signals.js';

/** The fields of a BullMQ job the view reads (bullmq's Job has them all). */
export interface JobRecord {
  data: JobPayload;
  progress: unknown;
  timestamp: number;
  processedOn?: number;
  finishedOn?: number;
  returnvalue: unknown;
  failedReason?: string;
}

const iso = (ms: number | undefined): string | undefined => (ms ? new Date(ms).toISOString() : undefined);

/** A number for most jobs; `{percent, recording}` for a recording. */
function percentOf(progress: unknown): number {
  const value =
    typeof progress === 'number' ? progress : (RecordingProgressSchema.safeParse(progress).data?.percent ?? 0);
  return Math.max(0, Math.min(100, Math.round(value)));
}

/** `state` is BullMQ's (getJobState); a completed job whose artifact's time is over is expired. */
export function jobView(id: string, job: JobRecord, state: string, now = Date.now()): JobView {
  const view: JobView = {
    id,
    status: 'queued',
    operation: job.data.operation,
    progress: percentOf(job.progress),
    created_at: iso(job.timestamp)!,
    started_at: iso(job.processedOn),
  };
  if (state === 'active') {
    view.status = 'processing';
    const recording = RecordingProgressSchema.safeParse(job.progress);
    if (recording.success) view.recording = recording.data.recording;
  } else if (state === 'completed') {
    view.finished_at = iso(job.finishedOn);
    const result = JobResultSchema.safeParse(job.returnvalue);
    if (result.success && result.data.expires_at > now) {
      view.status = 'completed';
      view.progress = 100;
      if (result.data.recording) view.recording = result.data.recording;
      if (result.data.ended) view.ended = result.data.ended;
      view.artifact = {
        url: `/api/v1/jobs/${id}/artifact`,
        filename: result.data.filename,
        content_type: result.data.content_type,
        size: result.data.size,
        expires_at: new Date(result.data.expires_at).toISOString(),
      };
    } else {
      view.status = 'expired';
    }
  } else if (state === 'failed' && isCancelledReason(job.failedReason)) {
    // Cancelled while processing: the worker failed it with the cancel code, so no retry takes it.
    view.status = 'cancelled';
    view.finished_at = iso(job.finishedOn);
  } else if (state === 'failed') {
    view.status = 'failed';
    view.finished_at = iso(job.finishedOn);
    view.error = decodeJobError(job.failedReason);
  }
  if (!view.started_at) delete view.started_at;
  if (job.data.clip) {
    // A fast clip is a copy from the start; a precise one says how once it is done.
    const result = JobResultSchema.safeParse(job.returnvalue);
    const method = job.data.clip.mode === 'fast' ? 'copy' : result.success ? result.data.clip_method : undefined;
    view.clip = method ? { ...job.data.clip, method } : job.data.clip;
  }
  if (job.data.source) view.source = job.data.source;
  return view;
}
