import { describe, expect, test } from '@jest/globals';
import type { Container } from '@reelay/contracts';
import { codecPair, codecsFit, containerFor, mimeForContainer, muxerFor, normaliseCodec } from '../src/containers.js';

describe('codec names', () => {
  test.each([
    ['avc1.64001f', 'h264'],
    ['avc3.4d401e', 'h264'],
    ['h264', 'h264'],
    ['hvc1.1.6.L93.B0', 'hevc'],
    ['hev1.2.4.L120.B0', 'hevc'],
    ['hevc', 'hevc'],
    ['av01.0.05M.08', 'av1'],
    ['av1', 'av1'],
    ['vp09.00.10.08', 'vp9'],
    ['vp9', 'vp9'],
    ['vp9.2', 'vp9'],
    ['VP8', 'vp8'],
    ['mp4a.40.2', 'aac'],
    ['mp4a.40.5', 'aac'],
    ['mp4a', 'aac'],
    ['aac', 'aac'],
    ['mp4a.40.34', 'mp3'],
    ['mp4a.6B', 'mp3'],
    ['mp3', 'mp3'],
    ['opus', 'opus'],
    ['Opus', 'opus'],
    ['vorbis', 'vorbis'],
    ['ec-3', 'eac3'],
    ['ac-3', 'ac3'],
    ['pcm_s16le', 'pcm'],
    [' flac ', 'flac'],
  ])('%s is called %s', (input, name) => {
    expect(normaliseCodec(input)).toBe(name);
  });

  test.each([[undefined], [''], ['none'], [null]])('%p is no codec', (input) => {
    expect(normaliseCodec(input)).toBeUndefined();
  });

  test('a codecs attribute splits into its video and audio codec', () => {
    expect(codecPair('avc1.64001f, mp4a.40.2')).toEqual({ videoCodec: 'h264', audioCodec: 'aac' });
    expect(codecPair('opus')).toEqual({ audioCodec: 'opus' });
    expect(codecPair(undefined)).toEqual({});
  });
});

describe('the container for a pair of codecs follows yt-dlp', () => {
  test.each([
    ['avc1.64001f', 'mp4a.40.2', 'mp4'],
    ['h264', 'aac', 'mp4'],
    ['hvc1.1.6.L93.B0', 'mp4a.40.2', 'mp4'],
    ['hevc', 'ec-3', 'mp4'],
    ['av01.0.05M.08', 'mp4a.40.2', 'mp4'],
    ['vp09.00.10.08', 'opus', 'webm'],
    ['vp9', 'vorbis', 'webm'],
    ['vp8', 'vorbis', 'webm'],
    ['av1', 'opus', 'webm'],
    ['vp9', 'mp4a.40.2', 'mkv'],
    ['h264', 'opus', 'mkv'],
    ['h264', 'mp3', 'mkv'],
    ['h264', 'flac', 'mkv'],
    ['theora', 'vorbis', 'mkv'],
    ['h264', undefined, 'mp4'],
    [undefined, 'opus', 'webm'],
    [undefined, undefined, 'mkv'],
  ])('%s + %s goes into %s', (video, audio, container) => {
    expect(containerFor(video, audio)).toBe(container);
  });
});

describe('codecsFit says whether a stream copy into a container is valid', () => {
  test.each<[Container, string | undefined, string | undefined, boolean]>([
    ['mp4', 'avc1.64001f', 'mp4a.40.2', true],
    ['mp4', 'hevc', 'ac3', true],
    ['mp4', 'h264', 'mp3', true],
    ['mp4', 'av1', undefined, true],
    ['mp4', 'vp9', 'aac', false],
    ['mp4', 'h264', 'opus', false],
    ['mp4', undefined, 'vorbis', false],
    ['webm', 'vp9', 'opus', true],
    ['webm', 'vp8', 'vorbis', true],
    ['webm', 'av01.0.05M.08', 'opus', true],
    ['webm', 'h264', 'opus', false],
    ['webm', 'vp9', 'aac', false],
    ['mkv', 'h264', 'flac', true],
    ['mkv', 'theora', 'pcm_s16le', true],
    ['mp4', undefined, undefined, true],
  ])('%s with %s + %s: %s', (container, video, audio, fits) => {
    expect(codecsFit(container, video, audio)).toBe(fits);
  });

  test.each([
    ['h264', 'aac'],
    ['vp9', 'opus'],
    ['av1', 'aac'],
    ['av1', 'vorbis'],
    ['hevc', 'eac3'],
  ])('whatever containerFor picks for %s + %s, the pair fits it', (video, audio) => {
    expect(codecsFit(containerFor(video, audio), video, audio)).toBe(true);
  });
});

describe('MIME types and muxers', () => {
  test.each([
    ['mp4', 'video/mp4', 'mp4'],
    ['webm', 'video/webm', 'webm'],
    ['mkv', 'video/x-matroska', 'matroska'],
    ['mp3', 'audio/mpeg', 'mp3'],
    ['m4a', 'audio/mp4', 'ipod'],
    ['opus', 'audio/ogg', 'opus'],
    ['wav', 'audio/wav', 'wav'],
  ] as const)('%s is served as %s and written by the %s muxer', (format, mime, muxer) => {
    expect(mimeForContainer(format)).toBe(mime);
    expect(muxerFor(format)).toBe(muxer);
  });
});
