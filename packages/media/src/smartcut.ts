// Smart cut: a precise clip that re-encodes only the stretch from `start` to the next keyframe (the
// head) and copies the rest, so it costs little more than a copy. The decision (which keyframe, or
// why not) and every ffmpeg argument vector are pure here; apps/worker runs them in four steps:
// fetch the covering range once (copy), read its packets, encode the head, join head and body.
// docs/clips.md explains the splice: H.264 as avc3, parameter sets in-band.
import type { Container, OutputFormat } from '@reelay/contracts';
import { seconds, seekArgs } from './clip.js';
import { muxerFor } from './containers.js';
import { inputArgs, localPath, type InputKind, type MediaInput } from './inputs.js';
import { encodeAll, representationMap, type MediaOperation } from './operations.js';
import { metadataArgs, type TagPlan } from './tags.js';

/** A head longer than this is not a head: the clip is re-encoded whole (a source built with sparse keyframes). */
export const MAX_HEAD_SECONDS = 10;

/** What the head encode must match, read by ffprobe from the copied range. */
export interface VideoParams {
  codec: string;
  profile?: string;
  /** ffprobe's level: 31 for H.264 3.1. */
  level?: number;
  width: number;
  height: number;
  pixFmt?: string;
  fieldOrder?: string;
  /** e.g. `1/15360`. */
  timeBase: string;
  /** Frames a decoder holds back for reordering (B-frames): 0, 1 or 2. */
  reorderDepth: number;
  colorRange?: string;
  colorSpace?: string;
  colorTransfer?: string;
  colorPrimaries?: string;
}

/** One video packet of the range, in decode order, times in seconds. */
export interface RangePacket {
  pts: number;
  dts: number;
  key: boolean;
}

export type SmartCutPlan =
  | {
      method: 'smart';
      /** The keyframe where the copy begins; the head is [start, keyframe), none when they are equal. */
      keyframe: number;
      /** The copy stops before the first packet (decode order) showing a frame at or after `end`: its dts. */
      outpoint: number | undefined;
      /** Frames the head encodes. */
      headFrames: number;
    }
  | { method: 'reencode'; reason: string };

const EPSILON = 0.0005; // half a millisecond: clip times are whole milliseconds

/** A packet's time as ffmpeg reads it, to the microsecond (keyframes fall between milliseconds). */
function exact(value: number): string {
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`not a time in seconds: ${value}`);
  return value.toFixed(6);
}

const H264_PROFILES: Record<string, string> = {
  'Constrained Baseline': 'baseline',
  Baseline: 'baseline',
  Main: 'main',
  High: 'high',
  'High 10': 'high10',
  'High 4:2:2': 'high422',
  'High 4:4:4 Predictive': 'high444',
};
const PIX_FMTS = new Set(['yuv420p', 'yuvj420p', 'yuv422p', 'yuv444p', 'yuv420p10le', 'yuv422p10le']);

/**
 * Why the head cannot be encoded to match this stream, or undefined when it can. H.264 only: HEVC
 * would need libx265 heads and its own Annex B conversion at the join (docs/clips.md, limits).
 */
export function unsplicable(video: VideoParams): string | undefined {
  if (video.codec !== 'h264') return `${video.codec} cannot be spliced (only H.264)`;
  if (video.profile === undefined || H264_PROFILES[video.profile] === undefined) return `the ${video.codec} profile ${video.profile ?? 'unknown'} has no matching encoder profile`;
  if (video.pixFmt === undefined || !PIX_FMTS.has(video.pixFmt)) return `pixel format ${video.pixFmt ?? 'unknown'} is not encoded here`;
  if (video.fieldOrder !== undefined && video.fieldOrder !== 'progressive' && video.fieldOrder !== 'unknown') return `interlaced video (${video.fieldOrder}) is not spliced`;
  if (video.reorderDepth > 2) return `a reorder depth of ${video.reorderDepth} frames is deeper than the head encoder's`;
  return undefined;
}

/**
 * Where to splice. The copy begins at the first keyframe at or after `start` and ends before the
 * first packet, in decode order, that shows a frame at or after `end`: every copied frame is then
 * shown, none past `end` (with B-frames the clip may end a frame or two early, never late). An open
 * GOP (frames after the keyframe that show before it, referencing the previous GOP) cannot be copied
 * after a new head, and a keyframe further than MAX_HEAD_SECONDS after `start` would make the head the
 * clip: both are re-encoded whole.
 */
