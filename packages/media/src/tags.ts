// Tags and cover art as ffmpeg arguments (what yt-dlp's FFmpegMetadataPP and EmbedThumbnailPP do,
// as pure builders). ffmpeg maps its generic keys to each container's convention: ID3v2.4 frames
// (TIT2, TPE1, TDRC, COMM) in mp3, iTunes atoms (©nam, ©ART, ©day, ©cmt) in mp4/m4a, Vorbis comments
// in opus; Matroska's date tag is DATE_RELEASED, which ffmpeg does not map, so it is named here.
import type { OutputFormat } from '@reelay/contracts';
import { localPath } from './inputs.js';

export interface TagValues {
  title?: string;
  artist?: string;
  /** YYYY-MM-DD */
  date?: string;
  /** The page URL. */
  comment?: string;
}

/** What to do with tags: write these (over the inputs'), or `false` to write none and drop the inputs'. */
export type TagPlan = TagValues | false;

const MATROSKA_KEYS: Record<keyof TagValues, string> = {
  title: 'title',
  artist: 'ARTIST',
  date: 'DATE_RELEASED',
  comment: 'COMMENT',
};
const ORDER: (keyof TagValues)[] = ['title', 'artist', 'date', 'comment'];

/** Formats that get the item's thumbnail as cover art. */
export const COVER_FORMATS: ReadonlySet<OutputFormat> = new Set(['mp3', 'm4a', 'opus']);

/** Output options that write the tags; nothing at all when the job predates tags (undefined). */
export function metadataArgs(format: OutputFormat, tags: TagPlan | undefined): string[] {
  if (tags === undefined) return [];
  // -map_metadata -1 drops the inputs' global tags; -bitexact keeps the muxer from adding its own
  // "encoder" tag, so "none" means none.
  if (tags === false) return ['-map_metadata', '-1', '-fflags', '+bitexact'];
  const matroska = format === 'mkv' || format === 'webm';
  const args: string[] = [];
  for (const key of ORDER) {
    // A NUL ends a C string: ffmpeg would cut the value there silently.
    const value = tags[key]?.replace(/\0/g, '').trim();
    if (value) args.push('-metadata', `${matroska ? MATROSKA_KEYS[key] : key}=${value}`);
  }
  if (format === 'mp3') args.push('-id3v2_version', '4');
  return args;
}

/**
 * The cover as an extra input: a JPEG made by coverConvertArgs for mp3 and m4a, and for opus an
 * ffmetadata file holding a METADATA_BLOCK_PICTURE comment (opusCoverMetadata): ffmpeg 5.1's ogg
 * muxer refuses picture streams, but its ogg demuxer, players and taggers read that comment.
 */
export function coverInputArgs(format: OutputFormat, file: string): string[] {
  const demuxer = format === 'opus' ? 'ffmetadata' : 'jpeg_pipe';
  return ['-protocol_whitelist', 'file', '-format_whitelist', demuxer, '-f', demuxer, '-i', localPath(file, 'input')];
}

/** Output options that place the cover (input `index`) in the file. */
export function coverOutputArgs(format: OutputFormat, index: number): string[] {
  if (format === 'opus') return ['-map_metadata', String(index)];
  return ['-map', `${index}:v:0`, '-c:v', 'copy', '-disposition:v:0', 'attached_pic'];
}

/** Largest side of a cover: players show covers small, and it keeps an opus comment modest. */
export const COVER_MAX_SIDE = 1200;

/** A fetched thumbnail (JPEG, PNG, WebP, GIF: its first frame) to a baseline JPEG no larger than COVER_MAX_SIDE. */
export function coverConvertArgs(input: string, output: string): string[] {
  return [
    '-hide_banner',
    '-nostdin',
    '-y',
    '-loglevel',
    'error',
    '-protocol_whitelist',
    'file',
    '-format_whitelist',
    'jpeg_pipe,png_pipe,webp_pipe,gif,bmp_pipe',
    '-i',
    localPath(input, 'input'),
    '-frames:v',
    '1',
    '-map',
    '0:v:0',
    '-vf',
    `scale='min(${COVER_MAX_SIDE},iw)':'min(${COVER_MAX_SIDE},ih)':force_original_aspect_ratio=decrease,format=yuvj420p`,
    '-c:v',
    'mjpeg',
    '-q:v',
    '3',
    '-f',
    'mjpeg',
    localPath(output, 'output'),
  ];
}

/** A FLAC PICTURE block (type 3, front cover) around a JPEG, as Vorbis comments carry it in base64. */
export function pictureBlock(jpeg: Buffer, width: number, height: number): Buffer {
  const mime = Buffer.from('image/jpeg');
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  return Buffer.concat([
    u32(3),
    u32(mime.length),
    mime,
    u32(0),
    u32(width),
    u32(height),
    u32(24),
    u32(0),
    u32(jpeg.length),
    jpeg,
  ]);
}

/** An ffmetadata file's text; `=`, `;`, `#`, `\` and line breaks in keys and values are escaped. */
export function ffmetadata(entries: Record<string, string>): string {
  const escape = (s: string) => s.replace(/[=;#\\\n]/g, (c) => `\\${c}`);
  return [';FFMETADATA1', ...Object.entries(entries).map(([k, v]) => `${escape(k)}=${escape(v)}`), ''].join('\n');
}

/** The opus cover's ffmetadata: the picture comment, plus the tags (mapping it replaces the others). */
export function opusCoverMetadata(jpeg: Buffer, width: number, height: number, tags: TagPlan | undefined): string {
  const entries: Record<string, string> = {};
  if (tags) for (const key of ORDER) if (tags[key]) entries[key] = tags[key]!.replace(/\0/g, '');
  entries.METADATA_BLOCK_PICTURE = pictureBlock(jpeg, width, height).toString('base64');
  return ffmetadata(entries);
}
