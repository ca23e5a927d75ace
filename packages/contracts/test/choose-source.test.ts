// The one source choice of one-step downloads (DESIGN.md "One-step downloads (presets)") as a pure
// function over extract items: presets, quality caps, audio_only, format fit and "no match".
import { describe, expect, test } from '@jest/globals';
import { chooseSource, fitsFormat, QualitySchema, qualityHeight, type SourceChoice } from '../src/choose-source.js';
import type { MediaItem, Source } from '../src/extract.js';

const src = (url: string, extra: Partial<Source>): Source => ({
  quality: 'original',
  url,
  stream_profile: 'muxed_progressive',
  ...extra,
});
const item = (...sources: Source[]): Pick<MediaItem, 'sources'> => ({ sources });
/** The choice as a download body would name it. */
const urls = (c: SourceChoice) =>
  c.kind === 'source'
    ? { url: c.source.url }
    : c.kind === 'pair'
      ? { video_url: c.video.url, audio_url: c.audio.url }
      : { none: c.reason };

const muxed360 = src('m360', {
  height: 360,
  width: 640,
  bitrate: 800_000,
  has_audio: true,
  has_video: true,
  ext: 'mp4',
  codecs: 'avc1.4d401e, mp4a.40.2',
});
const muxed720 = src('m720', {
  height: 720,
  width: 1280,
  bitrate: 2_000_000,
  has_audio: true,
  has_video: true,
  ext: 'mp4',
});
const webm720 = src('w720', {
  height: 720,
  width: 1280,
  bitrate: 2_500_000,
  has_audio: true,
  has_video: true,
  ext: 'webm',
  codecs: 'vp9, opus',
});
const v1080 = src('v1080', {
  stream_profile: 'video_only',
  height: 1080,
  width: 1920,
  bitrate: 4_000_000,
  has_audio: false,
});
const v720 = src('v720', {
  stream_profile: 'video_only',
  height: 720,
  width: 1280,
  bitrate: 1_500_000,
  has_audio: false,
});
const v480 = src('v480', { stream_profile: 'video_only', height: 480, width: 854, bitrate: 900_000, has_audio: false });
const a64 = src('a64', {
  stream_profile: 'audio_only',
  bitrate: 64_000,
  has_video: false,
  quality: '64k',
  codecs: 'opus',
});
const a128 = src('a128', {
  stream_profile: 'audio_only',
  bitrate: 128_000,
  has_video: false,
  quality: '128k',
  codecs: 'mp4a.40.2',
});

describe('chooseSource: video', () => {
  test('the best video only source is merged with the best audio only source', () => {
    const choice = chooseSource(item(muxed360, v720, a64, v1080, a128));
    expect(urls(choice)).toEqual({ video_url: 'v1080', audio_url: 'a128' });
    expect(choice.kind === 'pair' && choice.quality).toBe('1080p');
  });

  test('a muxed source taller than any video only source is taken alone', () => {
    expect(urls(chooseSource(item(v480, a128, muxed720)))).toEqual({ url: 'm720' });
  });

  test('a quality caps the height; none that low gives the lowest', () => {
    expect(urls(chooseSource(item(v1080, v720, v480, a64, a128), { quality: '720p' }))).toEqual({
      video_url: 'v720',
      audio_url: 'a128',
    });
    expect(urls(chooseSource(item(v1080, muxed720, muxed360, a128), { quality: '480p' }))).toEqual({ url: 'm360' });
    expect(urls(chooseSource(item(v1080, muxed720, a128), { quality: '240p' }))).toEqual({ url: 'm720' });
  });

  test('worst takes the lowest', () => {
    expect(urls(chooseSource(item(v1080, muxed720, muxed360, a128), { quality: 'worst' }))).toEqual({ url: 'm360' });
  });

  test('at one height, what the asked format takes without re-encoding wins', () => {
    // webm720 has the higher bitrate, so without a format it is first; mp4 wants the h264/aac file.
    expect(urls(chooseSource(item(webm720, muxed720)))).toEqual({ url: 'w720' });
    expect(urls(chooseSource(item(webm720, muxed720), { format: 'mp4' }))).toEqual({ url: 'm720' });
    expect(urls(chooseSource(item(muxed720, webm720), { format: 'webm' }))).toEqual({ url: 'w720' });
    // but never a lower height for it
    expect(urls(chooseSource(item(webm720, muxed360), { format: 'mp4' }))).toEqual({ url: 'w720' });
  });

  test('a video only source without any audio to pair falls back to a muxed one, else plays silent', () => {
    expect(urls(chooseSource(item(v1080, muxed360)))).toEqual({ url: 'm360' });
    expect(urls(chooseSource(item(v480)))).toEqual({ url: 'v480' });
  });

  test('a merge pair is never one file and one manifest', () => {
    const hlsAudio = src('hls-a', { stream_profile: 'hls', has_video: false, has_audio: true, bitrate: 256_000 });
    expect(urls(chooseSource(item(v720, hlsAudio, muxed360)))).toEqual({ url: 'm360' });
    const hlsVideo = src('hls-v', { stream_profile: 'hls', has_video: true, has_audio: false, height: 1080 });
    expect(urls(chooseSource(item(hlsVideo, hlsAudio, muxed360)))).toEqual({ video_url: 'hls-v', audio_url: 'hls-a' });
  });

  test('sources with unknown heights rank below known ones but are kept', () => {
    const unknown = src('hls', { stream_profile: 'hls' });
    expect(urls(chooseSource(item(unknown, muxed360)))).toEqual({ url: 'm360' });
    expect(urls(chooseSource(item(unknown)))).toEqual({ url: 'hls' });
  });

  test('an image item yields its largest image; asked to convert it, nothing matches', () => {
    const small = src('small', { stream_profile: 'image', width: 100, height: 100 });
    const large = src('large', { stream_profile: 'image', width: 1000, height: 800 });
    expect(urls(chooseSource(item(small, large)))).toEqual({ url: 'large' });
    expect(chooseSource(item(small, large), { format: 'mp4' }).kind).toBe('none');
  });
});

