// The ffmpeg operations (merge, convert, remux) as data, and pure builders of their argument arrays.
import { codecsFit, isContainer, muxerFor, normaliseCodec, type AudioFormat, type Container, type OutputFormat } from './containers.js';

/** Inputs are `http://` URLs of the local egress relay, or local file paths (never another scheme). */
export type MediaInput = string;

/** A video-only and an audio-only progressive file into one file, both streams copied. */
export interface MergeOperation {
  type: 'merge';
  videoInput: MediaInput;
  audioInput: MediaInput;
  container: Container;
}

/**
 * One file into another format. The codecs (RFC 6381 or ffprobe names, from the extract result or
 * probe()) allow a stream copy where they fit; an unknown codec is transcoded, which always works.
 */
export interface ConvertOperation {
  type: 'convert';
  input: MediaInput;
  format: OutputFormat;
  videoCodec?: string;
  audioCodec?: string;
}

interface RemuxCommon {
  type: 'remux';
  /** What the input is; HLS segments are usually MPEG-TS, whose AAC needs aac_adtstoasc for mp4. */
  manifest: 'hls' | 'dash';
  container: Container;
  /** The audio codec if known: an AAC HLS input into mp4 gets `-bsf:a aac_adtstoasc`. */
  audioCodec?: string;
  /** HLS with AES-128 keys: ffmpeg then reads segments through its `crypto` protocol. */
  aes128?: boolean;
}

/**
 * A segmented stream (HLS media playlist or DASH manifest) into one file, streams copied. A DASH
 * source names one representation (`#representation=ID`): pass its id to pick that stream.
 */
export type RemuxOperation = RemuxCommon &
  (
    | { input: MediaInput; representation?: string; videoInput?: never; audioInput?: never }
    | { input?: never; videoInput: MediaInput; audioInput: MediaInput; videoRepresentation?: string; audioRepresentation?: string }
  );

export type MediaOperation = MergeOperation | ConvertOperation | RemuxOperation;

export interface BuildContext {
  /** A local path (the worker's temporary file): the muxer is named, so any extension works. */
  output: string;
  /** Where ffmpeg writes `-progress` blocks; the runner reads them from stdout. */
  progressUrl?: string;
}

export interface FfmpegArgs {
  /** `-protocol_whitelist … -i …` for each input, in input order. */
  inputArgs: string[];
  /** Stream selection, codecs and muxer, without the output path. */
  outputArgs: string[];
  /** The whole argument vector (without the binary), output path last. */
  args: string[];
}

/** The format of the file an operation writes. */
export function outputFormat(op: MediaOperation): OutputFormat {
  return op.type === 'convert' ? op.format : op.container;
}

