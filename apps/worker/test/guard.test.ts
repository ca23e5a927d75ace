// What a job cannot do and how it fails: manifests that point at private addresses, local files or
// other protocols; origins that answer 404 or 503; inputs that never finish.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { decodeJobError, type JobInput } from '@reelay/contracts';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import type { RunningWorker } from '../src/worker.js';
import {
  payload,
  processesMentioning,
  sample,
  sampleSum,
  serveTestMedia,
  startTestWorker,
  startTrap,
  tempDataDir,
  TestQueue,
  trickle,
  until,
} from './helpers.js';

const PREFIX = `reelay-test-guard-${process.pid}`;
let media: TestMedia;
let origin: Origin;
let worker: RunningWorker;
let queue: TestQueue;
let dataDir: string;
let trap: Awaited<ReturnType<typeof startTrap>>;
const fifoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-fifo-'));

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  serveTestMedia(origin, media);
  trap = await startTrap('127.0.0.2');
  dataDir = tempDataDir('guard');
  worker = await startTestWorker({ prefix: PREFIX, dataDir });
  queue = new TestQueue(PREFIX);
});

afterAll(async () => {
  await worker?.stop();
  await queue?.close();
  await origin?.close();
  await trap?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(fifoDir, { recursive: true, force: true });
});

const playlist = () => fs.readFileSync(path.join(media.hlsDir, 'index.m3u8'), 'utf8');

/** Serves a playlist whose segment lines are replaced, and returns the job input for it. */
function evilPlaylist(segment: (name: string) => string): JobInput {
  const route = `/evil-${Math.random().toString(36).slice(2)}.m3u8`;
  origin.body(
    route,
    playlist().replace(/^(seg\d+\.ts)$/gm, (name) => segment(name)),
    'application/vnd.apple.mpegurl',
  );
  return { url: origin.url(route), stream_profile: 'hls' };
}

async function failure(
  job: ReturnType<typeof payload>,
  attempts = 1,
): Promise<{ code: string; message: string; attemptsMade: number }> {
  await queue.add(job, { attempts, backoff: { type: 'fixed', delay: 100 } });
  const done = await queue.finished(job.id);
  expect(await done.getState()).toBe('failed');
  return { ...decodeJobError(done.failedReason), attemptsMade: done.attemptsMade };
}

describe('the egress guard holds for every URL ffmpeg reads', () => {
  test('a playlist whose segments point at a private address fails with url_blocked, and that address is never contacted', async () => {
    const job = payload([evilPlaylist((name) => `http://127.0.0.2:${trap.port}/${name}`)], { operation: 'remux' });
    const result = await failure(job, 3);
    expect(result).toMatchObject({ code: 'url_blocked', attemptsMade: 1 });
    expect(result.message).toMatch(/127\.0\.0\.2.*loopback/);
    expect(trap.connections).toBe(0);
  });

  test('a playlist naming httpproxy:// (a protocol that would dial the address itself) fails, and nothing is contacted', async () => {
    const job = payload([evilPlaylist((name) => `httpproxy://127.0.0.2:${trap.port}/127.0.0.1:1/${name}`)], {
      operation: 'remux',
    });
    expect(await failure(job)).toMatchObject({ code: 'url_blocked' });
    expect(trap.connections).toBe(0);
  });

  // ffmpeg's whitelist refuses file: by name (url_blocked); its HLS demuxer drops concat: before
  // that, as an unreadable segment.
  test.each([
    ['file://', (fifo: string) => `file://${fifo}`, 'url_blocked'],
    ['concat:', (fifo: string) => `concat:${fifo}|${fifo}`, 'upstream_error'],
  ])('a playlist with %s segments fails and reads nothing local', async (_what, segment, code) => {
    // A FIFO shows any attempt to open it: a writer's non-blocking open succeeds only while a reader has it open.
    const fifo = path.join(fifoDir, `secret-${Math.random().toString(36).slice(2)}.ts`);
    execFileSync('mkfifo', [fifo]);
    let opened = false;
    const watch = setInterval(() => {
      try {
        fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
        opened = true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err;
      }
    }, 10);
    try {
      const result = await failure(payload([evilPlaylist(() => segment(fifo))], { operation: 'remux' }));
      expect(result.code).toBe(code);
      expect(result.message).not.toContain(fifoDir);
    } finally {
      clearInterval(watch);
    }
    expect(opened).toBe(false);
  });

  test('the refusals show in /metrics', async () => {
    const text = await (await fetch(`${worker.metricsUrl}/metrics`)).text();
    expect(sample(text, 'reelay_proxy_blocked_total', {})).toBeGreaterThanOrEqual(1);
    expect(sampleSum(text, 'reelay_jobs_total', { operation: 'remux', outcome: 'failed' })).toBeGreaterThanOrEqual(4);
  });
});

