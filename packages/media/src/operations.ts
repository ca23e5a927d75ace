// The ffmpeg operations (merge, convert, remux) as data, and pure builders of their argument arrays.
// A clip, tags and cover art are composed into any of them (clip.ts, tags.ts).
import type { AudioFormat, Container, ManifestKind, OutputFormat } from '@reelay/contracts';
import { lengthArgs, reencodes, seekArgs, type ClipRange } from './clip.js';
import { codecsFit, isContainer, muxerFor, normaliseCodec } from './containers.js';
import { inputArgs, localPath, type InputKind, type MediaInput } from './inputs.js';
import { embedArgs, subtitleArgs, type SubtitleOperation, type SubtitleTrack } from './subtitles.js';
import { COVER_FORMATS, coverInputArgs, coverOutputArgs, metadataArgs, type TagPlan } from './tags.js';

/** What any operation may add to its output. */
export interface OutputExtras {
  /** Cut to [start, end) seconds of the input(s). */
  clip?: ClipRange;
  /** Tags to write, or false for none; undefined leaves ffmpeg's defaults (jobs queued before tags). */
  tags?: TagPlan;
  /**
   * Cover art for mp3, m4a and opus: a local JPEG (mp3, m4a) or ffmetadata file (opus) made before
   * the run from the item's thumbnail. Ignored for other formats.
   */
  cover?: string;
}

/**
 * A video-only and an audio-only progressive file into one file. Streams are copied, except a stream
 * whose codec is known not to fit the container (vp9 asked into mp4), which is encoded.
 */
export interface MergeOperation extends OutputExtras {
  type: 'merge';
  videoInput: MediaInput;
  audioInput: MediaInput;
  container: Container;
  videoCodec?: string;
  audioCodec?: string;
  /** Subtitle tracks to embed (subtitles.ts). */
  subtitles?: SubtitleTrack[];
}

/**
 * One file into another format. The codecs (RFC 6381 or ffprobe names, from the extract result or
 * probe()) allow a stream copy where they fit; an unknown codec is transcoded, which always works.
 */
export interface ConvertOperation extends OutputExtras {
  type: 'convert';
  input: MediaInput;
  format: OutputFormat;
  videoCodec?: string;
  audioCodec?: string;
  /** A segmented input (an HLS playlist or DASH manifest) instead of a progressive file. */
  manifest?: ManifestKind;
  /** The DASH representation to take (by id) instead of the first video and audio stream. */
  representation?: string;
  /** Only that representation's video or audio stream (an id an audio and a video representation share). */
  representationType?: RepresentationType;
  /** AES-128 HLS: allows the `crypto` protocol. */
  aes128?: boolean;
  /** Subtitle tracks to embed (a video format only). */
  subtitles?: SubtitleTrack[];
  /**
   * The streams are known to fit the format whatever their codecs (a whole file written again in its
   * own container): copied, unless a clip re-encodes. wav is always written as PCM.
   */
  streamsFit?: boolean;
}

interface RemuxCommon extends OutputExtras {
  type: 'remux';
  /** What the input is; HLS segments are usually MPEG-TS, whose AAC needs aac_adtstoasc for mp4. */
  manifest: ManifestKind;
  container: Container;
  /** The audio codec if known: an AAC HLS input into mp4 gets `-bsf:a aac_adtstoasc`. */
  audioCodec?: string;
  /** HLS with AES-128 keys: ffmpeg then reads segments through its `crypto` protocol. */
  aes128?: boolean;
  /** Subtitle tracks to embed. */
  subtitles?: SubtitleTrack[];
}

/**
 * A segmented stream (HLS media playlist or DASH manifest) into one file, streams copied. A DASH
 * source names one representation (`#representation=ID`): pass its id to pick that stream.
 */
export type RemuxOperation = RemuxCommon &
  (
    | {
        input: MediaInput;
        representation?: string;
        representationType?: RepresentationType;
        videoInput?: never;
        audioInput?: never;
      }
    | {
        input?: never;
        videoInput: MediaInput;
        audioInput: MediaInput;
        videoRepresentation?: string;
        audioRepresentation?: string;
      }
  );