export function planSmartCut(packets: readonly RangePacket[], start: number, end: number): SmartCutPlan {
  const first = packets.findIndex((p) => p.key && p.pts >= start - EPSILON);
  if (first < 0 || packets[first].pts >= end - EPSILON) return { method: 'reencode', reason: `no keyframe between ${seconds(start)} s and ${seconds(end)} s` };
  const keyframe = packets[first].pts;
  if (keyframe - start > MAX_HEAD_SECONDS) {
    return { method: 'reencode', reason: `the next keyframe is ${(keyframe - start).toFixed(1)} s after start (more than ${MAX_HEAD_SECONDS} s)` };
  }
  let outpoint: number | undefined;
  for (let i = first + 1; i < packets.length; i++) {
    const p = packets[i];
    if (p.key) break;
    if (p.pts < keyframe - EPSILON) return { method: 'reencode', reason: 'open GOP: frames after the keyframe refer to the ones before it' };
  }
  for (let i = first; i < packets.length; i++) {
    if (packets[i].pts >= end - EPSILON) {
      outpoint = packets[i].dts;
      break;
    }
  }
  const headFrames = packets.filter((p) => p.pts >= start - EPSILON && p.pts < keyframe - EPSILON).length;
  return { method: 'smart', keyframe: keyframe < start + EPSILON ? start : keyframe, outpoint, headFrames };
}

// ---- argument builders ----

export interface RangeInput {
  input: MediaInput;
  kind: InputKind;
  aes128?: boolean;
  /** `-map` of the stream this input gives (video first, then audio). */
  maps: string[];
}

/** The inputs of an operation with the streams to take from each: video first, then audio. */
export function rangeInputs(op: Exclude<MediaOperation, { type: 'subtitle' }>): RangeInput[] {
  if (op.type === 'merge') {
    return [
      { input: op.videoInput, kind: 'progressive', maps: ['0:v:0'] },
      { input: op.audioInput, kind: 'progressive', maps: ['1:a:0'] },
    ];
  }
  if (op.type === 'convert') {
    const maps = op.representation !== undefined ? [representationMap(0, op.representation)] : ['0:v:0?', '0:a:0?'];
    return [{ input: op.input, kind: op.manifest ?? 'progressive', aes128: op.aes128, maps }];
  }
  if (op.input !== undefined) {
    const maps = op.representation !== undefined ? [representationMap(0, op.representation)] : ['0:v:0?', '0:a:0?'];
    return [{ input: op.input, kind: op.manifest, aes128: op.aes128, maps }];
  }
  return [
    { input: op.videoInput, kind: op.manifest, aes128: op.aes128, maps: [op.videoRepresentation !== undefined ? representationMap(0, op.videoRepresentation) : '0:v:0'] },
    { input: op.audioInput, kind: op.manifest, aes128: op.aes128, maps: [op.audioRepresentation !== undefined ? representationMap(1, op.audioRepresentation) : '1:a:0'] },
  ];
}

const QUIET = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error'];

function progress(progressUrl: string | undefined): string[] {
  return progressUrl ? ['-progress', progressUrl, '-nostats'] : ['-nostats'];
}

/**
 * Step 1, the only one that reads the network: the range from the keyframe at or before `start` to
 * `end`, every stream copied, into a local NUT file (it keeps each stream's time base and packets as
 * they are). Timestamps are the input's, counted from its start, so `start` and `end` mean the same
 * in every later step. HLS and DASH demuxers seek to the segment holding `start`, as for any clip.
 */
export function fetchRangeArgs(inputs: readonly RangeInput[], start: number, end: number, output: string, opts: { progressUrl?: string; maxOutputBytes?: number } = {}): string[] {
  const seek = seekArgs({ start, end, mode: 'precise' });
  return [
    ...QUIET,
    ...progress(opts.progressUrl),
    '-copyts',
    '-start_at_zero',
    ...inputs.flatMap((i) => [...seek, ...inputArgs(i.input, { kind: i.kind, aes128: i.aes128 })]),
    ...inputs.flatMap((i) => i.maps.flatMap((m) => ['-map', m])),
    '-c', 'copy',
    '-to', seconds(end),
    ...(opts.maxOutputBytes !== undefined ? ['-fs', String(opts.maxOutputBytes)] : []),
    '-f', 'nut',
    localPath(output, 'output'),
  ];
}

