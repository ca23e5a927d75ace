// The source choice of `reelay get` as a pure function over extract results: yt-dlp's default
// (best video, merged with the best audio when it has none), the -q cap and audio formats.
import { describe, expect, test } from '@jest/globals';
import type { MediaItem, Source } from '../src/api.js';
import { chooseSource, parseQuality } from '../src/choose.js';
import { CliError, UsageError } from '../src/errors.js';

const src = (url: string, extra: Partial<Source>): Source => ({ quality: 'original', url, stream_profile: 'muxed_progressive', ...extra });
const item = (...sources: Source[]): MediaItem => ({ index: 0, type: 'video', sources });

const muxed360 = src('m360', { height: 360, width: 640, bitrate: 800_000, has_audio: true, has_video: true });
const muxed720 = src('m720', { height: 720, width: 1280, bitrate: 2_000_000, has_audio: true, has_video: true });
const v1080 = src('v1080', { stream_profile: 'video_only', height: 1080, width: 1920, bitrate: 4_000_000, has_audio: false });
const v720 = src('v720', { stream_profile: 'video_only', height: 720, width: 1280, bitrate: 1_500_000, has_audio: false });
const v480 = src('v480', { stream_profile: 'video_only', height: 480, width: 854, bitrate: 900_000, has_audio: false });
const a64 = src('a64', { stream_profile: 'audio_only', bitrate: 64_000, has_video: false, quality: '64k' });
const a128 = src('a128', { stream_profile: 'audio_only', bitrate: 128_000, has_video: false, quality: '128k' });

describe('chooseSource', () => {
  test('the best video only source is merged with the best audio only source', () => {
    expect(chooseSource(item(muxed360, v720, a64, v1080, a128)).body).toEqual({ video_url: 'v1080', audio_url: 'a128' });
  });

  test('a muxed source taller than any video only source is taken alone', () => {
    expect(chooseSource(item(v480, a128, muxed720)).body).toEqual({ url: 'm720' });
  });

  test('-q 720p takes the best at or below 720 lines', () => {
    expect(chooseSource(item(v1080, v720, v480, a64, a128), { quality: '720p' }).body).toEqual({ video_url: 'v720', audio_url: 'a128' });
    expect(chooseSource(item(v1080, muxed720, muxed360, a128), { quality: '720' }).body).toEqual({ url: 'm720' });
    expect(chooseSource(item(v1080, muxed720, muxed360, a128), { quality: '480p' }).body).toEqual({ url: 'm360' });
  });

  test('a video only source without any audio to pair falls back to the best muxed source', () => {
    expect(chooseSource(item(v1080, muxed360)).body).toEqual({ url: 'm360' });
    // Nothing with audio at all: the silent video is still better than nothing.
    expect(chooseSource(item(v480)).body).toEqual({ url: 'v480' });
  });

  test('-f mp3 takes the best audio source and asks for mp3', () => {
    expect(chooseSource(item(v1080, a64, a128, muxed720), { format: 'mp3' }).body).toEqual({ url: 'a128', format: 'mp3' });
    // No audio only source: the best source that carries audio is converted.
    expect(chooseSource(item(v1080, muxed360, muxed720), { format: 'mp3' }).body).toEqual({ url: 'm720', format: 'mp3' });
  });

  test('a video format is passed along with the pair or the single source', () => {
    expect(chooseSource(item(v720, a64), { format: 'mkv' }).body).toEqual({ video_url: 'v720', audio_url: 'a64', format: 'mkv' });
  });

  test('a merge pair is never one file and one manifest', () => {
    const hlsAudio = src('hls-a', { stream_profile: 'hls', has_video: false, has_audio: true, bitrate: 256_000 });
    expect(chooseSource(item(v720, hlsAudio, muxed360)).body).toEqual({ url: 'm360' });
  });

  test('sources with unknown heights rank below known ones but are kept', () => {
    const unknown = src('hls', { stream_profile: 'hls' });
    expect(chooseSource(item(unknown, muxed360)).body).toEqual({ url: 'm360' });
    expect(chooseSource(item(unknown)).body).toEqual({ url: 'hls' });
  });

  test('an image item yields its largest image', () => {
    const small = src('small', { stream_profile: 'image', width: 100, height: 100 });
    const large = src('large', { stream_profile: 'image', width: 1000, height: 800 });
    expect(chooseSource({ index: 0, type: 'image', sources: [small, large] }).body).toEqual({ url: 'large' });
  });

  test('what cannot be met is an error that says what to try', () => {
    expect(() => chooseSource(item(v480, v720), { format: 'mp3' })).toThrow(CliError);
    expect(() => chooseSource(item(v720), { quality: '360p' })).toThrow(/no video at or below 360p/);
  });

  test('the label says what was picked', () => {
    expect(chooseSource(item(v1080, a128)).label).toBe('1920x1080 video + 128k audio, merged');
  });
});

describe('parseQuality', () => {
  test('reads 720p, 720 and best, and refuses anything else as a usage error', () => {
    expect(parseQuality('720p')).toBe(720);
    expect(parseQuality('1080')).toBe(1080);
    expect(parseQuality('best')).toBe(Infinity);
    expect(() => parseQuality('hd')).toThrow(UsageError);
  });
});

test('without sizes the label names the container and codecs', () => {
  const video = src('v', { stream_profile: 'video_only', ext: 'mp4', codecs: 'avc1.64001e', has_audio: false });
  const audio = src('a', { stream_profile: 'audio_only', ext: 'm4a', codecs: 'mp4a.40.2', has_video: false });
  expect(chooseSource(item(video, audio)).label).toBe('mp4 video (avc1.64001e) + m4a audio (mp4a.40.2), merged');
});
