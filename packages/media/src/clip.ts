// Clips as ffmpeg arguments: where to start reading each input and how long the output lasts.
// Input seeking (-ss before -i) makes ffmpeg seek in the demuxer: a progressive file jumps to the
// keyframe at or before `start`, and the HLS and DASH demuxers start at the segment that holds it,
// so the segments before are never fetched (only the first, which ffmpeg reads to learn the streams).

export type ClipMode = 'fast' | 'precise';

/** Seconds into the media: [start, end). */
export interface ClipRange {
  start: number;
  end: number;
  /** fast: streams copied from the keyframe at or before start; precise: re-encoded, exact. */
  mode: ClipMode;
}

/** Seconds as ffmpeg reads them, to the millisecond. */
export function seconds(value: number): string {
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`not a time in seconds: ${value}`);
  return value.toFixed(3);
}

/** Placed before each input's `-i`: every input of a pair seeks to the same point. */
export function seekArgs(clip: ClipRange | undefined): string[] {
  return clip && clip.start > 0 ? ['-ss', seconds(clip.start)] : [];
}

/**
 * An output option: the output's length. With input seeking, output timestamps count from `start`,
 * so `-t` is the clip's length in both modes (a fast clip's early keyframe comes before 0 and is
 * hidden by an edit list in MP4, or shown by Matroska: DESIGN.md allows up to one keyframe interval).
 */
export function lengthArgs(clip: ClipRange | undefined): string[] {
  if (!clip) return [];
  if (!(clip.end > clip.start)) throw new TypeError(`clip end ${clip.end} is not after start ${clip.start}`);
  return ['-t', seconds(clip.end - clip.start)];
}

/** Whether the clip forces every stream to be encoded (a copy can only start at a keyframe). */
export function reencodes(clip: ClipRange | undefined): boolean {
  return clip?.mode === 'precise';
}

/** How long the file should last: the clip's length, or the input's when there is no clip. */
export function clipLength(clip: ClipRange | undefined, inputSeconds: number | undefined): number | undefined {
  if (!clip) return inputSeconds;
  const end = inputSeconds !== undefined ? Math.min(clip.end, inputSeconds) : clip.end;
  return end > clip.start ? end - clip.start : 0;
}
