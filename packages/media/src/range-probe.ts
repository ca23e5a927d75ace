// The copied range of a smart cut as ffprobe reads it: the video's parameters (what the head encode
// must match) and its packets in decode order (where the keyframes are).
import { z } from 'zod';
import type { ChildLimits } from './limits.js';
import { spawnBounded, toFfmpegError, trackDetached } from './runner.js';
import { rangeProbeArgs, type AudioPacket, type RangePacket, type VideoParams } from './smartcut.js';

export interface RangeInfo {
  video: VideoParams | undefined;
  /** Whether the range has an audio stream. */
  audio: boolean;
  /** The first audio stream's codec (`aac`) and packets in the order read, when there is one. */
  audioCodec?: string;
  audioPackets: AudioPacket[];
  /** The video's packets in decode order. */
  packets: RangePacket[];
}

const num = z.union([z.string(), z.number()]).optional();
const RangeJson = z.object({
  streams: z
    .array(
      z.object({
        index: z.number().int(),
        codec_type: z.string().optional(),
        codec_name: z.string().optional(),
        profile: z.string().optional(),
        level: z.number().int().optional(),
        width: z.number().int().optional(),
        height: z.number().int().optional(),
        pix_fmt: z.string().optional(),
        field_order: z.string().optional(),
        time_base: z.string().optional(),
        avg_frame_rate: z.string().optional(),
        has_b_frames: z.number().int().optional(),
        color_range: z.string().optional(),
        color_space: z.string().optional(),
        color_transfer: z.string().optional(),
        color_primaries: z.string().optional(),
      }),
    )
    .default([]),
  packets: z
    .array(
      z.object({
        stream_index: z.number().int(),
        pts_time: num,
        dts_time: num,
        duration_time: num,
        flags: z.string().optional(),
      }),
    )
    .default([]),
});

const time = (v: string | number | undefined): number | undefined => {
  const n = Number(v);
  return v !== undefined && v !== 'N/A' && Number.isFinite(n) ? n : undefined;
};

/** ffprobe's `30000/1001` as a number; `0/0` (unknown) as undefined. */
function rate(v: string | undefined): number | undefined {
  const [num, den] = (v ?? '').split('/').map(Number);
  return num > 0 && den > 0 ? num / den : undefined;
}

/** ffprobe's JSON of rangeProbeArgs as the range's video, audio and video packets. */
export function parseRangeProbe(json: string): RangeInfo {
  const parsed = RangeJson.parse(JSON.parse(json));
  const v = parsed.streams.find((s) => s.codec_type === 'video');
  const a = parsed.streams.find((s) => s.codec_type === 'audio');
  const audio = a !== undefined;
  const audioPackets: AudioPacket[] = [];
  for (const p of a ? parsed.packets : []) {
    const pts = time(p.pts_time);
    const duration = time(p.duration_time);
    if (p.stream_index === a?.index && pts !== undefined && duration !== undefined)
      audioPackets.push({ pts, duration });
  }
  const audioFacts = { audio, ...(a?.codec_name !== undefined ? { audioCodec: a.codec_name } : {}), audioPackets };
  if (!v) return { video: undefined, ...audioFacts, packets: [] };
  const video: VideoParams = {
    codec: v.codec_name ?? 'unknown',
    profile: v.profile,
    level: v.level,
    width: v.width ?? 0,
    height: v.height ?? 0,
    pixFmt: v.pix_fmt,
    fieldOrder: v.field_order,
    timeBase: v.time_base ?? '1/90000',
    frameRate: rate(v.avg_frame_rate),
    reorderDepth: v.has_b_frames ?? 0,
    colorRange: v.color_range,
    colorSpace: v.color_space,
    colorTransfer: v.color_transfer,
    colorPrimaries: v.color_primaries,
  };
  const packets: RangePacket[] = [];
  let lastDts = -Infinity;
  for (const p of parsed.packets) {
    if (p.stream_index !== v.index) continue;
    const pts = time(p.pts_time);
    // A packet without a decode time (NUT leaves out the ones before 0) decodes just before the next.
    const dts = time(p.dts_time) ?? (Number.isFinite(lastDts) ? lastDts : (pts ?? 0) - 1);
    lastDts = dts;
    if (pts === undefined) continue;
    packets.push({ pts, dts, key: (p.flags ?? '').includes('K') });
  }
  return { video, ...audioFacts, packets };
}

export interface RangeProbeOptions {
  binary: string;
  signal?: AbortSignal;
  timeoutMs: number;
  limits?: ChildLimits;
}

/** ffprobe of a local range file (no network: the file and NUT only). */
export async function probeRange(range: string, opts: RangeProbeOptions): Promise<RangeInfo> {
  const started = spawnBounded(opts.binary, rangeProbeArgs(range), opts.limits, {
    cancelSignal: opts.signal,
    timeout: opts.timeoutMs,
    forceKillAfterDelay: 2_000,
    stdin: 'ignore',
    detached: true,
    maxBuffer: 64 * 1024 * 1024,
  });
  const untrack = trackDetached(started.subprocess);
  let stdout: string;
  try {
    ({ stdout } = (await started.subprocess) as { stdout: string });
  } catch (err) {
    const stderr = (err as { stderr?: unknown }).stderr;
    throw toFfmpegError(
      err,
      'ffprobe',
      typeof stderr === 'string' ? stderr.slice(-2000) : '',
      opts.timeoutMs,
      started.watch,
    );
  } finally {
    started.watch?.stop();
    untrack();
  }
  return parseRangeProbe(stdout);
}
