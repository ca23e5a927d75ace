import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { resolveFfmpeg } from '../src/binaries.js';
import { buildArgs, type MediaOperation } from '../src/operations.js';
import { moovBeforeMdat } from '../src/faststart.js';
import { probe } from '../src/probe.js';
import { FfmpegError, runFfmpeg, type RunFfmpegOptions } from '../src/runner.js';

const ffmpeg = resolveFfmpeg({ FFMPEG_PATH: process.env.FFMPEG_PATH });
const GLOBAL = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-progress', 'pipe:1', '-nostats'];
/** A live-paced synthetic source: runs for `seconds` of wall time. */
const slowSource = (seconds: number) => [
  ...GLOBAL,
  '-re',
  '-f',
  'lavfi',
  '-i',
  `testsrc2=size=64x48:rate=10:duration=${seconds}`,
  '-f',
  'null',
  '-',
];

let media: TestMedia;
let origin: Origin;
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-media-'));

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  for (const name of fs.readdirSync(media.hlsDir))
    origin.file(
      `/hls/${name}`,
      path.join(media.hlsDir, name),
      name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t',
    );
  for (const name of fs.readdirSync(media.dashDir))
    origin.file(
      `/dash/${name}`,
      path.join(media.dashDir, name),
      name.endsWith('.mpd') ? 'application/dash+xml' : 'video/iso.segment',
    );
});

afterAll(async () => {
  await origin?.close();
  fs.rmSync(out, { recursive: true, force: true });
});

/** Builds, runs and returns the output path (named .part: the muxer is explicit, not guessed). */
async function run(op: MediaOperation, extra: Partial<RunFfmpegOptions> = {}): Promise<string> {
  const output = path.join(out, `${op.type}-${Math.random().toString(36).slice(2)}.part`);
  await runFfmpeg({ binary: ffmpeg, args: buildArgs(op, { output }).args, timeoutMs: 15_000, ...extra });
  return output;
}

async function failure(promise: Promise<unknown>): Promise<FfmpegError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(FfmpegError);
    return err as FfmpegError;
  }
  throw new Error('expected ffmpeg to fail');
}