export type MediaOperation = MergeOperation | ConvertOperation | RemuxOperation | SubtitleOperation;

export interface BuildContext {
  /** A local path (the worker's temporary file): the muxer is named, so any extension works. */
  output: string;
  /** Where ffmpeg writes `-progress` blocks; the runner reads them from stdout. */
  progressUrl?: string;
  /**
   * `-fs`: ffmpeg stops writing past this many bytes, so a runaway output cannot fill the disk. It
   * then exits as if the input had ended, so the caller must treat an output this large as a failure.
   */
  maxOutputBytes?: number;
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
  return op.type === 'convert' || op.type === 'subtitle' ? op.format : op.container;
}

// No banner or stdin (a worker has no terminal); only errors on stderr, so its tail is the reason a
// run failed; machine-readable progress on stdout instead of the interactive stats line.
function globalArgs(progressUrl: string): string[] {
  return ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-progress', progressUrl, '-nostats'];
}

/** Which stream of a DASH representation: video or audio, when an id names one of each. */
export type RepresentationType = 'video' | 'audio';

// `-map N:m:id:ID` selects a DASH representation by the `id` tag ffmpeg's DASH demuxer sets; with a
// type (`N:v:m:id:ID`) only that kind of stream, as ids may repeat across adaptation sets. ffmpeg
// splits stream specifiers at ':' and unescapes quotes and backslashes, so only plain ids are accepted.
export function representationMap(inputIndex: number, id: string, type?: RepresentationType): string {
  if (!/^[\w.\-=+/]+$/.test(id)) throw new TypeError(`unsupported DASH representation id: ${id}`);
  const only = type === undefined ? '' : type === 'video' ? 'v:' : 'a:';
  return `${inputIndex}:${only}m:id:${id}`;
}

// +faststart moves the index (moov) before the media so the file plays and seeks before it is all
// downloaded; it applies to every MP4-family muxer.
function muxArgs(format: OutputFormat): string[] {
  const faststart = format === 'mp4' || format === 'm4a' ? ['-movflags', '+faststart'] : [];
  return [...faststart, '-f', muxerFor(format)];
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
  webm: [
    '-c:v',
    'libvpx-vp9',
    '-crf',
    '32',
    '-b:v',
    '0',
    '-row-mt',
    '1',
    '-deadline',
    'good',
    '-cpu-used',
    '4',
    '-pix_fmt',
    'yuv420p',
  ],
};
const CONTAINER_AUDIO_ENCODE: Record<Exclude<Container, 'mkv'>, string[]> = {
  mp4: ['-c:a', 'aac', '-b:a', '192k'],
  webm: ['-c:a', 'libopus', '-b:a', '128k'],
};

// A precise clip encodes every stream (a copy can only start at a keyframe). Matroska gets H.264 and
// AAC: the cheapest encoders that every player of mkv reads.
export function encodeAll(format: OutputFormat): string[] {
  if (format === 'vtt' || format === 'srt') throw new TypeError(`a clip cannot be written as ${format}`);
  if (!isContainer(format)) return AUDIO_ENCODE[format].encode;
  const container = format === 'mkv' ? 'mp4' : format;
  return [...VIDEO_ENCODE[container], ...CONTAINER_AUDIO_ENCODE[container]];
}

/** An input with the clip's seek before it. */
function clipInput(
  input: MediaInput,
  opts: { kind?: InputKind; aes128?: boolean },
  clip: ClipRange | undefined,
): string[] {
  return [...seekArgs(clip), ...inputArgs(input, opts)];
}

/**
 * Copy each stream whose codec fits the container and encode the others; Matroska takes anything.
 * `unknown` decides for a stream without a codec name: a merge copies (its pair came from one extract
 * and is usually right), a conversion encodes (which always works).
 */