// No banner or stdin (a worker has no terminal); only errors on stderr, so its tail is the reason a
// run failed; machine-readable progress on stdout instead of the interactive stats line.
function globalArgs(progressUrl: string): string[] {
  return ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-progress', progressUrl, '-nostats'];
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * `-protocol_whitelist` is set per input, just before its `-i`: ffmpeg passes it on to everything the
 * demuxer opens (HLS and DASH playlists, segments, keys), so a manifest cannot make ffmpeg read a local
 * file, another host over https, or a `concat:`/`data:`/`subfile:` URL. ffmpeg 5.1 needs `http,tcp`
 * for HLS and DASH over http (the demuxers open segments through the http protocol), plus `crypto` for
 * AES-128 HLS; local files get `file` alone. A network input never gets `file`, and vice versa.
 */
export function inputArgs(input: MediaInput, opts: { aes128?: boolean } = {}): string[] {
  const crypto = opts.aes128 ? ['crypto'] : [];
  if (/^http:\/\//i.test(input)) return ['-protocol_whitelist', [...crypto, 'http', 'tcp'].join(','), '-i', input];
  return ['-protocol_whitelist', [...crypto, 'file'].join(','), '-i', localPath(input, 'input')];
}

/**
 * A local path with an explicit `file:` protocol, so a name like `a:b.mp4` is never read as a protocol.
 * Anything that looks like a URL is refused: ffmpeg reads the network only through the local relay.
 */
function localPath(path: string, what: 'input' | 'output'): string {
  if (path === '' || SCHEME.test(path)) {
    throw new TypeError(`ffmpeg ${what} must be ${what === 'input' ? 'an http:// relay URL or ' : ''}a file path (prefix a relative name containing ':' with ./): ${path}`);
  }
  return `file:${path}`;
}

// `-map N:m:id:ID` selects a DASH representation by the `id` tag ffmpeg's DASH demuxer sets. ffmpeg
// splits stream specifiers at ':' and unescapes quotes and backslashes, so only plain ids are accepted.
function representationMap(inputIndex: number, id: string): string {
  if (!/^[\w.\-=+/]+$/.test(id)) throw new TypeError(`unsupported DASH representation id: ${id}`);
  return `${inputIndex}:m:id:${id}`;
}

// +faststart moves the index (moov) before the media so the file plays and seeks before it is all
// downloaded; it applies to every MP4-family muxer.
function muxArgs(format: OutputFormat): string[] {
  const faststart = format === 'mp4' || format === 'm4a' ? ['-movflags', '+faststart'] : [];
  return [...faststart, '-f', muxerFor(format)];
}

function mergeArgs(op: MergeOperation): Pick<FfmpegArgs, 'inputArgs' | 'outputArgs'> {
  return {
    inputArgs: [...inputArgs(op.videoInput), ...inputArgs(op.audioInput)],
    outputArgs: ['-map', '0:v:0', '-map', '1:a:0', '-c', 'copy', ...muxArgs(op.container)],
  };
}

// Audio encoders per format, and the codec that may be copied instead of re-encoding (a second lossy
// encode only loses quality). WAV is always written as 16-bit PCM: cheap, and what players expect.
const AUDIO_ENCODE: Record<AudioFormat, { copyable?: string; encode: string[] }> = {
  mp3: { copyable: 'mp3', encode: ['-c:a', 'libmp3lame', '-q:a', '2'] }, // VBR ~190 kb/s
  m4a: { copyable: 'aac', encode: ['-c:a', 'aac', '-b:a', '192k'] },
  opus: { copyable: 'opus', encode: ['-c:a', 'libopus', '-b:a', '128k'] },
  wav: { encode: ['-c:a', 'pcm_s16le'] },
};

// Encoders for streams that do not fit a container. yuv420p keeps 10-bit or 4:4:4 sources playable.
const VIDEO_ENCODE: Record<Exclude<Container, 'mkv'>, string[]> = {
  mp4: ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p'],
  webm: ['-c:v', 'libvpx-vp9', '-crf', '32', '-b:v', '0', '-row-mt', '1', '-deadline', 'good', '-cpu-used', '4', '-pix_fmt', 'yuv420p'],
};
const CONTAINER_AUDIO_ENCODE: Record<Exclude<Container, 'mkv'>, string[]> = {
  mp4: ['-c:a', 'aac', '-b:a', '192k'],
  webm: ['-c:a', 'libopus', '-b:a', '128k'],
};

function convertArgs(op: ConvertOperation): Pick<FfmpegArgs, 'inputArgs' | 'outputArgs'> {
  const input = inputArgs(op.input);
  const format = op.format;
  if (!isContainer(format)) {
    const spec = AUDIO_ENCODE[format];
    const copy = spec.copyable !== undefined && normaliseCodec(op.audioCodec) === spec.copyable;
    // The first audio stream only; -vn also keeps cover art out of audio files.
    return { inputArgs: input, outputArgs: ['-map', '0:a:0', '-vn', ...(copy ? ['-c:a', 'copy'] : spec.encode), ...muxArgs(format)] };
  }
  // The first video and audio stream, each optional ('?') so audio-only or video-only inputs work;
  // data and subtitle streams (e.g. ID3 in MPEG-TS) would make some muxers fail.
  const maps = ['-map', '0:v:0?', '-map', '0:a:0?'];
  if (format === 'mkv') return { inputArgs: input, outputArgs: [...maps, '-c', 'copy', ...muxArgs(format)] };
  const copyVideo = op.videoCodec !== undefined && codecsFit(format, op.videoCodec, undefined);
  const copyAudio = op.audioCodec !== undefined && codecsFit(format, undefined, op.audioCodec);
  const codecs =
    copyVideo && copyAudio
      ? ['-c', 'copy']
      : [...(copyVideo ? ['-c:v', 'copy'] : VIDEO_ENCODE[format]), ...(copyAudio ? ['-c:a', 'copy'] : CONTAINER_AUDIO_ENCODE[format])];
  return { inputArgs: input, outputArgs: [...maps, ...codecs, ...muxArgs(format)] };
}

function remuxArgs(op: RemuxOperation): Pick<FfmpegArgs, 'inputArgs' | 'outputArgs'> {
  const opts = { aes128: op.aes128 };
  let inputs: string[];
  let maps: string[];
  if (op.input !== undefined) {
    inputs = inputArgs(op.input, opts);
    maps = op.representation !== undefined ? ['-map', representationMap(0, op.representation)] : ['-map', '0:v:0?', '-map', '0:a:0?'];
  } else {
    inputs = [...inputArgs(op.videoInput, opts), ...inputArgs(op.audioInput, opts)];
    maps = [
      '-map', op.videoRepresentation !== undefined ? representationMap(0, op.videoRepresentation) : '0:v:0',
      '-map', op.audioRepresentation !== undefined ? representationMap(1, op.audioRepresentation) : '1:a:0',
    ];
  }
  // MPEG-TS carries AAC as ADTS frames; MP4 wants raw AAC with a config record. ffmpeg 5.1's mp4
  // muxer also inserts this filter itself, but naming it does not depend on that, and the filter
  // passes raw AAC (fMP4 HLS) through unchanged. It rejects other codecs, hence only for known AAC.
  const bsf = op.container === 'mp4' && op.manifest === 'hls' && normaliseCodec(op.audioCodec) === 'aac' ? ['-bsf:a', 'aac_adtstoasc'] : [];
  return { inputArgs: inputs, outputArgs: [...maps, '-c', 'copy', ...bsf, ...muxArgs(op.container)] };
}

/** The full ffmpeg argument vector of an operation. Pure: same operation, same array. */
export function buildArgs(op: MediaOperation, ctx: BuildContext): FfmpegArgs {
  let parts: Pick<FfmpegArgs, 'inputArgs' | 'outputArgs'>;
  switch (op.type) {
    case 'merge':
      parts = mergeArgs(op);
      break;
    case 'convert':
      parts = convertArgs(op);
      break;
    case 'remux':
      parts = remuxArgs(op);
      break;
    default: {
      const unknown: never = op;
      throw new TypeError(`unknown media operation: ${JSON.stringify(unknown)}`);
    }
  }
  const output = localPath(ctx.output, 'output');
  return { ...parts, args: [...globalArgs(ctx.progressUrl ?? 'pipe:1'), ...parts.inputArgs, ...parts.outputArgs, output] };
}
