import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { installedProbe, locateBinaries, resolveFfmpeg, resolveFfprobe, type BinaryProbe } from '../src/binaries.js';

const STATIC = '/app/node_modules/ffmpeg-static/ffmpeg';
/** A machine where ffmpeg-static names `named` and these files exist. */
const machine = (named: string | null | undefined, files: string[]): BinaryProbe => ({
  ffmpegStatic: () => named,
  isFile: (f) => files.includes(f),
});
const downloaded = machine(STATIC, [STATIC]);
const downloadFailed = machine(STATIC, []);

describe('which ffmpeg runs', () => {
  test('FFMPEG_PATH first, used as given even when the file is not there, so a wrong path fails loudly', () => {
    expect(locateBinaries({ FFMPEG_PATH: '/opt/missing/ffmpeg' }, downloaded).ffmpeg).toEqual({
      path: '/opt/missing/ffmpeg',
      source: 'FFMPEG_PATH',
    });
  });

  test("then ffmpeg-static's binary, where its install could download it", () => {
    expect(locateBinaries({}, downloaded).ffmpeg).toEqual({ path: STATIC, source: 'ffmpeg-static' });
    expect(locateBinaries({ FFMPEG_PATH: '' }, downloaded).ffmpeg).toEqual({ path: STATIC, source: 'ffmpeg-static' });
  });

  test('then ffmpeg on PATH: when the download failed, the package is absent, or it has no build for this platform', () => {
    for (const probe of [downloadFailed, machine(undefined, []), machine(null, [STATIC])]) {
      expect(locateBinaries({}, probe).ffmpeg).toEqual({ path: 'ffmpeg', source: 'PATH' });
    }
  });

  test('FFPROBE_PATH does not change which ffmpeg runs', () => {
    expect(resolveFfmpeg({ FFPROBE_PATH: '/opt/ffprobe' }, downloadFailed)).toBe('ffmpeg');
    expect(resolveFfmpeg({ FFPROBE_PATH: '/opt/ffprobe' }, downloaded)).toBe(STATIC);
  });

  test('the installed probe finds ffmpeg-static only where its file is really there', () => {
    // Installed as an optional dependency: it names its file for this platform whether or not the
    // download worked (here, without internet, it did not).
    const named = installedProbe.ffmpegStatic()!;
    expect(named).toMatch(/ffmpeg-static[/\\]ffmpeg(\.exe)?$/);
    const expected = fs.existsSync(named)
      ? { path: named, source: 'ffmpeg-static' }
      : { path: 'ffmpeg', source: 'PATH' };
    expect(locateBinaries({}).ffmpeg).toEqual(expected);
    expect(installedProbe.isFile(path.dirname(named))).toBe(false); // a directory is no binary
  });
});

describe('which ffprobe runs', () => {
  test('FFPROBE_PATH, else ffprobe on PATH: ffmpeg-static ships none, and FFMPEG_PATH does not move it', () => {
    expect(locateBinaries({ FFPROBE_PATH: '/opt/ffprobe' }, downloaded).ffprobe).toEqual({
      path: '/opt/ffprobe',
      source: 'FFPROBE_PATH',
    });
    expect(locateBinaries({}, downloaded).ffprobe).toEqual({ path: 'ffprobe', source: 'PATH' });
    expect(resolveFfprobe({ FFMPEG_PATH: '/opt/ffmpeg' })).toBe('ffprobe');
  });
});