function codecArgs(
  container: Container,
  videoCodec: string | undefined,
  audioCodec: string | undefined,
  unknown: 'copy' | 'encode',
): string[] {
  if (container === 'mkv') return ['-c', 'copy'];
  const copyVideo = videoCodec === undefined ? unknown === 'copy' : codecsFit(container, videoCodec, undefined);
  const copyAudio = audioCodec === undefined ? unknown === 'copy' : codecsFit(container, undefined, audioCodec);
  if (copyVideo && copyAudio) return ['-c', 'copy'];
  return [
    ...(copyVideo ? ['-c:v', 'copy'] : VIDEO_ENCODE[container]),
    ...(copyAudio ? ['-c:a', 'copy'] : CONTAINER_AUDIO_ENCODE[container]),
  ];
}

type Parts = Pick<FfmpegArgs, 'inputArgs' | 'outputArgs'> & { inputs: number };

function mergeArgs(op: MergeOperation): Parts {
  const codecs = reencodes(op.clip)
    ? encodeAll(op.container)
    : codecArgs(op.container, op.videoCodec, op.audioCodec, 'copy');
  return {
    inputs: 2,
    inputArgs: [...clipInput(op.videoInput, {}, op.clip), ...clipInput(op.audioInput, {}, op.clip)],
    outputArgs: ['-map', '0:v:0', '-map', '1:a:0', ...codecs],
  };
}

function convertArgs(op: ConvertOperation): Parts {
  const input = clipInput(op.input, { kind: op.manifest ?? 'progressive', aes128: op.aes128 }, op.clip);
  const format = op.format;
  const representation =
    op.representation !== undefined
      ? ['-map', representationMap(0, op.representation, op.representationType)]
      : undefined;
  if (format === 'vtt' || format === 'srt')
    throw new TypeError(`media cannot be converted to ${format}: that is a subtitle operation`);
  if (!isContainer(format)) {
    const spec = AUDIO_ENCODE[format];
    const copy =
      spec.copyable !== undefined &&
      (op.streamsFit === true || normaliseCodec(op.audioCodec) === spec.copyable) &&
      !reencodes(op.clip);
    // The first audio stream only; -vn keeps the input's pictures out (a cover, if any, is mapped
    // from its own input after, and -vn would drop it too).
    const maps = representation ?? ['-map', '0:a:0'];
    const noVideo = op.cover !== undefined && COVER_FORMATS.has(format) ? [] : ['-vn'];
    return {
      inputs: 1,
      inputArgs: input,
      outputArgs: [...maps, ...noVideo, ...(copy ? ['-c:a', 'copy'] : spec.encode)],
    };
  }
  // The first video and audio stream, each optional ('?') so audio-only or video-only inputs work;
  // data and subtitle streams (e.g. ID3 in MPEG-TS) would make some muxers fail. A fast clip copies
  // what it can: streams of unknown codec into mp4 or mkv too, as a remux would.
  const maps = representation ?? ['-map', '0:v:0?', '-map', '0:a:0?'];
  const codecs = reencodes(op.clip)
    ? encodeAll(format)
    : op.streamsFit
      ? ['-c', 'copy']
      : codecArgs(format, op.videoCodec, op.audioCodec, op.clip && format !== 'webm' ? 'copy' : 'encode');
  return { inputs: 1, inputArgs: input, outputArgs: [...maps, ...codecs] };
}