describe('chooseSource: audio', () => {
  test('audio_only takes the best audio only source', () => {
    const choice = chooseSource(item(v1080, a64, a128, muxed720), { audio_only: true });
    expect(urls(choice)).toEqual({ url: 'a128' });
    expect(choice.kind === 'source' && choice.quality).toBe('128k');
  });

  test('an audio format implies audio_only and prefers what it copies', () => {
    expect(urls(chooseSource(item(v1080, a64, a128), { format: 'opus' }))).toEqual({ url: 'a64' });
    expect(urls(chooseSource(item(v1080, a64, a128), { format: 'm4a' }))).toEqual({ url: 'a128' });
    expect(urls(chooseSource(item(v1080, a64, a128), { format: 'mp3' }))).toEqual({ url: 'a128' });
  });

  test('without an audio only source, the best source that carries audio', () => {
    expect(urls(chooseSource(item(v1080, muxed360, muxed720), { audio_only: true }))).toEqual({ url: 'm720' });
  });

  test('an audio item with no preset gives its audio; a video format of it matches nothing', () => {
    expect(urls(chooseSource(item(a64, a128)))).toEqual({ url: 'a128' });
    expect(chooseSource(item(a128), { format: 'mp4' }).kind).toBe('none');
  });

  test('audio_only with a video format is no match', () => {
    expect(chooseSource(item(a128), { audio_only: true, format: 'mp4' })).toMatchObject({
      kind: 'none',
      reason: expect.stringMatching(/mp3, m4a/),
    });
  });
});

describe('chooseSource: no match', () => {
  test('lists what exists', () => {
    const choice = chooseSource(item(v720, v480), { audio_only: true });
    expect(choice).toEqual({
      kind: 'none',
      reason: 'this item has no audio.',
      available: ['1280x720 video', '854x480 video'],
    });
  });
});

test('qualities read as heights', () => {
  expect(QualitySchema.options.map(qualityHeight)).toEqual([Infinity, 0, 2160, 1440, 1080, 720, 480, 360, 240]);
});

test('format fit reads codecs first, then the extension', () => {
  expect(fitsFormat(muxed360, 'mp4')).toBe(true);
  expect(fitsFormat(muxed360, 'webm')).toBe(false);
  expect(fitsFormat(muxed720, 'mp4')).toBe(true);
  expect(fitsFormat(webm720, 'mkv')).toBe(true);
  expect(fitsFormat(a128, 'wav')).toBe(false);
  expect(fitsFormat(src('x', { codecs: 'mp4a.6b' }), 'mp3')).toBe(true);
});