/** Step 2: the range's streams and packets, as JSON (read by parseRangeProbe). */
export function rangeProbeArgs(range: string): string[] {
  return [
    '-v', 'error', '-print_format', 'json', '-show_streams',
    '-show_entries', 'packet=stream_index,pts_time,dts_time,flags',
    '-protocol_whitelist', 'file', '-format_whitelist', 'nut', '-i', localPath(range, 'input'),
  ];
}

function level(video: VideoParams): string[] {
  if (video.level === undefined || video.level <= 0) return [];
  return ['-level:v', video.level === 9 ? '1b' : (video.level / 10).toFixed(1)];
}

function colour(video: VideoParams): string[] {
  const known = (v: string | undefined) => v !== undefined && v !== 'unknown' && v !== 'reserved';
  return [
    ...(known(video.colorRange) ? ['-color_range', video.colorRange!] : []),
    ...(known(video.colorSpace) ? ['-colorspace', video.colorSpace!] : []),
    ...(known(video.colorTransfer) ? ['-color_trc', video.colorTransfer!] : []),
    ...(known(video.colorPrimaries) ? ['-color_primaries', video.colorPrimaries!] : []),
  ];
}

/**
 * The head's encoder, matched to the copied stream: codec, profile, level, pixel format, time base,
 * colour signalling (resolution and SAR come with the decoded frames). B-frames as x264's
 * veryfast preset makes them (reorder depth 2, or none for Baseline), so the head's decode times
 * stay before the body's first one.
 */
export function headEncodeArgs(video: VideoParams): string[] {
  const profile = H264_PROFILES[video.profile ?? ''] ?? 'high';
  return ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '18', '-profile:v', profile, ...level(video), '-pix_fmt', video.pixFmt!, '-enc_time_base:v', video.timeBase, ...colour(video)];
}

/** Step 3: decode the range from its first keyframe and encode the frames of [start, keyframe). */
export function headArgs(range: string, video: VideoParams, start: number, keyframe: number, output: string, opts: { threads?: number } = {}): string[] {
  return [
    ...QUIET,
    '-nostats',
    '-copyts',
    '-protocol_whitelist', 'file', '-format_whitelist', 'nut', '-i', localPath(range, 'input'),
    '-map', '0:v:0',
    '-vf', `trim=start=${seconds(start)}:end=${exact(keyframe - EPSILON)}`,
    ...headEncodeArgs(video),
    ...(opts.threads ? ['-threads', String(opts.threads)] : []),
    '-an', '-f', 'nut', localPath(output, 'output'),
  ];
}

/**
 * Step 3b: the body, copied packet for packet from the keyframe to the outpoint. The packets are
 * chosen by their times (the noise filter's drop expression) rather than by seeking, which in NUT
 * lands on an index point and may give packets before the keyframe.
 */
export function bodyArgs(range: string, keyframe: number, outpoint: number | undefined, output: string): string[] {
  const before = `lt(pts*tb\\,${exact(Math.max(0, keyframe - EPSILON))})`;
  const after = outpoint !== undefined ? `+gte(dts*tb\\,${exact(Math.max(0, outpoint - EPSILON))})` : '';
  return [
    ...QUIET,
    '-nostats',
    '-copyts',
    '-protocol_whitelist', 'file', '-format_whitelist', 'nut', '-i', localPath(range, 'input'),
    '-map', '0:v:0', '-c', 'copy',
    '-bsf:v', `noise=drop=${before}${after}`,
    '-an', '-f', 'nut', localPath(output, 'output'),
  ];
}

/**
 * The concat demuxer's script: the head from `start` for its exact length, then the body from its
 * keyframe (each `inpoint` is where its file's time counts from, so the body lands where the
 * source had it). Its `auto_convert` (on by default) turns each file's H.264 into Annex B with that
 * file's own SPS/PPS before every IDR frame, so the body carries its parameter sets in-band and no
 * decoder uses the head's for it.
 */
