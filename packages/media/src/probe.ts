// ffprobe as a typed summary: streams, codecs, duration and size of one input.
import { ExecaError } from 'execa';
import type { ChildLimits, ChildWatch } from './limits.js';
import { z } from 'zod';
import { inputArgs, type InputKind, type MediaInput } from './inputs.js';
import { spawnBounded, STDERR_TAIL_BYTES, toFfmpegError, trackDetached } from './runner.js';

export type StreamType = 'video' | 'audio' | 'subtitle' | 'data' | 'attachment' | 'unknown';

export interface ProbeStream {
  index: number;
  type: StreamType;
  /** ffprobe's codec name (`h264`, `aac`…); undefined for streams ffmpeg cannot identify. */
  codec: string | undefined;
  width?: number;
  height?: number;
}

export interface ProbeResult {
  durationSeconds: number | undefined;
  /** ffprobe's demuxer names, e.g. `mov,mp4,m4a,3gp,3g2,mj2`. */
  formatName: string;
  streams: ProbeStream[];
  /** Bytes, when ffprobe knows (not for some network inputs). */
  size: number | undefined;
}

// Only the fields used; zod drops the rest. ffprobe prints numbers of the format section as strings.
const ProbeJson = z.object({
  format: z.object({
    format_name: z.string(),
    duration: z.string().optional(),
    size: z.string().optional(),
  }),
  streams: z
    .array(
      z.object({
        index: z.number().int(),
        codec_type: z.string().optional(),
        codec_name: z.string().optional(),
        width: z.number().int().optional(),
        height: z.number().int().optional(),
      }),
    )
    .default([]),
});

const STREAM_TYPES = new Set<string>(['video', 'audio', 'subtitle', 'data', 'attachment']);

function finite(value: string | undefined): number | undefined {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) ? n : undefined;
}

export interface ProbeOptions {
  binary?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** What the input is (default progressive) and whether it is AES-128 HLS: the same whitelists as ffmpeg. */
  kind?: InputKind;
  aes128?: boolean;
  /** Added to the environment, e.g. `http_proxy`; an undefined value removes a variable. */
  env?: Record<string, string | undefined>;
  /** Memory and CPU bounds (the worker's JOB_MAX_*); none when undefined. */
  limits?: ChildLimits;
}

/** ffprobe one input (a local file, or an http:// URL with headers) with the same whitelists as ffmpeg. */
export async function probe(input: MediaInput, opts: ProbeOptions = {}): Promise<ProbeResult> {
  const binary = opts.binary ?? 'ffprobe'; // the worker passes FFPROBE_PATH's resolution
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const args = [
    '-v',
    'error',
    '-print_format',
    'json',
    '-show_format',
    '-show_streams',
    ...inputArgs(input, { kind: opts.kind, aes128: opts.aes128 }),
  ];
  let stdout: string;
  let watch: ChildWatch | undefined;
  try {
    const started = spawnBounded(binary, args, opts.limits, {
      cancelSignal: opts.signal,
      timeout: timeoutMs,
      forceKillAfterDelay: 2_000,
      stdin: 'ignore',
      env: opts.env,
      detached: true,
    });
    watch = started.watch;
    const untrack = trackDetached(started.subprocess);
    try {
      ({ stdout } = (await started.subprocess) as { stdout: string });
    } finally {
      watch?.stop();
      untrack();
    }
  } catch (err) {
    const stderr: unknown = err instanceof ExecaError ? err.stderr : undefined;
    const tail = typeof stderr === 'string' ? stderr.trim().slice(-STDERR_TAIL_BYTES) : '';
    throw toFfmpegError(err, 'ffprobe', tail, timeoutMs, watch);
  }
  const parsed = ProbeJson.parse(JSON.parse(stdout));
  return {
    durationSeconds: finite(parsed.format.duration),
    formatName: parsed.format.format_name,
    size: finite(parsed.format.size),
    streams: parsed.streams.map((s) => ({
      index: s.index,
      type: s.codec_type && STREAM_TYPES.has(s.codec_type) ? (s.codec_type as StreamType) : 'unknown',
      codec: s.codec_name,
      ...(s.width !== undefined ? { width: s.width } : {}),
      ...(s.height !== undefined ? { height: s.height } : {}),
    })),
  };
}
