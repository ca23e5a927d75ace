// ffprobe as a typed summary, and the faststart check (is moov before mdat) read from the MP4 header.
import fs from 'node:fs/promises';
import { execa, ExecaError } from 'execa';
import { z } from 'zod';
import { inputArgs, type InputKind, type MediaInput } from './inputs.js';
import { STDERR_TAIL_BYTES, toFfmpegError } from './runner.js';

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
}

/** ffprobe one input (a local file, or an http:// URL with headers) with the same whitelists as ffmpeg. */
export async function probe(input: MediaInput, opts: ProbeOptions = {}): Promise<ProbeResult> {
  const binary = opts.binary ?? 'ffprobe'; // the worker passes FFPROBE_PATH's resolution
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const args = ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', ...inputArgs(input, { kind: opts.kind, aes128: opts.aes128 })];
  let stdout: string;
  try {
    ({ stdout } = await execa(binary, args, { cancelSignal: opts.signal, timeout: timeoutMs, forceKillAfterDelay: 2_000, stdin: 'ignore', env: opts.env }));
  } catch (err) {
    const stderr: unknown = err instanceof ExecaError ? err.stderr : undefined;
    const tail = typeof stderr === 'string' ? stderr.trim().slice(-STDERR_TAIL_BYTES) : '';
    throw toFfmpegError(err, 'ffprobe', tail, timeoutMs);
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

/**
 * Whether the `moov` box comes before `mdat` among the file's top-level boxes (what +faststart
 * does). Reads only box headers: 32-bit size and type, a 64-bit size when the 32-bit one is 1, and
 * size 0 meaning "to the end of the file". Throws for a file with neither box (not an MP4).
 */
export async function moovBeforeMdat(file: string): Promise<boolean> {
  const handle = await fs.open(file, 'r');
  try {
    const { size: fileSize } = await handle.stat();
    const header = Buffer.alloc(16);
    let offset = 0;
    while (offset + 8 <= fileSize) {
      const { bytesRead } = await handle.read(header, 0, 16, offset);
      if (bytesRead < 8) break;
      const type = header.toString('latin1', 4, 8);
      if (type === 'moov') return true;
      if (type === 'mdat') return false;
      let boxSize = header.readUInt32BE(0);
      if (boxSize === 1) {
        if (bytesRead < 16) break;
        const large = header.readBigUInt64BE(8);
        if (large > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`MP4 box too large at offset ${offset} in ${file}`);
        boxSize = Number(large);
      } else if (boxSize === 0) {
        break; // the last box runs to the end of the file, and it is neither moov nor mdat
      }
      if (boxSize < 8) throw new Error(`invalid MP4 box size ${boxSize} at offset ${offset} in ${file}`);
      offset += boxSize;
    }
  } finally {
    await handle.close();
  }
  throw new Error(`no moov or mdat box in ${file}: not an MP4 file`);
}