describe('real ffmpeg runs on local files', () => {
  test('merging a video-only and an audio-only file gives one mp4 with both, index first', async () => {
    const file = await run({
      type: 'merge',
      videoInput: media.videoOnlyMp4,
      audioInput: media.audioOnlyM4a,
      container: 'mp4',
    });
    const info = await probe(file);
    expect(info.formatName).toContain('mp4');
    expect(info.streams.map((s) => [s.type, s.codec])).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info.streams[0]).toMatchObject({ width: 640, height: 360 });
    expect(info.durationSeconds).toBeGreaterThan(1.8);
    expect(info.durationSeconds).toBeLessThan(2.3);
    expect(info.size).toBe(fs.statSync(file).size);
    expect(await moovBeforeMdat(file)).toBe(true);
  });

  test('the faststart check is false for an mp4 written without +faststart', async () => {
    const output = path.join(out, 'slow.mp4');
    await runFfmpeg({
      binary: ffmpeg,
      args: [...GLOBAL, '-i', media.videoOnlyMp4, '-c', 'copy', output],
      timeoutMs: 10_000,
    });
    expect(await moovBeforeMdat(output)).toBe(false);
  });

  test('converting to mp3 gives a single mp3 audio stream and reports rising progress ending at 100', async () => {
    const seen: number[] = [];
    const file = await run(
      { type: 'convert', input: media.muxedMp4, format: 'mp3', audioCodec: 'aac' },
      { durationSeconds: 2, onProgress: (p) => seen.push(p) },
    );
    const info = await probe(file);
    expect(info.formatName).toBe('mp3');
    expect(info.streams.map((s) => [s.type, s.codec])).toEqual([['audio', 'mp3']]);
    expect(seen.at(-1)).toBe(100);
    expect(seen.slice(0, -1).every((p) => p >= 0 && p <= 99)).toBe(true);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]);
  });

  test('converting to wav gives a single 16-bit PCM stream', async () => {
    const file = await run({ type: 'convert', input: media.muxedMp4, format: 'wav' });
    const info = await probe(file);
    expect(info.formatName).toBe('wav');
    expect(info.streams.map((s) => [s.type, s.codec])).toEqual([['audio', 'pcm_s16le']]);
    expect(info.durationSeconds).toBeGreaterThan(1.8);
  });

  test('progress during a longer run rises through several values and ends at 100', async () => {
    const seen: number[] = [];
    await runFfmpeg({
      binary: ffmpeg,
      args: [...slowSource(1.5).slice(0, -3), '-stats_period', '0.1', '-f', 'null', '-'],
      timeoutMs: 10_000,
      durationSeconds: 1.5,
      onProgress: (p) => seen.push(p),
    });
    expect(seen.length).toBeGreaterThanOrEqual(5);
    expect(seen.at(-1)).toBe(100);
    expect(seen.at(-2)).toBeLessThanOrEqual(99);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]);
  });

  test('a duration that arrives while ffmpeg runs still gives running progress', async () => {
    const seen: number[] = [];
    await runFfmpeg({
      binary: ffmpeg,
      args: [...slowSource(1.5).slice(0, -3), '-stats_period', '0.1', '-f', 'null', '-'],
      timeoutMs: 10_000,
      durationSeconds: new Promise((resolve) => setTimeout(() => resolve(1.5), 300)),
      onProgress: (p) => seen.push(p),
    });
    expect(seen.filter((p) => p > 0 && p < 100).length).toBeGreaterThanOrEqual(2);
    expect(seen.at(-1)).toBe(100);
  });

  test('a duration probe that fails leaves only the final 100', async () => {
    const seen: number[] = [];
    await runFfmpeg({
      binary: ffmpeg,
      args: [...slowSource(0.5).slice(0, -3), '-stats_period', '0.1', '-f', 'null', '-'],
      timeoutMs: 10_000,
      durationSeconds: Promise.reject(new Error('probe failed')),
      onProgress: (p) => seen.push(p),
    });
    expect(seen).toEqual([100]);
  });

  test('a progress callback that throws stops the run with its own error', async () => {
    const boom = new Error('progress store is down');
    const started = Date.now();
    const promise = runFfmpeg({
      binary: ffmpeg,
      args: [...slowSource(60).slice(0, -3), '-stats_period', '0.1', '-f', 'null', '-'],
      timeoutMs: 10_000,
      durationSeconds: 60,
      onProgress: () => {
        throw boom;
      },
    });
    await expect(promise).rejects.toBe(boom);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('failures', () => {
  test('a run over its timeout is terminated and fails as a timeout', async () => {
    const started = Date.now();
    const err = await failure(runFfmpeg({ binary: ffmpeg, args: slowSource(60), timeoutMs: 1_000 }));
    expect(err.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  test('a process that ignores SIGTERM is killed after the grace period', async () => {
    const started = Date.now();
    // Ignores SIGTERM; exits by itself after 10 s so a broken runner cannot leave it behind. The
    // time limit leaves node time to start and install its handler even on a loaded machine (at
    // 300 ms a slow start meant SIGTERM arrived first and killed it, so the test failed at random).
    const stubborn = "process.on('SIGTERM', () => {}); setTimeout(() => process.exit(0), 10000);";
    const err = await failure(
      runFfmpeg({ binary: process.execPath, args: ['-e', stubborn], timeoutMs: 2_000, killGraceMs: 300 }),
    );
    expect(err.kind).toBe('timeout');
    expect((err.cause as { isForcefullyTerminated?: boolean }).isForcefullyTerminated).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_250);
    expect(Date.now() - started).toBeLessThan(8_000);
  });

  test('aborting the signal stops the run and fails as aborted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    const err = await failure(
      runFfmpeg({ binary: ffmpeg, args: slowSource(60), timeoutMs: 30_000, signal: controller.signal }),
    );
    expect(err.kind).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  test("ffmpeg leads its own process group, so a Ctrl-C sent to the worker's terminal group never reaches it", async () => {
    const report = path.join(out, `pgrp-${Math.random().toString(36).slice(2)}.txt`);
    // Field 5 of /proc/self/stat is the process group (the name in field 2 is in parentheses).
    const script = `require('fs').writeFileSync(${JSON.stringify(report)}, require('fs').readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[2] + ' ' + process.pid)`;
    await runFfmpeg({ binary: process.execPath, args: ['-e', script], timeoutMs: 10_000 });
    const [group, pid] = fs.readFileSync(report, 'utf8').split(' ').map(Number);
    const ownGroup = Number(fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[2]);
    expect(group).toBe(pid);
    expect(group).not.toBe(ownGroup);
  });

  test('an already aborted signal fails without starting ffmpeg', async () => {
    const err = await failure(
      runFfmpeg({ binary: ffmpeg, args: slowSource(60), timeoutMs: 30_000, signal: AbortSignal.abort() }),
    );
    expect(err.kind).toBe('aborted');
    expect(err.exitCode).toBeUndefined();
  });

  test('a bad input fails with the exit code and the tail of stderr', async () => {
    const junk = path.join(out, 'junk.mp4');
    fs.writeFileSync(junk, 'this is not media\n'.repeat(100));
    const err = await failure(run({ type: 'convert', input: junk, format: 'mp3' }));
    expect(err.kind).toBe('failed');
    expect(err.exitCode).not.toBe(0);
    expect(err.exitCode).toEqual(expect.any(Number));
    expect(err.stderrTail).toMatch(/Invalid data found/);
    expect(err.message).toMatch(/exited with code \d+: .*Invalid data found/);
  });

  test('a missing binary fails without an exit code', async () => {
    const err = await failure(runFfmpeg({ binary: path.join(out, 'no-such-ffmpeg'), args: [], timeoutMs: 1_000 }));
    expect(err.kind).toBe('failed');
    expect(err.exitCode).toBeUndefined();
  });

  test("probing a file that is not media fails with ffprobe's reason", async () => {
    const junk = path.join(out, 'junk.txt');
    fs.writeFileSync(junk, 'not media');
    const err = await failure(probe(junk));
    expect(err.kind).toBe('failed');
    expect(err.stderrTail).toMatch(/Invalid data found/);
  });
});

describe('segmented inputs and the protocol whitelist', () => {
  test('an HLS playlist over http remuxes into a faststart mp4 with http,tcp only', async () => {
    const file = await run({
      type: 'remux',
      manifest: 'hls',
      input: origin.url('/hls/index.m3u8'),
      container: 'mp4',
      audioCodec: 'mp4a.40.2',
    });
    const info = await probe(file);
    expect(info.streams.map((s) => [s.type, s.codec])).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info.durationSeconds).toBeGreaterThan(1.8);
    expect(await moovBeforeMdat(file)).toBe(true);
    expect(origin.hits.get('/hls/seg000.ts')).toBeGreaterThanOrEqual(1);
  });

  test('the request headers of an input reach the origin on the playlist and every segment', async () => {
    const seen: (string | undefined)[][] = [];
    for (const name of ['index.m3u8', 'seg000.ts', 'seg001.ts']) {
      const file = path.join(media.hlsDir, name);
      origin.route(`/hdr/${name}`, (req, res) => {
        seen.push([name, req.headers['user-agent'], req.headers.referer, String(req.headers['x-token'])]);
        res
          .writeHead(200, { 'content-type': name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t' })
          .end(fs.readFileSync(file));
      });
    }
    const headers = { 'User-Agent': 'reelay-test/1', Referer: 'https://site.example/', 'X-Token': 'abc' };
    await run({
      type: 'remux',
      manifest: 'hls',
      input: { url: origin.url('/hdr/index.m3u8'), headers },
      container: 'mkv',
    });
    expect(seen.map((s) => s[0]).sort()).toEqual(['index.m3u8', 'seg000.ts', 'seg001.ts']);
    for (const [, ua, referer, token] of seen)
      expect([ua, referer, token]).toEqual(['reelay-test/1', 'https://site.example/', 'abc']);
  });

  test('a DASH video and audio representation over http remux into one mp4 with http,tcp only', async () => {
    const mpd = origin.url('/dash/manifest.mpd');
    const file = await run({
      type: 'remux',
      manifest: 'dash',
      videoInput: mpd,
      audioInput: mpd,
      videoRepresentation: '0',
      audioRepresentation: '1',
      container: 'mp4',
    });
    const info = await probe(file);
    expect(info.streams.map((s) => [s.type, s.codec])).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info.durationSeconds).toBeGreaterThan(1.8);
  });

  test('a local HLS playlist remuxes with the file protocol only', async () => {
    const file = await run({
      type: 'remux',
      manifest: 'hls',
      input: path.join(media.hlsDir, 'index.m3u8'),
      container: 'mkv',
    });
    const info = await probe(file);
    expect(info.formatName).toContain('matroska');
    expect(info.streams.map((s) => s.type)).toEqual(['video', 'audio']);
  });

  test.each([
    ['a local file', (seg: string) => `file://${seg}`, /Protocol 'file' not on whitelist 'http,tcp'/],
    ['an https URL', () => 'https://example.invalid/seg000.ts', /Protocol 'https' not on whitelist 'http,tcp'/],
    ['a crypto URL', (seg: string) => `crypto:file://${seg}`, /Protocol 'crypto' not on whitelist 'http,tcp'/],
  ])('a playlist over http that points a segment at %s is refused by ffmpeg', async (_what, segment, reason) => {
    const playlist = fs
      .readFileSync(path.join(media.hlsDir, 'index.m3u8'), 'utf8')
      .replace('seg000.ts', segment(path.join(media.hlsDir, 'seg000.ts')));
    const route = `/evil-${Math.random().toString(36).slice(2)}.m3u8`;
    origin.body(route, playlist, 'application/vnd.apple.mpegurl');
    const err = await failure(run({ type: 'remux', manifest: 'hls', input: origin.url(route), container: 'mkv' }));
    expect(err.kind).toBe('failed');
    expect(err.stderrTail).toMatch(reason);
  });

  test('a playlist line naming httpproxy:// cannot make ffmpeg dial its address', async () => {
    // ffmpeg's HLS demuxer admits any protocol whose name starts with "http"; httpproxy would connect
    // to the host in the URL directly. With it off the whitelist, nothing connects.
    const dialled: string[] = [];
    const trap = net.createServer((socket) => {
      dialled.push('connection');
      socket.destroy();
    });
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    const { port } = trap.address() as net.AddressInfo;
    try {
      const playlist = fs
        .readFileSync(path.join(media.hlsDir, 'index.m3u8'), 'utf8')
        .replace(/seg(\d+)\.ts/g, `httpproxy://127.0.0.1:${port}/127.0.0.1:1/seg$1.ts`);
      const route = `/proxy-${Math.random().toString(36).slice(2)}.m3u8`;
      origin.body(route, playlist, 'application/vnd.apple.mpegurl');
      const err = await failure(run({ type: 'remux', manifest: 'hls', input: origin.url(route), container: 'mkv' }));
      expect(err.stderrTail).toMatch(/Protocol 'httpproxy' not on whitelist/);
      expect(dialled).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => trap.close(() => resolve()));
    }
  });

  test('a progressive input that serves a playlist is refused by the demuxer whitelist', async () => {
    const err = await failure(run({ type: 'convert', input: origin.url('/hls/index.m3u8'), format: 'mkv' }));
    expect(err.stderrTail).toMatch(/Format not on whitelist/);
  });
});
