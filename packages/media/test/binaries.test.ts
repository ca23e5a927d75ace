import { describe, expect, test } from '@jest/globals';
import { ffmpegStaticPath, resolveFfmpeg, resolveFfprobe, type BinaryDeps } from '../src/binaries.js';

const deps = (staticPath: string | null, existing: string[]): BinaryDeps => ({
  staticPath: () => staticPath,
  exists: (file) => existing.includes(file),
});

describe('ffmpeg binary', () => {
  test('FFMPEG_PATH wins over everything', () => {
    expect(resolveFfmpeg({ FFMPEG_PATH: '/opt/ffmpeg' }, deps('/static/ffmpeg', ['/static/ffmpeg']))).toBe('/opt/ffmpeg');
  });

  test("ffmpeg-static's binary is used when its file exists", () => {
    expect(resolveFfmpeg({}, deps('/static/ffmpeg', ['/static/ffmpeg']))).toBe('/static/ffmpeg');
  });

  test("ffmpeg-static's path is skipped when its download never happened", () => {
    expect(resolveFfmpeg({}, deps('/static/ffmpeg', []))).toBe('ffmpeg');
  });

  test('ffmpeg on PATH is the fallback when ffmpeg-static has no build for the platform', () => {
    expect(resolveFfmpeg({ FFMPEG_PATH: '' }, deps(null, []))).toBe('ffmpeg');
  });

  test("ffmpeg-static's path loads in this workspace, where its install script is skipped", () => {
    const path = ffmpegStaticPath();
    expect(path === null || path.endsWith('ffmpeg')).toBe(true);
  });
});

describe('ffprobe binary', () => {
  test('FFPROBE_PATH, else ffprobe on PATH', () => {
    expect(resolveFfprobe({ FFPROBE_PATH: '/opt/ffprobe' })).toBe('/opt/ffprobe');
    expect(resolveFfprobe({})).toBe('ffprobe');
  });
});
