// What a job's finished file must hold, from what the job asked for: the tracks the inputs are known
// to carry (a pair always gives both, an audio format only audio, a single input what its profile
// and codecs say), the inputs' duration when one is known (a clip's length for a clip), and
// faststart for mp4 and m4a.
import { AUDIO_FORMATS, type JobPayload } from '@reelay/contracts';
import { outputFormat, codecPair, type MediaOperation, type OutputExpectation } from '@reelay/media';

export function expectedOutput(
  payload: JobPayload,
  operation: MediaOperation,
  durationSeconds: number | undefined,
): OutputExpectation {
  const format = outputFormat(operation);
  const faststart = format === 'mp4' || format === 'm4a';
  const subtitles = payload.subtitles?.length;
  if (operation.type === 'subtitle') return { video: false, audio: false, subtitles: 1, faststart: false };
  const base = {
    durationSeconds,
    faststart,
    maxDurationSeconds: clipCeiling(payload),
    ...(subtitles ? { subtitles } : {}),
  };
  if (AUDIO_FORMATS.has(format)) return { ...base, video: false, audio: true };
  if (operation.type === 'merge' || (operation.type === 'remux' && operation.videoInput !== undefined))
    return { ...base, video: true, audio: true };
  const [input] = payload.inputs;
  const { videoCodec, audioCodec } = codecPair(input.codecs);
  return {
    ...base,
    video: input.stream_profile === 'video_only' || videoCodec !== undefined,
    audio: input.stream_profile === 'audio_only' || audioCodec !== undefined,
  };
}

/**
 * The longest a clip's file may be: its length, plus for a fast clip the stretch before `start` back
 * to the keyframe (Matroska shows it; MP4 hides it in an edit list), allowed up to 15 s. Timestamps
 * are rounded to a frame or a container tick, hence the half second.
 */
export const FAST_CLIP_LEAD_SECONDS = 15;
function clipCeiling(payload: JobPayload): number | undefined {
  const clip = payload.clip;
  if (!clip) return undefined;
  return clip.end - clip.start + 0.5 + (clip.mode === 'fast' ? FAST_CLIP_LEAD_SECONDS : 0);
}
