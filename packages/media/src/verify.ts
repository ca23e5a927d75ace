// Whether a finished file is what was asked for: ffmpeg can exit 0 after a failed read (an origin
// that ignores Range, a body cut short, a missing segment) with a track or a stretch of media
// missing. The judgement is pure (judgeOutput); verifyOutput reads the local file (in this process for
// a plain mp4 or m4a, with ffprobe otherwise) and applies it.
import { moovBeforeMdat } from './faststart.js';
import { readMp4Info } from './mp4-info.js';
import { FfmpegError } from './runner.js';
import { probe, type ProbeOptions, type ProbeResult } from './probe.js';

export interface OutputExpectation {
  /** Tracks the file must hold. At least one audio or video track is always required. */
  video: boolean;
  audio: boolean;
  /** How long the inputs last (the longest, for a merge: no -shortest); no duration check when unknown. */
  durationSeconds?: number;
  /** A clip: how long the file may last at most (a clip that was not cut is far longer). */
  maxDurationSeconds?: number;
  /** mp4 / m4a: the index (moov) must come before the media (+faststart). */
  faststart: boolean;
  /** Subtitle tracks the file must hold; a subtitle file (video and audio false) holds only those. */
  subtitles?: number;
}

/**
 * How much shorter than expected a file may be. Declared durations are rounded, and segmented
 * sources often declare one segment more than exists (ffmpeg then asks for it and gets a 404): two
 * seconds or 5 %, whichever is more. A missing track or half a file is far outside this.
 */
export function durationTolerance(expectedSeconds: number): number {
  return Math.max(2, expectedSeconds * 0.05);
}

/** What is wrong with the file, as short phrases for the job's error message; empty when it is fine. */
export function judgeOutput(
  info: Pick<ProbeResult, 'durationSeconds' | 'streams'>,
  expected: OutputExpectation,
  faststart: boolean | undefined,
): string[] {
  const problems: string[] = [];
  const has = (type: 'video' | 'audio') => info.streams.some((s) => s.type === type);
  const subtitles = info.streams.filter((s) => s.type === 'subtitle').length;
  if (expected.subtitles !== undefined && subtitles < expected.subtitles)
    problems.push(`it holds ${subtitles} of the ${expected.subtitles} subtitle tracks`);
  // A subtitle file holds text only.
  const textOnly = !expected.video && !expected.audio && expected.subtitles !== undefined;
  if (!textOnly && !has('video') && !has('audio')) problems.push('it holds no audio or video track');
  else {
    if (expected.video && !has('video')) problems.push('the video track is missing');
    if (expected.audio && !has('audio')) problems.push('the audio track is missing');
  }
  const want = expected.durationSeconds;
  if (want !== undefined && want > 0) {
    const got = info.durationSeconds;
    if (got === undefined) problems.push('its duration cannot be read');
    else if (got < want - durationTolerance(want))
      problems.push(`it lasts ${got.toFixed(1)} s of the expected ${want.toFixed(1)} s`);
  }
  const most = expected.maxDurationSeconds;
  if (most !== undefined && info.durationSeconds !== undefined && info.durationSeconds > most) {
    problems.push(`it lasts ${info.durationSeconds.toFixed(1)} s, longer than the clip allows (${most.toFixed(1)} s)`);
  }
  if (expected.faststart && faststart === false) problems.push('its index (moov) is not at the start of the file');
  return problems;
}

export interface VerifyOptions {
  /** ffprobe's path. */
  binary?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  limits?: ProbeOptions['limits'];
  /** What the file is, for the demuxers ffprobe may use: `subtitles` for a WebVTT or SRT file. */
  kind?: ProbeOptions['kind'];
}

/**
 * Reads a finished local file and judges it; a file ffprobe cannot read is a problem too. An mp4 or
 * m4a (faststart expected) is read in this process when its layout is plain (readMp4Info); ffprobe
 * reads everything else, and whatever that reader leaves undecided.
 */
export async function verifyOutput(
  file: string,
  expected: OutputExpectation,
  opts: VerifyOptions = {},
): Promise<string[]> {
  if (expected.faststart) {
    const mp4 = await readMp4Info(file);
    if (mp4) return judgeOutput(mp4, expected, true);
  }
  let info: ProbeResult;
  try {
    info = await probe(file, {
      binary: opts.binary,
      kind: opts.kind,
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? 30_000,
      limits: opts.limits,
    });
  } catch (err) {
    // Only ffprobe reading the file and refusing it says something about the file. Its failing to
    // start, timing out or being stopped is the worker's trouble: the job's failure handling decides.
    if (err instanceof FfmpegError && err.kind === 'failed' && err.exitCode !== undefined)
      return ['it is not readable media'];
    throw err;
  }
  let faststart: boolean | undefined;
  if (expected.faststart) faststart = await moovBeforeMdat(file).catch(() => false);
  return judgeOutput(info, expected, faststart);
}
