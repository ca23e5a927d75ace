// The clip, tag and cover builders, alone and composed into each operation, as exact argument arrays.
import { describe, expect, test } from '@jest/globals';
import { clipLength, lengthArgs, seekArgs, seconds } from '../src/clip.js';
import { DEMUXERS, type InputKind } from '../src/inputs.js';
import { buildArgs, type MediaOperation } from '../src/operations.js';
import { judgeOutput } from '../src/verify.js';
import {
  coverConvertArgs,
  coverInputArgs,
  coverOutputArgs,
  ffmetadata,
  metadataArgs,
  pictureBlock,
} from '../src/tags.js';

const GLOBAL = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-progress', 'pipe:1', '-nostats'];
const OUT = '/data/tmp/job.part';
const V = 'http://127.0.0.1:4100/relay/v';
const A = 'http://127.0.0.1:4100/relay/a';
const NET = (url: string, kind: InputKind = 'progressive', protocols = 'http,tcp') => [
  '-protocol_whitelist',
  protocols,
  '-format_whitelist',
  DEMUXERS[kind],
  '-i',
  url,
];
const X264 = ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p'];
const TAGS = { title: 'A song', artist: 'Someone', date: '2024-05-06', comment: 'https://example.com/watch?v=1' };

const argv = (op: MediaOperation) => buildArgs(op, { output: OUT }).args;

describe('clip builders', () => {
  test('seek to the millisecond before the input, and the length after it', () => {
    const clip = { start: 1.5, end: 3.25, mode: 'fast' as const };
    expect(seekArgs(clip)).toEqual(['-ss', '1.500']);
    expect(lengthArgs(clip)).toEqual(['-t', '1.750']);
    expect(seconds(0.0004)).toBe('0.000');
  });

  test('a clip from 0 needs no seek, and no clip adds nothing', () => {
    expect(seekArgs({ start: 0, end: 2, mode: 'fast' })).toEqual([]);
    expect(seekArgs(undefined)).toEqual([]);
    expect(lengthArgs(undefined)).toEqual([]);
  });

  test('refuse a clip whose end is not after its start, and a negative or non-finite time', () => {
    expect(() => lengthArgs({ start: 2, end: 2, mode: 'fast' })).toThrow(TypeError);
    expect(() => seconds(-1)).toThrow(TypeError);
    expect(() => seconds(Number.NaN)).toThrow(TypeError);
  });

  test("a clip's length is cut at the end of a known input", () => {
    expect(clipLength({ start: 1, end: 10, mode: 'fast' }, 4)).toBe(3);
    expect(clipLength({ start: 1, end: 3, mode: 'fast' }, 4)).toBe(2);
    expect(clipLength(undefined, 4)).toBe(4);
  });
});

