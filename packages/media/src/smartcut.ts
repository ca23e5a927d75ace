// Smart cut: a precise clip that re-encodes only the stretch from `start` to the next keyframe (the
// head) and copies the rest, so it costs little more than a copy. The decision (which keyframe, or
// why not) and every ffmpeg argument vector are pure here; apps/worker runs them in four steps:
// fetch the covering range once (copy), read its packets, then encode the head, copy the body and
// encode the audio side by side, and join them.
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
  /** Frames per second, when ffprobe knows it. */
  frameRate?: number;
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

/** The frames after the copy up to `end`, encoded again: the copy cannot end on them (see planSmartCut). */
export interface TailPlan {
  /** The first frame the tail shows (the first one the copy leaves out). */
  from: number;
  /** The keyframe the tail's decode starts from (at or before `from`). */
  seek: number;
  /** The decode time of the last packet the tail's frames need. */
  through: number;
  frames: number;
}

export type SmartCutPlan =
  | {
      method: 'smart';
      /** The keyframe where the copy begins; the head is [start, keyframe), none when they are equal. */
      keyframe: number;
      /** The copy stops before this packet (decode order): its dts. Undefined: the copy runs to the range's end. */
      outpoint: number | undefined;
      /** Frames the head encodes. */
      headFrames: number;
      /** The frames of [from, end) the copy could not take, or undefined when the copy ends the clip. */
      tail: TailPlan | undefined;
    }
  | { method: 'reencode'; reason: string };

const EPSILON = 0.0005; // half a millisecond: clip times are whole milliseconds

/** A packet's time as ffmpeg reads it, to the microsecond (keyframes fall between milliseconds). */
function exact(value: number): string {
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`not a time in seconds: ${value}`);
  return value.toFixed(6);
}

