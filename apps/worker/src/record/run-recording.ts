// One attempt of a recording job (operation record): the recorder into the shared data dir, the
// Job's `recording` and progress while it runs, then the parts made into one file and stored as the
// artifact. An attempt after a dead worker's continues the same folder and appends.
import type { Job } from 'bullmq';
import type { ArtifactStore } from '@reelay/artifacts';
import type { Config } from '@reelay/config';
import { ReelayError, type JobPayload, type JobResult, type RecordingProgress } from '@reelay/contracts';
import type { ChildLimits } from '@reelay/media';
import type { Logger } from '@reelay/observability';
import { onStorage } from '../failure.js';
import { AvTake, avInputs } from './dash-av.js';
import type { LiveEgress } from './live-fetch.js';
import { OneTake, type Take } from './take.js';

/**
 * The Job's recording is written every RECORDING_BEAT_MS (the contract: at most every second, at
 * least every 2 s). Each write is a BullMQ script and an event every gateway reads, so a write per
 * segment (or per second) costs more worker CPU than fetching the segments (bench/record.mjs).
 */
export const RECORDING_BEAT_MS = 2_000;
/** How long making the file from the parts may take. */
const FINALIZE_TIMEOUT_MS = 10 * 60_000;

export interface RecordingDeps {
  config: Pick<Config, 'ARTIFACT_TTL_SECONDS' | 'MAX_MEDIA_BYTES' | 'MAX_RECORD_SECONDS'>;
  artifacts: ArtifactStore;
  binaries: { ffmpeg: string; ffprobe: string };
  egress: LiveEgress;
  dataDir: string;
  limits?: ChildLimits;
}

export interface RecordingContext {
  job: Pick<Job, 'updateProgress'>;
  payload: JobPayload;
  log: Logger;
  /** Shutdown hand-back, lock loss, cancel: end now. */
  signal: AbortSignal;
  cancel: AbortSignal;
  stop: AbortSignal;
}

export async function runRecording(deps: RecordingDeps, ctx: RecordingContext): Promise<JobResult> {
  const { payload, log } = ctx;
  const input = payload.inputs[0];
  if (!input) throw new ReelayError('invalid_request', 'A recording needs one live source.');
  // Two DASH inputs are a video and an audio representation of one manifest, recorded together.
  const av = avInputs(payload.inputs);
  const take = await onStorage<Take>('temp', () =>
    av ? AvTake.open(deps.dataDir, payload.id, av) : OneTake.open(deps.dataDir, payload.id, input),
  );
  const maxSeconds = Math.min(payload.live?.duration ?? Infinity, deps.config.MAX_RECORD_SECONDS);
  let chain: Promise<unknown> = Promise.resolve();
  const write = () => {
    const recording = take.view();
    const percent = payload.live?.duration ? Math.min(99, (100 * recording.seconds) / payload.live.duration) : 0;
    const progress: RecordingProgress = { percent, recording };
    chain = chain
      .then(() => ctx.job.updateProgress(progress))
      .catch((err: unknown) => log.warn({ err: (err as Error).message }, 'could not record progress'));
  };
  const beat = setInterval(write, RECORDING_BEAT_MS);
  try {
    if (take.resumed) log.info({ recording: take.view() }, 'continuing a recording an earlier attempt began');
    write();
    const ended = await take.record({
      egress: deps.egress,
      ffprobe: deps.binaries.ffprobe,
      limits: deps.limits,
      fromStart: payload.live?.from_start === true,
      duration: payload.live?.duration,
      maxSeconds,
      maxBytes: deps.config.MAX_MEDIA_BYTES,
      stop: ctx.stop,
      signal: ctx.signal,
      log,
    });
    clearInterval(beat);
    await take.close();
    write();
    await chain;
    const recording = take.view();
    log.info(
      { ended, seconds: recording.seconds, bytes: recording.bytes, gaps: recording.gaps.length },
      'recording ended: making the file',
    );
    const format = payload.format === 'mkv' || payload.format === 'mp4' ? payload.format : undefined;
    const made = await take.make({
      ffmpeg: deps.binaries.ffmpeg,
      format,
      signal: ctx.signal,
      killSignal: ctx.cancel,
      timeoutMs: FINALIZE_TIMEOUT_MS,
      limits: deps.limits,
    });
    if (!made)
      throw new ReelayError(
        'upstream_error',
        `The recording ended (${ended}) before any segment of the stream could be recorded.`,
      );
    const expiresAt = Date.now() + deps.config.ARTIFACT_TTL_SECONDS * 1000;
    const contentType = made.container === 'mp4' ? 'video/mp4' : 'video/x-matroska';
    const stored = await onStorage('artifacts', () =>
      deps.artifacts.put(payload.id, made.file, {
        filename: `${payload.basename}.${made.container}`,
        content_type: contentType,
        expires_at: expiresAt,
      }),
    );
    await take.remove();
    return {
      filename: stored.filename,
      content_type: stored.content_type,
      size: stored.size,
      expires_at: stored.expires_at,
      recording,
      ended,
    };
  } catch (err) {
    // A cancel keeps nothing; anything else keeps the parts for the next attempt (process.ts removes
    // them when no attempt follows).
    if (ctx.cancel.aborted) await take.remove().catch(() => undefined);
    else await take.close().catch(() => undefined);
    throw err;
  } finally {
    clearInterval(beat);
  }
}
