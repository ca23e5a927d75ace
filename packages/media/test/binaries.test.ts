import { describe, expect, test } from '@jest/globals';
import { resolveFfmpeg, resolveFfprobe } from '../src/binaries.js';

describe('ffmpeg binary', () => {
  test('FFMPEG_PATH is used as given, even when the file is not there, so a wrong path fails loudly', () => {
    expect(resolveFfmpeg({ FFMPEG_PATH: '/opt/missing/ffmpeg' })).toBe('/opt/missing/ffmpeg');
  });

  test('without FFMPEG_PATH the ffmpeg on PATH is used', () => {
    expect(resolveFfmpeg({})).toBe('ffmpeg');
    expect(resolveFfmpeg({ FFMPEG_PATH: '' })).toBe('ffmpeg');
  });

  test('FFPROBE_PATH does not change which ffmpeg runs', () => {
    expect(resolveFfmpeg({ FFPROBE_PATH: '/opt/ffprobe' })).toBe('ffmpeg');
  });
});

describe('ffprobe binary', () => {
  test('FFPROBE_PATH, else ffprobe on PATH; FFMPEG_PATH does not move it', () => {
    expect(resolveFfprobe({ FFPROBE_PATH: '/opt/ffprobe' })).toBe('/opt/ffprobe');
    expect(resolveFfprobe({})).toBe('ffprobe');
    expect(resolveFfprobe({ FFMPEG_PATH: '/opt/ffmpeg' })).toBe('ffprobe');
  });
});
