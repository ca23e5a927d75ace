// The CLI's side of choosing: the contracts' chooseSource (tested in packages/contracts) turned into
// download bodies and labels, --source N, and -q read as the server's quality names.
import { describe, expect, test } from '@jest/globals';
import type { MediaItem, Source } from '../src/api.js';
import { chooseFor, parseQuality, pickSource } from '../src/choose.js';
import { CliError, UsageError } from '../src/errors.js';

const src = (url: string, extra: Partial<Source>): Source => ({
  quality: 'original',
  url,
  stream_profile: 'muxed_progressive',
  ...extra,
});
const item = (...sources: Source[]): MediaItem => ({ index: 0, type: 'video', sources });

const muxed360 = src('m360', {
  height: 360,
  width: 640,
  bitrate: 800_000,
  has_audio: true,
  has_video: true,
  ext: 'mp4',
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
const a128 = src('a128', { stream_profile: 'audio_only', bitrate: 128_000, has_video: false, quality: '128k' });

describe('chooseFor', () => {
  test('a pair becomes video_url and audio_url, and the label says what is merged', () => {
    expect(chooseFor(item(muxed360, v720, v1080, a128), { quality: 'best' })).toEqual({
      body: { video_url: 'v1080', audio_url: 'a128' },
      label: '1920x1080 video + 128k audio, merged',
    });
  });

  test('the preset and format reach the shared choice, and the format the body', () => {
    expect(chooseFor(item(v1080, v720, a128), { quality: '720p', format: 'mkv' }).body).toEqual({
      video_url: 'v720',
      audio_url: 'a128',
      format: 'mkv',
    });
    expect(chooseFor(item(v1080, muxed360, a128), { quality: 'best', audioOnly: true }).body).toEqual({ url: 'a128' });
    expect(chooseFor(item(muxed360), { quality: 'best' }).label).toBe('640x360 video with audio (mp4)');
  });

  test('nothing that fits is an error naming what there is', () => {
    expect(() => chooseFor(item(v720), { quality: 'best', format: 'mp3' })).toThrow(CliError);
    expect(() => chooseFor(item(v720), { quality: 'best', format: 'mp3' })).toThrow(
      /no audio\. It has: 1280x720 video\.$/,
    );
  });

  test('without sizes the label names the container and codecs', () => {
    const video = src('v', { stream_profile: 'video_only', ext: 'mp4', codecs: 'avc1.64001e', has_audio: false });
    const audio = src('a', { stream_profile: 'audio_only', codecs: 'mp4a.40.2', has_video: false });
    expect(chooseFor(item(video, audio), { quality: 'best' }).label).toBe('video (mp4) + audio (mp4a.40.2), merged');
  });
});

describe('pickSource', () => {
  test('takes the Nth source, counted from 1, with the format', () => {
    expect(pickSource(item(muxed360, v720, a128), 3, 'mp3').body).toEqual({ url: 'a128', format: 'mp3' });
    expect(() => pickSource(item(muxed360), 2)).toThrow(/there is no source 2: this item has 1/);
  });
});

describe('parseQuality', () => {
  test("reads the server's names, and a bare height as its p-name; anything else is a usage error", () => {
    expect(parseQuality('720p')).toBe('720p');
    expect(parseQuality('1080')).toBe('1080p');
    expect(parseQuality('BEST')).toBe('best');
    expect(parseQuality('worst')).toBe('worst');
    for (const bad of ['hd', '900', '720i', '']) expect(() => parseQuality(bad)).toThrow(UsageError);
  });
});