/** A step that reads the fetched range (a local NUT file, nothing else), quietly, its times as they are. */
function readRange(range: string): string[] {
  return [
    ...QUIET,
    '-nostats',
    '-copyts',
    '-protocol_whitelist',
    'file',
    '-format_whitelist',
    'nut',
    '-i',
    localPath(range, 'input'),
  ];
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
const H264_PIX_FMTS = new Set(['yuv420p', 'yuvj420p', 'yuv422p', 'yuv444p', 'yuv420p10le', 'yuv422p10le']);

// HEVC's profile follows from ffprobe's profile and the pixel format together: ffprobe names every
// range extension "Rext", and x265 names them by chroma format and bit depth.
const HEVC_PROFILES: Record<string, Record<string, string>> = {
  Main: { yuv420p: 'main', yuvj420p: 'main' },
  'Main 10': { yuv420p10le: 'main10' },
  Rext: { yuv422p10le: 'main422-10', yuv444p: 'main444-8', yuv444p10le: 'main444-10' },
};

/** The encoder profile matching the stream, or undefined when no encoder here makes it. */
function encoderProfile(video: VideoParams): string | undefined {
  const profile = video.profile ?? '';
  if (video.codec === 'h264')
    return video.pixFmt !== undefined && H264_PIX_FMTS.has(video.pixFmt) ? H264_PROFILES[profile] : undefined;
  if (video.codec === 'hevc') return HEVC_PROFILES[profile]?.[video.pixFmt ?? ''];
  return undefined;
}

/**
 * Why the head cannot be encoded to match this stream, or undefined when it can: H.264 (libx264
 * heads) and HEVC (libx265 heads), progressive, in a profile and pixel format the encoder makes.
 */
export function unsplicable(video: VideoParams): string | undefined {
  if (video.codec !== 'h264' && video.codec !== 'hevc') return `${video.codec} cannot be spliced (only H.264 and HEVC)`;
  if (video.profile === undefined || encoderProfile(video) === undefined) {
    return `the ${video.codec} profile ${video.profile ?? 'unknown'} in pixel format ${video.pixFmt ?? 'unknown'} has no matching encoder profile`;
  }
  if (video.fieldOrder !== undefined && video.fieldOrder !== 'progressive' && video.fieldOrder !== 'unknown')
    return `interlaced video (${video.fieldOrder}) is not spliced`;
  if (video.reorderDepth > 2)
    return `a reorder depth of ${video.reorderDepth} frames is deeper than the head encoder's`;
  return undefined;
}

/**
 * Where the copy ends. It must be a point in decode order, and with B-frames the frames just before
 * `end` are often decoded after one shown at or past it (x264's IBBP: the P-frame at `end` comes
 * before the two B-frames shown before it), so no cut of the packets ends exactly at `end`. The copy
 * takes the longest run of packets from the keyframe whose frames are all before `end` and leave no
 * frame out; the frames between it and `end` (at most the reorder depth plus the B-frames of one
 * group, measured in the tests) make the tail. Returns the number of packets copied.
 */
function copyLength(packets: readonly RangePacket[], first: number, end: number): number {
  const wanted = packets
    .slice(first)
    .map((p) => p.pts)
    .filter((pts) => pts < end - EPSILON)
    .sort((x, y) => x - y);
  let best = 0;
  let latest = -Infinity;
  for (let n = 1; first + n - 1 < packets.length; n++) {
    const pts = packets[first + n - 1].pts;
    if (pts >= end - EPSILON) break;
    latest = Math.max(latest, pts);
    // n distinct frames, the latest of them the n-th wanted one: the first n wanted frames exactly.
    if (wanted[n - 1] === latest) best = n;
  }
  return best;
}

/**
 * Where to splice. The copy begins at the first keyframe at or after `start` and ends at the
 * longest run of packets that shows every frame from there on and none at or after `end` (see
 * copyLength); the frames it leaves before `end` are encoded again as a tail, so the clip ends on
 * the frame before `end`. An open GOP (frames after the keyframe that show before it, referencing
 * the previous GOP) cannot be copied after a new head, and a keyframe further than MAX_HEAD_SECONDS
 * after `start` would make the head the clip: both are re-encoded whole.
 */
export function planSmartCut(packets: readonly RangePacket[], start: number, end: number): SmartCutPlan {
  const first = packets.findIndex((p) => p.key && p.pts >= start - EPSILON);
  if (first < 0 || packets[first].pts >= end - EPSILON)
    return { method: 'reencode', reason: `no keyframe between ${seconds(start)} s and ${seconds(end)} s` };
  const keyframe = packets[first].pts;
  if (keyframe - start > MAX_HEAD_SECONDS) {
    return {
      method: 'reencode',
      reason: `the next keyframe is ${(keyframe - start).toFixed(1)} s after start (more than ${MAX_HEAD_SECONDS} s)`,
    };
  }
  for (let i = first + 1; i < packets.length; i++) {
    const p = packets[i];
    if (p.key) break;
    if (p.pts < keyframe - EPSILON)
      return { method: 'reencode', reason: 'open GOP: frames after the keyframe refer to the ones before it' };
  }
  const copied = copyLength(packets, first, end);
  const cut = first + copied;
  const outpoint = cut < packets.length ? packets[cut].dts : undefined;
  const left = packets.slice(cut).filter((p) => p.pts < end - EPSILON);
  let tail: TailPlan | undefined;
  if (left.length > 0) {
    const from = Math.min(...left.map((p) => p.pts));
    const at = packets.findIndex((p) => p.pts === from);
    // The last keyframe decoded before that frame and shown no later (a leading picture of an open
    // GOP needs the GOP before).
    const seek = packets.slice(0, at + 1).reduce((k, p) => (p.key && p.pts <= from ? p.pts : k), keyframe);
    if (end - seek > MAX_HEAD_SECONDS)
      return {
        method: 'reencode',
        reason: `the frames before ${seconds(end)} s need a decode from ${seek.toFixed(1)} s (more than ${MAX_HEAD_SECONDS} s)`,
      };
    const through = Math.max(...left.map((p) => p.dts));
    tail = { from, seek, through, frames: left.length };
  }
  const headFrames = packets.filter((p) => p.pts >= start - EPSILON && p.pts < keyframe - EPSILON).length;
  return { method: 'smart', keyframe: keyframe < start + EPSILON ? start : keyframe, outpoint, headFrames, tail };
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
    {
      input: op.videoInput,
      kind: op.manifest,
      aes128: op.aes128,
      maps: [op.videoRepresentation !== undefined ? representationMap(0, op.videoRepresentation) : '0:v:0'],
    },
    {
      input: op.audioInput,
      kind: op.manifest,
      aes128: op.aes128,
      maps: [op.audioRepresentation !== undefined ? representationMap(1, op.audioRepresentation) : '1:a:0'],
    },
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
export function fetchRangeArgs(
  inputs: readonly RangeInput[],
  start: number,
  end: number,
  output: string,
  opts: { progressUrl?: string; maxOutputBytes?: number } = {},
): string[] {
  const seek = seekArgs({ start, end, mode: 'precise' });
  return [
    ...QUIET,
    ...progress(opts.progressUrl),
    '-copyts',
    '-start_at_zero',
    ...inputs.flatMap((i) => [...seek, ...inputArgs(i.input, { kind: i.kind, aes128: i.aes128 })]),
    ...inputs.flatMap((i) => i.maps.flatMap((m) => ['-map', m])),
    '-c',
    'copy',
    '-to',
    seconds(end),
    ...(opts.maxOutputBytes !== undefined ? ['-fs', String(opts.maxOutputBytes)] : []),
    '-f',
    'nut',
    localPath(output, 'output'),
  ];
}

/** Step 2: the range's streams and packets, as JSON (read by parseRangeProbe). */
export function rangeProbeArgs(range: string): string[] {
  return [
    '-v',
    'error',
    '-print_format',
    'json',
    '-show_streams',
    '-show_entries',
    'packet=stream_index,pts_time,dts_time,duration_time,flags',
    '-protocol_whitelist',
    'file',
    '-format_whitelist',
    'nut',
    '-i',
    localPath(range, 'input'),
  ];
}

// ffprobe's level is the stream's level_idc: ten times the H.264 level (31 for 3.1, 9 for 1b),
// thirty times the HEVC one (93 for 3.1), which x265 takes as a parameter rather than -level.
function h264Level(video: VideoParams): string[] {
  if (video.level === undefined || video.level <= 0) return [];
  return ['-level:v', video.level === 9 ? '1b' : (video.level / 10).toFixed(1)];
}

// HEVC's limits per level (H.265 table A.8): largest picture and luma samples per second.
const HEVC_LEVELS: Record<number, [maxLumaPs: number, maxLumaSr: number]> = {
  30: [36_864, 552_960],
  60: [122_880, 3_686_400],
  63: [245_760, 7_372_800],
  90: [552_960, 16_588_800],
  93: [983_040, 33_177_600],
  120: [2_228_224, 66_846_720],
  123: [2_228_224, 133_693_440],
  150: [8_912_896, 267_386_880],
  153: [8_912_896, 534_773_760],
  156: [8_912_896, 1_069_547_520],
  180: [35_651_584, 1_069_547_520],
  183: [35_651_584, 2_139_095_040],
  186: [35_651_584, 4_278_190_080],
};

/**
 * Whether the stream fits the level it declares. x265, unlike x264, refuses to open at a level
 * too small for the picture or its rate (a source that understates its level would fail the job);
 * such a head gets the level x265 works out instead.
 */
function hevcLevelFits(video: VideoParams): boolean {
  const limits = video.level !== undefined ? HEVC_LEVELS[video.level] : undefined;
  if (limits === undefined) return false;
  const [maxPs, maxSr] = limits;
  const samples = video.width * video.height;
  const side = Math.sqrt(maxPs * 8);
  return (
    samples <= maxPs &&
    video.width <= side &&
    video.height <= side &&
    (video.frameRate === undefined || samples * video.frameRate <= maxSr)
  );
}

function x265Params(video: VideoParams): string {
  const level = hevcLevelFits(video) ? [`level-idc=${(video.level! / 30).toFixed(1)}`] : [];
  return ['log-level=error', ...level].join(':');
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
 * colour signalling (resolution and SAR come with the decoded frames). B-frames as the veryfast
 * presets make them (x264 and x265 both reorder by 2 frames, x264's Baseline by none), so the head's
 * decode times stay before the body's first one.
 */
export function headEncodeArgs(video: VideoParams): string[] {
  const profile = encoderProfile(video);
  if (profile === undefined)
    throw new TypeError(`no encoder profile for ${video.codec} ${video.profile ?? ''} ${video.pixFmt ?? ''}`);
  const encoder =
    video.codec === 'hevc'
      ? [
          '-c:v',
          'libx265',
          '-preset',
          'veryfast',
          '-crf',
          '18',
          '-profile:v',
          profile,
          '-x265-params',
          x265Params(video),
        ]
      : ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '18', '-profile:v', profile, ...h264Level(video)];
  return [...encoder, '-pix_fmt', video.pixFmt!, '-enc_time_base:v', video.timeBase, ...colour(video)];
}

function encodeSpanArgs(
  range: string,
  video: VideoParams,
  from: number,
  to: number,
  output: string,
  opts: { tail?: boolean },
): string[] {
  return [
    ...readRange(range),
    '-map',
    '0:v:0',
    '-vf',
    `trim=start=${exact(Math.max(0, from - EPSILON))}:end=${exact(to - EPSILON)}`,
    ...headEncodeArgs(video),
    // The tail follows the body, whose parameter sets it must not borrow: its own before its keyframe.
    ...(opts.tail ? ['-bf', '0', '-bsf:v', 'dump_extra=freq=keyframe'] : []),
    '-an',
    '-f',
    'nut',
    localPath(output, 'output'),
  ];
}

/** Step 3: decode the range from its first keyframe and encode the frames of [start, keyframe). */
export function headArgs(range: string, video: VideoParams, start: number, keyframe: number, output: string): string[] {
  return encodeSpanArgs(range, video, start, keyframe, output, {});
}

/**
 * Step 3c: the tail, the frames of [from, end) that the copy could not end on, decoded from the
 * packets bodyArgs set aside for it and encoded without B-frames: each of its decode times is then
 * its frame's time, which comes after every copied packet's (those decode before the first frame
 * left out).
 */
export function tailArgs(
  tailSource: string,
  video: VideoParams,
  tail: TailPlan,
  end: number,
  output: string,
): string[] {
  return encodeSpanArgs(tailSource, video, tail.from, end, output, { tail: true });
}

// Packets chosen by their times (the noise filter's drop expression) rather than by seeking, which
// in NUT lands on an index point, often the file's start.
function packetsBetween(firstPts: number, lastDts: number | undefined, inclusive: boolean): string {
  const before = `lt(pts*tb\\,${exact(Math.max(0, firstPts - EPSILON))})`;
  if (lastDts === undefined) return before;
  return `${before}+${inclusive ? 'gt' : 'gte'}(dts*tb\\,${exact(Math.max(0, inclusive ? lastDts + EPSILON : lastDts - EPSILON))})`;
}

/**
 * Step 3b: the body, copied packet for packet from the keyframe to the outpoint. When there is a
 * tail, the same read sets aside its packets (from its keyframe through the last one its frames
 * need) for tailArgs to decode, so no step decodes the range from its start.
 */
export function bodyArgs(
  range: string,
  video: Pick<VideoParams, 'codec'>,
  keyframe: number,
  outpoint: number | undefined,
  output: string,
  tailSource?: { tail: TailPlan; output: string },
): string[] {
  // HEVC to Annex B here, with the parameter sets before each keyframe: the concat demuxer does that
  // for H.264 only (see joinScript).
  const annexB = video.codec === 'hevc' ? ',hevc_mp4toannexb' : '';
  return [
    ...readRange(range),
    '-map',
    '0:v:0',
    '-c',
    'copy',
    '-bsf:v',
    `noise=drop=${packetsBetween(keyframe, outpoint, false)}${annexB}`,
    '-an',
    '-f',
    'nut',
    localPath(output, 'output'),
    ...(tailSource !== undefined
      ? [
          '-map',
          '0:v:0',
          '-c',
          'copy',
          '-bsf:v',
          `noise=drop=${packetsBetween(tailSource.tail.seek, tailSource.tail.through, true)}`,
          '-an',
          '-f',
          'nut',
          localPath(tailSource.output, 'output'),
        ]
      : []),
  ];
}

/**
 * The concat demuxer's script: the head from `start` for its exact length, the body from its
 * keyframe to the tail (each `inpoint` is where its file's time counts from, so each part lands where
 * the source had it), then the tail. Its `auto_convert` (on by default) turns each file's H.264
 * into Annex B with that file's own SPS/PPS before every IDR frame, so the body carries its
 * parameter sets in-band and no decoder uses the head's for it; HEVC bodies arrive in Annex B
 * already (bodyArgs), and the tail carries its own (tailArgs).
 */
export function joinScript(
  head: string | undefined,
  body: string,
  start: number,
  keyframe: number,
  tail?: { file: string; from: number },
): string {
  const quote = (file: string) => `'${file.replace(/'/g, "'\\''")}'`;
  const lines = ['ffconcat version 1.0'];
  if (head !== undefined)
    lines.push(`file ${quote(head)}`, `inpoint ${exact(start)}`, `duration ${exact(keyframe - start)}`);
  lines.push(`file ${quote(body)}`, `inpoint ${exact(keyframe)}`);
  if (tail !== undefined)
    lines.push(`duration ${exact(tail.from - keyframe)}`, `file ${quote(tail.file)}`, `inpoint ${exact(tail.from)}`);
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

function muxTail(format: Container, opts: Pick<FinishOptions, 'tags' | 'maxOutputBytes'>, output: string): string[] {
  const faststart = format === 'mp4' ? ['-movflags', '+faststart'] : [];
  return [
    ...metadataArgs(format, opts.tags),
    ...faststart,
    ...(opts.maxOutputBytes !== undefined ? ['-fs', String(opts.maxOutputBytes)] : []),
    '-f',
    muxerFor(format as OutputFormat),
    localPath(output, 'output'),
  ];
}

/** One audio packet of the range, times in seconds. */
export interface AudioPacket {
  pts: number;
  duration: number;
}

/** How the audio is copied rather than encoded: its packets from `from`, shifted by `offset`. */
export interface AudioCopyPlan {
  /** ffmpeg's output `-ss` (in the range's times): halfway into the packet before the pre-roll one. */
  from: number;
  /** ffmpeg's `-output_ts_offset`: `from − start`, so `start` lands on 0 and the pre-roll before it. */
  offset: number;
}

/**
 * Whether the range's audio can be copied and cut at the sample by an MP4 edit list, and how. AAC
 * packets are copied from the one before the packet holding `start` (an AAC frame decodes right only
 * after the one before it, so that one is decoded and dropped), shifted so `start` is time 0: the
 * packets before it get negative times, which the MP4 muxer turns into an edit list that players
 * skip to the sample. The packets up to `end` must follow each other without a gap or an overlap
 * (ffmpeg 5.1's DASH demuxer repeats a second's audio after a seek; see audioTrim), else undefined:
 * the audio is encoded as before. Matroska keeps no such edit, so only MP4 copies.
 */
export function planAudioCopy(
  codec: string | undefined,
  packets: readonly AudioPacket[],
  start: number,
  end: number,
  format: Container,
): AudioCopyPlan | undefined {
  if (codec !== 'aac' || format !== 'mp4') return undefined;
  const sorted = [...packets].sort((a, b) => a.pts - b.pts);
  const at = sorted.findIndex((p) => p.pts <= start + 1e-6 && start < p.pts + p.duration - 1e-6);
  if (at < 1) return undefined; // start outside the audio, or no packet before it to decode first
  for (let i = at - 1; i < sorted.length && sorted[i].pts < end; i++) {
    const p = sorted[i];
    if (!(p.duration > 0)) return undefined;
    const next = sorted[i + 1];
    if (next !== undefined && next.pts < end && Math.abs(next.pts - (p.pts + p.duration)) > 0.001) return undefined;
  }
  const preroll = sorted[at - 1];
  const from = preroll.pts - preroll.duration / 2;
  if (from < 0) return undefined; // ffmpeg's -ss takes no negative time
  return { from, offset: from - start };
}

/**
 * Step 3d when planAudioCopy allows it: the audio's packets copied into an M4A whose edit list starts
 * it at `start` (decoded, the same samples as the source's from `start`); it ends with the last packet
 * starting before `end`, at most one frame (21 ms at 48 kHz) after it.
 */
export function audioCopyArgs(range: string, plan: AudioCopyPlan, end: number, output: string): string[] {
  return [
    ...readRange(range),
    '-map',
    '0:a:0',
    '-c:a',
    'copy',
    '-ss',
    exact(plan.from),
    '-to',
    seconds(end),
    '-output_ts_offset',
    `-${exact(-plan.offset)}`,
    '-vn',
    '-f',
    'mp4',
    localPath(output, 'output'),
  ];
}

/**
 * Step 3d, beside the head and the body: the audio of the range cut at the sample and encoded once,
 * into an M4A whose edit list keeps the encoder's priming (the join copies it with the same
 * timestamps as when it encoded the audio itself, checked packet for packet).
 */
export function audioArgs(range: string, start: number, end: number, output: string, format: Container): string[] {
  return [
    ...readRange(range),
    '-map',
    '0:a:0',
    ...audioTrim(start, end),
    ...audioEncoder(format),
    '-vn',
    '-f',
    'mp4',
    localPath(output, 'output'),
  ];
}

/**
 * Step 4: the video from the concat script (copied; in MP4 tagged avc3 or hev1, whose sample
 * entries allow parameter sets in the samples) and the audio from audioArgs's file, both copied:
 * nothing is encoded here.
 */
export function joinArgs(
  script: string,
  audio: string | undefined,
  output: string,
  opts: Omit<FinishOptions, 'audio'> & { codec: string },
): string[] {
  const tag = opts.format === 'mp4' ? ['-tag:v', opts.codec === 'hevc' ? 'hev1' : 'avc3'] : [];
  return [
    ...QUIET,
    ...progress(opts.progressUrl),
    '-copyts',
    '-protocol_whitelist',
    'file',
    '-format_whitelist',
    'concat,nut',
    '-f',
    'concat',
    '-safe',
    '0',
    '-i',
    localPath(script, 'input'),
    ...(audio !== undefined
      ? ['-protocol_whitelist', 'file', '-format_whitelist', 'mov', '-i', localPath(audio, 'input')]
      : []),
    '-map',
    '0:v:0',
    ...(audio !== undefined ? ['-map', '1:a:0'] : []),
    '-c:v',
    'copy',
    ...tag,
    ...(audio !== undefined ? ['-c:a', 'copy'] : []),
    ...muxTail(opts.format, opts, output),
  ];
}

/** The fallback: every stream of the range re-encoded, cut to [start, end) (today's precise clip). */
export function reencodeRangeArgs(
  range: string,
  start: number,
  end: number,
  output: string,
  opts: FinishOptions & { video: boolean },
): string[] {
  const encoders = encodeAll(opts.format);
  const videoEnc = encoders.slice(0, encoders.indexOf('-c:a'));
  return [
    ...QUIET,
    ...progress(opts.progressUrl),
    '-copyts',
    '-protocol_whitelist',
    'file',
    '-format_whitelist',
    'nut',
    '-i',
    localPath(range, 'input'),
    ...(opts.video
      ? ['-map', '0:v:0', '-vf', `trim=start=${seconds(start)}:end=${seconds(end)},setpts=PTS-STARTPTS`, ...videoEnc]
      : []),
    ...(opts.audio ? ['-map', '0:a:0', ...audioTrim(start, end), ...audioEncoder(opts.format)] : []),
    ...muxTail(opts.format, opts, output),
  ];
}