test('a payload that does not match the contract fails with invalid_request at once', async () => {
  const job = payload([{ url: origin.url('/muxed.mp4'), stream_profile: 'muxed_progressive' }], { format: 'mp3' });
  await queue.queue.add('download', { ...job, inputs: [] }, { jobId: job.id, attempts: 3 });
  const done = await queue.finished(job.id);
  expect(await done.getState()).toBe('failed');
  expect(decodeJobError(done.failedReason)).toEqual({
    code: 'invalid_request',
    message: 'The job payload is invalid.',
  });
  expect(done.attemptsMade).toBe(1);
});

describe('origin failures', () => {
  test('a 404 fails the job with content_not_found at once, without retries', async () => {
    const job = payload([{ url: origin.url('/no-such.mp4'), stream_profile: 'muxed_progressive' }], { format: 'mp3' });
    expect(await failure(job, 3)).toEqual({
      code: 'content_not_found',
      message: 'The origin answered 404: the content does not exist.',
      attemptsMade: 1,
    });
  });

  test("a 503 is an upstream_error that is retried with the producer's backoff", async () => {
    origin.status('/busy.mp4', 503, 'try later');
    const job = payload([{ url: origin.url('/busy.mp4'), stream_profile: 'muxed_progressive' }], { format: 'mp3' });
    expect(await failure(job, 2)).toEqual({
      code: 'upstream_error',
      message: 'The origin failed with HTTP 503.',
      attemptsMade: 2,
    });
    expect(origin.hits.get('/busy.mp4')).toBeGreaterThanOrEqual(2);
  });

  test.each([
    ['/limited.mp4', 429, '30', 'The origin is rate limiting requests (429) for 30 s; try again later.'],
    ['/limited-503.mp4', 503, '120', 'The origin is rate limiting requests (503) for 120 s; try again later.'],
  ])(
    'a %s origin answering %d with Retry-After %s fails the job with upstream_rate_limited, retried',
    async (path, status, retryAfter, message) => {
      origin.route(path, (_req, res) => void res.writeHead(status, { 'retry-after': retryAfter }).end('slow down'));
      const job = payload([{ url: origin.url(path), stream_profile: 'muxed_progressive' }], { format: 'mp3' });
      expect(await failure(job, 2)).toEqual({ code: 'upstream_rate_limited', message, attemptsMade: 2 });
    },
  );

  test('an input that never finishes fails with job_timeout and leaves no ffmpeg behind', async () => {
    const prefix = `${PREFIX}-timeout`;
    const slowWorker = await startTestWorker({ prefix, dataDir, env: { JOB_TIMEOUT_SECONDS: '2' } });
    const slowQueue = new TestQueue(prefix);
    try {
      trickle(origin, '/forever.mp4', media.videoOnlyMp4, 'video/mp4', () => 64);
      const job = payload([{ url: origin.url('/forever.mp4'), stream_profile: 'video_only' }], {
        format: 'mkv',
        duration: 2,
      });
      await slowQueue.add(job, { attempts: 2 });
      await until(async () => processesMentioning(job.id).length > 0, 5_000, 'ffmpeg to start');
      const started = Date.now();
      const done = await slowQueue.finished(job.id, 15_000);
      expect(await done.getState()).toBe('failed');
      expect(decodeJobError(done.failedReason)).toEqual({
        code: 'job_timeout',
        message: 'The job ran longer than its limit of 2 seconds.',
      });
      expect(done.attemptsMade).toBe(1);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(processesMentioning(job.id)).toEqual([]);
      const text = await (await fetch(`${slowWorker.metricsUrl}/metrics`)).text();
      expect(sample(text, 'reelay_ffmpeg_failures_total', { operation: 'convert', kind: 'timeout' })).toBe(1);
    } finally {
      await slowWorker.stop();
      await slowQueue.close();
    }
  });

  test('a job that fetches more than MAX_MEDIA_BYTES is cut off and fails without retries', async () => {
    const prefix = `${PREFIX}-limit`;
    const smallWorker = await startTestWorker({ prefix, dataDir, env: { MAX_MEDIA_BYTES: '100000' } });
    const smallQueue = new TestQueue(prefix);
    try {
      const job = payload([{ url: origin.url('/video-only.mp4'), stream_profile: 'video_only' }], {
        format: 'mkv',
        duration: 2,
      });
      await smallQueue.add(job, { attempts: 3 });
      const done = await smallQueue.finished(job.id);
      expect(await done.getState()).toBe('failed');
      expect(decodeJobError(done.failedReason)).toEqual({
        code: 'upstream_error',
        message: 'The media is larger than the limit of 98 KiB.',
      });
      expect(done.attemptsMade).toBe(1);
    } finally {
      await smallWorker.stop();
      await smallQueue.close();
    }
  });
});

test('failed jobs leave no temporary folders behind', () => {
  expect(fs.readdirSync(path.join(dataDir, 'tmp'))).toEqual([]);
});
