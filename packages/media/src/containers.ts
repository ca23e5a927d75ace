// Codec names, the container a pair of codecs goes into (yt-dlp's get_compatible_ext), and MIME types.
// The formats themselves are the contracts' (OutputFormatSchema): one list for the API and ffmpeg.
import { ContainerSchema, type Container, type OutputFormat } from '@reelay/contracts';

export function isContainer(format: OutputFormat): format is Container {
  return ContainerSchema.safeParse(format).success;
}

// mp4a object types that are not AAC (RFC 6381 uses the MP4 object type indication in hex, or
// the audio object type after 40.).
const MP4A_NOT_AAC: Record<string, string> = {
  '40.34': 'mp3',
  '69': 'mp3',
  '6b': 'mp3',
  a5: 'ac3',
  a6: 'eac3',
};

// Prefixes of RFC 6381 sample entries and ffprobe / yt-dlp spellings, mapped to ffprobe's names.
const ALIASES: Record<string, string> = {
  avc1: 'h264',
  avc3: 'h264',
  h264: 'h264',
  avc: 'h264',
  hvc1: 'hevc',
  hev1: 'hevc',
  hevc: 'hevc',
  h265: 'hevc',
  av01: 'av1',
  av1: 'av1',
  vp09: 'vp9',
  vp9: 'vp9',
  vp08: 'vp8',
  vp8: 'vp8',
  mp4a: 'aac',
  aac: 'aac',
  aacl: 'aac',
  mp3: 'mp3',
  opus: 'opus',
  vorbis: 'vorbis',
  'ac-3': 'ac3',
  ac3: 'ac3',
  'ec-3': 'eac3',
  eac3: 'eac3',
  'ac-4': 'ac4',
  ac4: 'ac4',
  flac: 'flac',
  alac: 'alac',
};

const VIDEO = new Set([
  'h264',
  'hevc',
  'av1',
  'vp9',
  'vp8',
  'theora',
  'mpeg4',
  'mpeg2video',
  'h263',
  'prores',
  'mjpeg',
]);
const AUDIO = new Set(['aac', 'mp3', 'opus', 'vorbis', 'ac3', 'eac3', 'ac4', 'flac', 'alac', 'dts', 'mp2', 'pcm']);

/**
 * One codec string (`avc1.64001f`, `mp4a.40.2`, `vp09.00.10.08`, `h264`, `aac`, `pcm_s16le`…) as
 * ffprobe names it; undefined for an empty value or yt-dlp's `none`.
 */
export function normaliseCodec(codec: string | undefined | null): string | undefined {
  const value = codec?.trim().toLowerCase();
  if (!value || value === 'none') return undefined;
  if (value.startsWith('mp4a.')) return MP4A_NOT_AAC[value.slice(5)] ?? 'aac';
  if (value.startsWith('pcm_') || value === 'lpcm') return 'pcm';
  const [head] = value.split('.');
  return ALIASES[value] ?? ALIASES[head] ?? head;
}

export function codecKind(codec: string | undefined): 'video' | 'audio' | undefined {
  const name = normaliseCodec(codec);
  if (name === undefined) return undefined;
  if (VIDEO.has(name)) return 'video';
  if (AUDIO.has(name)) return 'audio';
  return undefined;
}

/**
 * The first video and the first audio codec of an RFC 6381 `codecs` list (`"avc1.64001f, mp4a.40.2"`
 * → h264 and aac), normalised. (The extractors' splitCodecs keeps every entry, unnormalised.)
 */
export function codecPair(codecs: string | undefined): { videoCodec?: string; audioCodec?: string } {
  const out: { videoCodec?: string; audioCodec?: string } = {};
  for (const part of (codecs ?? '').split(',')) {
    const kind = codecKind(part);
    if (kind === 'video') out.videoCodec ??= normaliseCodec(part);
    if (kind === 'audio') out.audioCodec ??= normaliseCodec(part);
  }
  return out;
}

// platforms.md §20: yt-dlp's families, after normalisation (avc1/h264 → h264, mp4a/aacl → aac,
// ec-3 → eac3, ac-4 → ac4).
const MP4_FAMILY = new Set(['av1', 'hevc', 'h264', 'aac', 'ac4', 'eac3']);
const WEBM_FAMILY = new Set(['av1', 'vp9', 'vp8', 'opus', 'vorbis']);

/**
 * The container for one video and one audio stream (either may be absent): mp4 when every present
 * codec is in yt-dlp's mp4 family, else webm when all are in the webm family, else mkv. So h264+aac →
 * mp4, vp9+opus → webm, vp9+aac → mkv; av1 fits both and follows its partner.
 */
export function containerFor(videoCodec: string | undefined, audioCodec: string | undefined): Container {
  const codecs = [normaliseCodec(videoCodec), normaliseCodec(audioCodec)].filter((c): c is string => c !== undefined);
  if (codecs.length === 0) return 'mkv';
  if (codecs.every((c) => MP4_FAMILY.has(c))) return 'mp4';
  if (codecs.every((c) => WEBM_FAMILY.has(c))) return 'webm';
  return 'mkv';
}

// What a stream copy may put in each container. Wider than the families above where ffmpeg writes it
// and players read it (mp3 and ac3 in mp4), so containerFor(...) === c implies codecsFit(c, ...).
const FITS: Record<Exclude<Container, 'mkv'>, { video: Set<string>; audio: Set<string> }> = {
  mp4: { video: new Set(['h264', 'hevc', 'av1']), audio: new Set(['aac', 'mp3', 'ac3', 'eac3', 'ac4']) },
  webm: { video: new Set(['vp8', 'vp9', 'av1']), audio: new Set(['opus', 'vorbis']) },
};

/**
 * Whether the given streams can be stream-copied into `container`. An absent codec is not checked
 * (no such stream); Matroska takes any codec.
 */
export function codecsFit(container: Container, videoCodec?: string, audioCodec?: string): boolean {
  if (container === 'mkv') return true;
  const video = normaliseCodec(videoCodec);
  const audio = normaliseCodec(audioCodec);
  const fits = FITS[container];
  return (video === undefined || fits.video.has(video)) && (audio === undefined || fits.audio.has(audio));
}

const MIME: Record<OutputFormat, string> = {
  mp4: 'video/mp4',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  opus: 'audio/ogg', // Opus in an Ogg file (RFC 7845)
  wav: 'audio/wav',
  vtt: 'text/vtt',
  srt: 'application/x-subrip',
};

export function mimeForContainer(ext: OutputFormat): string {
  return MIME[ext];
}

// ffmpeg muxer names: outputs are written to temporary names (then renamed), so the muxer is always
// named rather than guessed from the extension.
const MUXER: Record<OutputFormat, string> = {
  mp4: 'mp4',
  webm: 'webm',
  mkv: 'matroska',
  mp3: 'mp3',
  m4a: 'ipod', // what ffmpeg picks for .m4a: an MP4 with the M4A brand
  opus: 'opus', // Ogg with the .opus conventions
  wav: 'wav',
  vtt: 'webvtt',
  srt: 'srt',
};

export function muxerFor(format: OutputFormat): string {
  return MUXER[format];
}