export function joinScript(head: string | undefined, body: string, start: number, keyframe: number): string {
  const quote = (file: string) => `'${file.replace(/'/g, "'\\''")}'`;
  const lines = ['ffconcat version 1.0'];
  if (head !== undefined) lines.push(`file ${quote(head)}`, `inpoint ${exact(start)}`, `duration ${exact(keyframe - start)}`);
  lines.push(`file ${quote(body)}`, `inpoint ${exact(keyframe)}`);
  return `${lines.join('\n')}\n`;
}

export interface FinishOptions {
  format: Container;
  tags?: TagPlan;
  progressUrl?: string;
  maxOutputBytes?: number;
  /** Whether the range has an audio stream (its second stream). */
  audio: boolean;
}

/**
 * The audio cut at the sample. A frame starting less than half its length after the last one kept
 * is dropped first: ffmpeg 5.1's DASH demuxer, reading a pair after a seek, delivers a second's audio
 * twice, which the range's muxer squeezes to one tick apart (heard as a click, measured in a test).
 */
function audioTrim(start: number, end: number): string[] {
  const once = 'aselect=isnan(prev_selected_t)+gte(t-prev_selected_t\\,0.5*samples_n/sample_rate)';
  return ['-af', `${once},atrim=start=${seconds(start)}:end=${seconds(end)},asetpts=PTS-STARTPTS`];
}

// The audio encoder of encodeAll for the container (the audio is re-encoded, cut at the sample).
function audioEncoder(format: Container): string[] {
  const all = encodeAll(format);
  return all.slice(all.indexOf('-c:a'));
}

function muxTail(format: Container, opts: FinishOptions, output: string): string[] {
  const faststart = format === 'mp4' ? ['-movflags', '+faststart'] : [];
  return [
    ...metadataArgs(format, opts.tags),
    ...faststart,
    ...(opts.maxOutputBytes !== undefined ? ['-fs', String(opts.maxOutputBytes)] : []),
    '-f', muxerFor(format as OutputFormat),
    localPath(output, 'output'),
  ];
}

/**
 * Step 4: the video from the concat script (copied; in MP4 tagged avc3, whose sample entries
 * allow parameter sets in the samples), the audio from the range, re-encoded and cut at the sample.
 */
export function joinArgs(script: string, range: string, start: number, end: number, output: string, opts: FinishOptions): string[] {
  const tag = opts.format === 'mp4' ? ['-tag:v', 'avc3'] : [];
  return [
    ...QUIET,
    ...progress(opts.progressUrl),
    '-copyts',
    '-protocol_whitelist', 'file', '-format_whitelist', 'concat,nut', '-f', 'concat', '-safe', '0', '-i', localPath(script, 'input'),
    ...(opts.audio ? ['-protocol_whitelist', 'file', '-format_whitelist', 'nut', '-i', localPath(range, 'input')] : []),
    '-map', '0:v:0',
    ...(opts.audio ? ['-map', '1:a:0'] : []),
    '-c:v', 'copy', ...tag,
    ...(opts.audio ? [...audioTrim(start, end), ...audioEncoder(opts.format)] : []),
    ...muxTail(opts.format, opts, output),
  ];
}

/** The fallback: every stream of the range re-encoded, cut to [start, end) (today's precise clip). */
export function reencodeRangeArgs(range: string, start: number, end: number, output: string, opts: FinishOptions & { video: boolean }): string[] {
  const encoders = encodeAll(opts.format);
  const videoEnc = encoders.slice(0, encoders.indexOf('-c:a'));
  return [
    ...QUIET,
    ...progress(opts.progressUrl),
    '-copyts',
    '-protocol_whitelist', 'file', '-format_whitelist', 'nut', '-i', localPath(range, 'input'),
    ...(opts.video ? ['-map', '0:v:0', '-vf', `trim=start=${seconds(start)}:end=${seconds(end)},setpts=PTS-STARTPTS`, ...videoEnc] : []),
    ...(opts.audio ? ['-map', '0:a:0', ...audioTrim(start, end), ...audioEncoder(opts.format)] : []),
    ...muxTail(opts.format, opts, output),
  ];
}