describe('clips composed into operations', () => {
  test('a fast clip of a merge seeks both inputs and copies', () => {
    expect(
      argv({ type: 'merge', videoInput: V, audioInput: A, container: 'mp4', clip: { start: 2, end: 4, mode: 'fast' } }),
    ).toEqual([
      ...GLOBAL,
      '-ss',
      '2.000',
      ...NET(V),
      '-ss',
      '2.000',
      ...NET(A),
      '-map',
      '0:v:0',
      '-map',
      '1:a:0',
      '-c',
      'copy',
      '-t',
      '2.000',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('a precise clip of a merge encodes both streams', () => {
    expect(
      argv({
        type: 'merge',
        videoInput: V,
        audioInput: A,
        container: 'mkv',
        clip: { start: 2, end: 4, mode: 'precise' },
      }),
    ).toEqual([
      ...GLOBAL,
      '-ss',
      '2.000',
      ...NET(V),
      '-ss',
      '2.000',
      ...NET(A),
      '-map',
      '0:v:0',
      '-map',
      '1:a:0',
      ...X264,
      '-c:a',
      'aac',
      '-b:a',
      '192k',
      '-t',
      '2.000',
      '-f',
      'matroska',
      `file:${OUT}`,
    ]);
  });

  test('a fast clip of an HLS remux copies with the ADTS filter; a precise one encodes without it', () => {
    const op = {
      type: 'remux',
      manifest: 'hls',
      input: V,
      container: 'mp4',
      audioCodec: 'mp4a.40.2',
      aes128: true,
    } as const;
    expect(argv({ ...op, clip: { start: 4.2, end: 5.2, mode: 'fast' } })).toEqual([
      ...GLOBAL,
      '-ss',
      '4.200',
      ...NET(V, 'hls', 'crypto,http,tcp'),
      '-map',
      '0:v:0?',
      '-map',
      '0:a:0?',
      '-c',
      'copy',
      '-bsf:a',
      'aac_adtstoasc',
      '-t',
      '1.000',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
    expect(argv({ ...op, clip: { start: 4.2, end: 5.2, mode: 'precise' } })).toEqual([
      ...GLOBAL,
      '-ss',
      '4.200',
      ...NET(V, 'hls', 'crypto,http,tcp'),
      '-map',
      '0:v:0?',
      '-map',
      '0:a:0?',
      ...X264,
      '-c:a',
      'aac',
      '-b:a',
      '192k',
      '-t',
      '1.000',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('a fast clip of a progressive file of unknown codecs copies into its own container', () => {
    expect(argv({ type: 'convert', input: V, format: 'mp4', clip: { start: 1, end: 2, mode: 'fast' } })).toEqual([
      ...GLOBAL,
      '-ss',
      '1.000',
      ...NET(V),
      '-map',
      '0:v:0?',
      '-map',
      '0:a:0?',
      '-c',
      'copy',
      '-t',
      '1.000',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      `file:${OUT}`,
    ]);
  });

  test('a precise clip to mp3 encodes even an mp3 input', () => {
    expect(
      argv({
        type: 'convert',
        input: V,
        format: 'mp3',
        audioCodec: 'mp3',
        clip: { start: 1, end: 2, mode: 'precise' },
      }),
    ).toEqual([
      ...GLOBAL,
      '-ss',
      '1.000',
      ...NET(V),
      '-map',
      '0:a:0',
      '-vn',
      '-c:a',
      'libmp3lame',
      '-q:a',
      '2',
      '-t',
      '1.000',
      '-f',
      'mp3',
      `file:${OUT}`,
    ]);
  });
});

describe('tag builders', () => {
  test('write the generic keys, with ID3v2.4 for mp3', () => {
    expect(metadataArgs('mp3', TAGS)).toEqual([
      '-metadata',
      'title=A song',
      '-metadata',
      'artist=Someone',
      '-metadata',
      'date=2024-05-06',
      '-metadata',
      'comment=https://example.com/watch?v=1',
      '-id3v2_version',
      '4',
    ]);
    expect(metadataArgs('m4a', { title: 'T' })).toEqual(['-metadata', 'title=T']);
  });

  test("use Matroska's tag names in mkv and webm", () => {
    expect(metadataArgs('webm', TAGS)).toEqual([
      '-metadata',
      'title=A song',
      '-metadata',
      'ARTIST=Someone',
      '-metadata',
      'DATE_RELEASED=2024-05-06',
      '-metadata',
      'COMMENT=https://example.com/watch?v=1',
    ]);
  });

  test("false drops the inputs' tags and the muxer's own; undefined adds nothing", () => {
    expect(metadataArgs('mp4', false)).toEqual(['-map_metadata', '-1', '-fflags', '+bitexact']);
    expect(metadataArgs('mp4', undefined)).toEqual([]);
  });

  test('drop NUL characters and empty values', () => {
    expect(metadataArgs('opus', { title: 'a\0b', artist: '  ' })).toEqual(['-metadata', 'title=ab']);
  });

  test('cover art is a JPEG input mapped as an attached picture, or an ffmetadata input for opus', () => {
    expect(coverInputArgs('mp3', '/d/cover.jpg')).toEqual([
      '-protocol_whitelist',
      'file',
      '-format_whitelist',
      'jpeg_pipe',
      '-f',
      'jpeg_pipe',
      '-i',
      'file:/d/cover.jpg',
    ]);
    expect(coverOutputArgs('m4a', 1)).toEqual(['-map', '1:v:0', '-c:v', 'copy', '-disposition:v:0', 'attached_pic']);
    expect(coverInputArgs('opus', '/d/c.txt')).toEqual([
      '-protocol_whitelist',
      'file',
      '-format_whitelist',
      'ffmetadata',
      '-f',
      'ffmetadata',
      '-i',
      'file:/d/c.txt',
    ]);
    expect(coverOutputArgs('opus', 1)).toEqual(['-map_metadata', '1']);
  });

  test('a thumbnail becomes one JPEG frame no larger than 1200 pixels a side, read only as an image', () => {
    const args = coverConvertArgs('/d/cover.source', '/d/cover.jpg');
    expect(args.slice(args.indexOf('-format_whitelist'), args.indexOf('-format_whitelist') + 2)).toEqual([
      '-format_whitelist',
      'jpeg_pipe,png_pipe,webp_pipe,gif,bmp_pipe',
    ]);
    expect(args.slice(-7)).toEqual(['-c:v', 'mjpeg', '-q:v', '3', '-f', 'mjpeg', 'file:/d/cover.jpg']);
  });

  test('ffmetadata escapes its special characters; a picture block has the FLAC layout', () => {
    expect(ffmetadata({ title: 'a=b;c#d\\e\nf' })).toBe(';FFMETADATA1\ntitle=a\\=b\\;c\\#d\\\\e\\\nf\n');
    const block = pictureBlock(Buffer.from([1, 2, 3]), 64, 48);
    expect(block.readUInt32BE(0)).toBe(3); // front cover
    expect(block.subarray(8, 18).toString()).toBe('image/jpeg');
    expect([block.readUInt32BE(22), block.readUInt32BE(26), block.readUInt32BE(38)]).toEqual([64, 48, 3]);
    expect([...block.subarray(42)]).toEqual([1, 2, 3]);
  });
});

describe('tags and cover composed into operations', () => {
  test('an m4a with tags and a cover keeps the cover stream (no -vn) and puts tags before the muxer', () => {
    expect(
      argv({
        type: 'convert',
        input: V,
        format: 'm4a',
        audioCodec: 'mp4a.40.2',
        tags: { title: 'T' },
        cover: '/d/cover.jpg',
      }),
    ).toEqual([
      ...GLOBAL,
      ...NET(V),
      '-protocol_whitelist',
      'file',
      '-format_whitelist',
      'jpeg_pipe',
      '-f',
      'jpeg_pipe',
      '-i',
      'file:/d/cover.jpg',
      '-map',
      '0:a:0',
      '-c:a',
      'copy',
      '-map',
      '1:v:0',
      '-c:v',
      'copy',
      '-disposition:v:0',
      'attached_pic',
      '-metadata',
      'title=T',
      '-movflags',
      '+faststart',
      '-f',
      'ipod',
      `file:${OUT}`,
    ]);
  });

  test('an opus cover carries the tags in its ffmetadata; a video format ignores a cover', () => {
    const opus = argv({ type: 'convert', input: V, format: 'opus', tags: { title: 'T' }, cover: '/d/c.txt' });
    expect(opus.slice(opus.indexOf('-map_metadata') - 4)).toEqual([
      '-c:a',
      'libopus',
      '-b:a',
      '128k',
      '-map_metadata',
      '1',
      '-f',
      'opus',
      `file:${OUT}`,
    ]);
    expect(
      argv({ type: 'merge', videoInput: V, audioInput: A, container: 'mkv', cover: '/d/cover.jpg' }),
    ).not.toContain('file:/d/cover.jpg');
  });
});

describe('verification of a clip', () => {
  const streams = [{ index: 0, type: 'audio' as const, codec: 'aac' }];
  const expected = { video: false, audio: true, faststart: false, durationSeconds: 2, maxDurationSeconds: 2.5 };

  test("accepts a file of the clip's length", () => {
    expect(judgeOutput({ durationSeconds: 2.02, streams }, expected, undefined)).toEqual([]);
  });

  test('refuses a file far longer than the clip: the cut did not happen', () => {
    expect(judgeOutput({ durationSeconds: 6, streams }, expected, undefined)).toEqual([
      'it lasts 6.0 s, longer than the clip allows (2.5 s)',
    ]);
  });
});