function remuxArgs(op: RemuxOperation): Parts {
  const opts = { kind: op.manifest, aes128: op.aes128 };
  let inputs: string[];
  let maps: string[];
  if (op.input !== undefined) {
    inputs = clipInput(op.input, opts, op.clip);
    maps =
      op.representation !== undefined
        ? ['-map', representationMap(0, op.representation, op.representationType)]
        : ['-map', '0:v:0?', '-map', '0:a:0?'];
  } else {
    inputs = [...clipInput(op.videoInput, opts, op.clip), ...clipInput(op.audioInput, opts, op.clip)];
    maps = [
      // A pair's members are its video and its audio, so each map names its type.
      '-map',
      op.videoRepresentation !== undefined ? representationMap(0, op.videoRepresentation, 'video') : '0:v:0',
      '-map',
      op.audioRepresentation !== undefined ? representationMap(1, op.audioRepresentation, 'audio') : '1:a:0',
    ];
  }
  // MPEG-TS carries AAC as ADTS frames; MP4 wants raw AAC with a config record. ffmpeg 5.1's mp4
  // muxer also inserts this filter itself, but naming it does not depend on that, and the filter
  // passes raw AAC (fMP4 HLS) through unchanged. It rejects other codecs, hence only for known AAC.
  const bsf =
    op.container === 'mp4' && op.manifest === 'hls' && normaliseCodec(op.audioCodec) === 'aac'
      ? ['-bsf:a', 'aac_adtstoasc']
      : [];
  const codecs = reencodes(op.clip) ? encodeAll(op.container) : ['-c', 'copy', ...bsf];
  return { inputs: op.input !== undefined ? 1 : 2, inputArgs: inputs, outputArgs: [...maps, ...codecs] };
}

/** The clip's length, tags, cover art and muxer after an operation's maps and codecs. */
function finish(
  op: Exclude<MediaOperation, SubtitleOperation>,
  parts: Parts,
): Pick<FfmpegArgs, 'inputArgs' | 'outputArgs'> {
  const format = outputFormat(op);
  const cover = op.cover !== undefined && COVER_FORMATS.has(format) ? op.cover : undefined;
  // For opus the cover's ffmetadata input carries the tags too, and mapping it replaces the inputs'.
  const opusCover = cover !== undefined && format === 'opus';
  const tags = opusCover ? (op.tags === false ? ['-fflags', '+bitexact'] : []) : metadataArgs(format, op.tags);
  return {
    inputArgs: [...parts.inputArgs, ...(cover !== undefined ? coverInputArgs(format, cover) : [])],
    outputArgs: [
      ...parts.outputArgs,
      ...(cover !== undefined ? coverOutputArgs(format, parts.inputs) : []),
      ...lengthArgs(op.clip),
      ...tags,
      ...muxArgs(format),
    ],
  };
}

/** The media's arguments with subtitle tracks added as further inputs, after the media's own. */
function withSubtitles(op: Exclude<MediaOperation, SubtitleOperation>, parts: Parts, tracks: SubtitleTrack[]): Parts {
  const format = outputFormat(op);
  if (!isContainer(format)) throw new TypeError(`subtitles cannot be embedded in ${format}`);
  const embed = embedArgs(tracks, parts.inputs, format);
  // finish() appends the muxer (-f …) after these, as for every operation.
  return {
    inputs: parts.inputs + tracks.length,
    inputArgs: [...parts.inputArgs, ...embed.inputArgs],
    outputArgs: [...parts.outputArgs, ...embed.outputArgs],
  };
}

/** The full ffmpeg argument vector of an operation. Pure: same operation, same array. */
export function buildArgs(op: MediaOperation, ctx: BuildContext): FfmpegArgs {
  const output = localPath(ctx.output, 'output');
  const limit = ctx.maxOutputBytes !== undefined ? ['-fs', String(ctx.maxOutputBytes)] : [];
  const assemble = ({ inputArgs: inputs, outputArgs }: Pick<FfmpegArgs, 'inputArgs' | 'outputArgs'>): FfmpegArgs => ({
    inputArgs: inputs,
    outputArgs,
    args: [...globalArgs(ctx.progressUrl ?? 'pipe:1'), ...inputs, ...outputArgs, ...limit, output],
  });
  // A subtitle track written alone: no tags, clip or cover apply.
  if (op.type === 'subtitle') return assemble(subtitleArgs(op));
  let parts: Parts;
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
  if (op.subtitles?.length) parts = withSubtitles(op, parts, op.subtitles);
  return assemble(finish(op, parts));
}
