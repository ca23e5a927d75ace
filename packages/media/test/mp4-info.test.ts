// The check of a finished mp4 or m4a, read in this process, judges files made by ffmpeg as the
// ffprobe check did: each verdict is compared with ffprobe's on the same file, and with the words
// a job's error would carry.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { resolveFfmpeg } from '../src/binaries.js';
import { moovBeforeMdat } from '../src/faststart.js';
import { readMp4Info } from '../src/mp4-info.js';
import { probe } from '../src/probe.js';
import { judgeOutput, verifyOutput, type OutputExpectation } from '../src/verify.js';

const ffmpegBinary = resolveFfmpeg({ FFMPEG_PATH: process.env.FFMPEG_PATH });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-mp4-info-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const ffmpeg = (args: string[]) => execFileSync(ffmpegBinary, ['-hide_banner', '-loglevel', 'error', '-y', ...args]);
const VIDEO = (seconds: number) => ['-f', 'lavfi', '-i', `testsrc2=size=160x120:rate=25:duration=${seconds}`];
const AUDIO = (seconds: number) => ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`];
const X264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25'];
const FASTSTART = ['-movflags', '+faststart'];

const files: Record<string, string> = {};
const make = (name: string, args: string[]) => {
  files[name] = path.join(dir, name);
  ffmpeg([...args, files[name]]);
};

beforeAll(() => {
  make('video.mp4', [...VIDEO(6), ...X264, '-an', ...FASTSTART]);
  make('audio.m4a', [...AUDIO(6), '-c:a', 'aac', '-b:a', '64k', '-vn', ...FASTSTART]);
  // What a merge job runs: two inputs, stream copy, +faststart.
  make('merged.mp4', [
    '-i',
    files['video.mp4'],
    '-i',
    files['audio.m4a'],
    '-map',
    '0:v:0',
    '-map',
    '1:a:0',
    '-c',
    'copy',
    ...FASTSTART,
  ]);
  make('short.mp4', [...VIDEO(3), ...AUDIO(3), ...X264, '-c:a', 'aac', ...FASTSTART]);
  make('index-last.mp4', [...VIDEO(3), ...AUDIO(3), ...X264, '-c:a', 'aac']);
  make('fragmented.mp4', [...VIDEO(3), ...X264, '-an', '-movflags', 'frag_keyframe+empty_moov']);
});

/** The check as it was before: ffprobe of the file, its layout, and the same judgement. */
async function ffprobeVerdict(file: string, expected: OutputExpectation): Promise<string[]> {
  let info;
  try {
    info = await probe(file);
  } catch {
    return ['it is not readable media'];
  }
  return judgeOutput(info, expected, expected.faststart ? await moovBeforeMdat(file).catch(() => false) : undefined);
}

const want = (extra: Partial<OutputExpectation>): OutputExpectation => ({
  video: true,
  audio: true,
  faststart: true,
  ...extra,
});

describe('reading an mp4 index in this process', () => {
  test('finds the tracks and the duration ffprobe finds in files made by ffmpeg', async () => {
    for (const name of ['video.mp4', 'audio.m4a', 'merged.mp4', 'short.mp4']) {
      const mine = await readMp4Info(files[name]);
      const theirs = await probe(files[name]);
      expect({ name, types: mine?.streams.map((s) => s.type) }).toEqual({
        name,
        types: theirs.streams.map((s) => s.type),
      });
      expect(Math.abs(mine!.durationSeconds! - theirs.durationSeconds!)).toBeLessThan(0.1);
    }
    expect((await readMp4Info(files['merged.mp4']))?.streams.map((s) => s.codec)).toEqual([
      expect.stringMatching(/^avc1\./),
      'mp4a.40.2',
    ]);
  });

  test('leaves to ffprobe a file whose index comes after the media, a fragmented file and a file cut short', async () => {
    expect(await readMp4Info(files['index-last.mp4'])).toBeUndefined();
    expect(await readMp4Info(files['fragmented.mp4'])).toBeUndefined();
    const cut = path.join(dir, 'cut.mp4');
    const data = fs.readFileSync(files['merged.mp4']);
    fs.writeFileSync(cut, data.subarray(0, data.length - 1000));
    expect(await readMp4Info(cut)).toBeUndefined();
  });

  test('reads an index larger than one read step', async () => {
    // 12 minutes of 96 kHz AAC: 67,500 frames, an index of about 270 kB.
    const long = path.join(dir, 'long.m4a');
    ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'anullsrc=r=96000:cl=mono',
      '-t',
      '720',
      '-c:a',
      'aac',
      '-b:a',
      '32k',
      ...FASTSTART,
      long,
    ]);
    const info = await readMp4Info(long);
    expect(info?.streams.map((s) => s.type)).toEqual(['audio']);
    expect(info?.durationSeconds).toBeCloseTo((await probe(long)).durationSeconds!, 1);
  });

  test('counts a track without samples as missing, where ffprobe still listed it', async () => {
    // short.mp4's last sample size table is its audio track's (tracks are written in stream order):
    // its default size and sample count set to 0 leave a track with a header and no media.
    const data = fs.readFileSync(files['short.mp4']);
    const stsz = data.lastIndexOf('stsz', undefined, 'latin1');
    data.writeUInt32BE(0, stsz + 8);
    data.writeUInt32BE(0, stsz + 12);
    const empty = path.join(dir, 'empty-audio.mp4');
    fs.writeFileSync(empty, data);
    expect((await probe(empty)).streams.map((s) => s.type)).toEqual(['video', 'audio']);
    expect((await readMp4Info(empty))?.streams.map((s) => s.type)).toEqual(['video']);
    expect(await verifyOutput(empty, want({ durationSeconds: 3 }))).toEqual(['the audio track is missing']);
  });

  test('does not read a text file as media', async () => {
    const text = path.join(dir, 'text.mp4');
    fs.writeFileSync(text, 'hello, this is not a movie at all\n');
    expect(await readMp4Info(text)).toBeUndefined();
  });
});

describe('verifying a finished mp4 or m4a gives the verdict the ffprobe check gave', () => {
  const cases: [string, string, Partial<OutputExpectation>, string[]][] = [
    ['a whole merge', 'merged.mp4', { durationSeconds: 6 }, []],
    ['a merge without its audio', 'video.mp4', { durationSeconds: 6 }, ['the audio track is missing']],
    ['an audio file asked to hold video', 'audio.m4a', { durationSeconds: 6 }, ['the video track is missing']],
    ['an m4a with its audio', 'audio.m4a', { video: false, durationSeconds: 6 }, []],
    [
      'a file far shorter than its inputs',
      'short.mp4',
      { durationSeconds: 10 },
      ['it lasts 3.0 s of the expected 10.0 s'],
    ],
    ['a file within the tolerance', 'short.mp4', { durationSeconds: 4.5 }, []],
    [
      'a file whose index is after its media',
      'index-last.mp4',
      { durationSeconds: 3 },
      ['its index (moov) is not at the start of the file'],
    ],
  ];
  test.each(cases)('%s', async (_name, file, extra, problems) => {
    const expected = want(extra);
    expect(await verifyOutput(files[file], expected)).toEqual(problems);
    expect(await ffprobeVerdict(files[file], expected)).toEqual(problems);
  });

  test('a plain mp4 or m4a is judged without starting ffprobe at all', async () => {
    const noFfprobe = { binary: path.join(dir, 'no-such-ffprobe') };
    expect(await verifyOutput(files['merged.mp4'], want({ durationSeconds: 6 }), noFfprobe)).toEqual([]);
    expect(await verifyOutput(files['video.mp4'], want({}), noFfprobe)).toEqual(['the audio track is missing']);
    // The others still need it: without it, the check cannot be made and says so.
    await expect(verifyOutput(files['index-last.mp4'], want({}), noFfprobe)).rejects.toThrow();
  });

  test('a file cut short is judged by ffprobe, as before', async () => {
    const cut = path.join(dir, 'half.mp4');
    const data = fs.readFileSync(files['merged.mp4']);
    fs.writeFileSync(cut, data.subarray(0, Math.floor(data.length / 2)));
    const expected = want({ durationSeconds: 6 });
    expect(await verifyOutput(cut, expected)).toEqual(await ffprobeVerdict(cut, expected));
  });

  test('a file that is not media is refused', async () => {
    const text = path.join(dir, 'junk.mp4');
    fs.writeFileSync(text, Buffer.alloc(4096, 7));
    expect(await verifyOutput(text, want({}))).toEqual(['it is not readable media']);
  });
});
