// What of the source a job's file keeps, as a list of intervals of the source's time, when the smart
// cut makes the file (steps/render-kept.ts). The one pure place an edit becomes intervals: a precise
// clip is one interval today; removed ranges, SponsorBlock segments and chapters (DESIGN.md, "Editing
// what is downloaded") are further intervals computed here or narrowed by a step before the render.
import type { JobPayload } from '@reelay/contracts';
import { outputFormat, type MediaOperation } from '@reelay/media';

/** A stretch of the source that the file keeps, in seconds: [start, end). */
export interface KeptInterval {
  start: number;
  end: number;
}

/** The kept stretches, in order and apart; never empty (no interval kept is no file). */
export type KeptIntervals = readonly [KeptInterval, ...KeptInterval[]];

/** The formats the smart cut writes; a precise clip into any other is re-encoded by the job's one ffmpeg command. */
const SMART_FORMATS = new Set(['mp4', 'mkv']);

/**
 * The intervals the smart cut renders, or undefined when the job's ffmpeg command makes the whole
 * file itself: no edit, a fast clip (a copy from the keyframe before its start, in the command's
 * arguments), a subtitle track, or a format the smart cut does not write.
 */
export function keptIntervals(payload: Pick<JobPayload, 'clip'>, operation: MediaOperation): KeptIntervals | undefined {
  const clip = payload.clip;
  if (clip?.mode !== 'precise' || operation.type === 'subtitle' || !SMART_FORMATS.has(outputFormat(operation)))
    return undefined;
  return [{ start: clip.start, end: clip.end }];
}
