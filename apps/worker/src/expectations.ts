// What a job's finished file must hold, from what the job asked for: the tracks the inputs are known
// to carry (a pair always gives both, an audio format only audio, a single input what its profile
// and codecs say), the inputs' duration when one is known, and faststart for mp4 and m4a.
import { AUDIO_FORMATS, type JobPayload } from '@reelay/contracts';
import { outputFormat, codecPair, type MediaOperation, type OutputExpectation } from '@reelay/media';

export function expectedOutput(payload: JobPayload, operation: MediaOperation, durationSeconds: number | undefined): OutputExpectation {
  const format = outputFormat(operation);
  const faststart = format === 'mp4' || format === 'm4a';
  const base = { durationSeconds, faststart };
  if (AUDIO_FORMATS.has(format)) return { ...base, video: false, audio: true };
  if (operation.type === 'merge' || (operation.type === 'remux' && operation.videoInput !== undefined)) return { ...base, video: true, audio: true };
  const [input] = payload.inputs;
  const { videoCodec, audioCodec } = codecPair(input.codecs);
  return {
    ...base,
    video: input.stream_profile === 'video_only' || videoCodec !== undefined,
    audio: input.stream_profile === 'audio_only' || audioCodec !== undefined,
  };
}
