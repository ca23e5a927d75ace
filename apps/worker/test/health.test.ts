// A worker whose ffmpeg or ffprobe cannot be run says so (start-up log, /healthz 503 with the reason,
// an unhealthy heartbeat in Redis) and takes no jobs, instead of failing every job in 50 ms as
// upstream_error. Once the binary runs, it takes jobs without a restart.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { WorkerHealthSchema, workerHealthKey } from '@reelay/contracts';
import { locateBinaries } from '@reelay/media';
import { startOrigin, testMedia, testRedisClient, type Origin, type TestMedia } from '@reelay/testkit';
import { createLogger } from '@reelay/observability';
import { checkTools } from '../src/toolcheck.js';
import { payload, sample, serveTestMedia, sleep, startTestWorker, tempDataDir, TestQueue, until } from './helpers.js';
import type { RedisClient } from '@reelay/redis';

const PREFIX = `reelay-test-health-${process.pid}`;
let media: TestMedia;
let origin: Origin;
let queue: TestQueue;
let redis: RedisClient;
let dataDir: string;

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  serveTestMedia(origin, media);
  dataDir = tempDataDir('health');
  queue = new TestQueue(PREFIX);
  redis = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  await queue?.close();
  await origin?.close();
  await redis?.quit();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The heartbeats under this file's prefix. */
async function heartbeats() {
  const entries = await redis.hgetall(workerHealthKey(PREFIX));
  return Object.values(entries).map((v) => WorkerHealthSchema.parse(JSON.parse(v)));
}

test('the check names a missing binary and the setting that fixes it', async () => {
  const check = await checkTools({ ffmpeg: '/nonexistent/ffmpeg', ffprobe: 'ffprobe' });
  expect(check).toEqual({
    ok: false,
    reason:
      'ffmpeg (/nonexistent/ffmpeg) cannot be run: not found. Set FFMPEG_PATH to a working binary or put ffmpeg on PATH.',
  });
  const wrong = await checkTools({ ffmpeg: 'ffprobe', ffprobe: 'ffprobe' });
  expect(wrong.ok).toBe(false);
  expect((await checkTools({ ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' })).ok).toBe(true);
});

test('the check runs under child bounds: a "binary" that grabs 1 GiB before printing a version is stopped, not trusted', async () => {
  const fake = path.join(dataDir, 'greedy-ffmpeg');
  fs.writeFileSync(fake, `#!/usr/bin/python3\nblock = bytearray(1 << 30)\nprint("ffmpeg version 9.9")\n`, {
    mode: 0o755,
  });
  const check = await checkTools({ ffmpeg: fake, ffprobe: 'ffprobe' });
  expect(check).toEqual({
    ok: false,
    reason: expect.stringMatching(/^ffmpeg \(.*greedy-ffmpeg\) cannot be run: exited with code 1\./),
  });
});

test('a worker whose ffmpeg is missing answers /healthz 503 with the reason, says unhealthy in Redis, and leaves jobs waiting', async () => {
  const worker = await startTestWorker({ prefix: PREFIX, dataDir, env: { FFMPEG_PATH: '/nonexistent' } });
  try {
    const res = await fetch(`${worker.metricsUrl}/healthz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      status: 'unhealthy',
      reason: expect.stringContaining('ffmpeg (/nonexistent) cannot be run: not found'),
      // Versions are shown once a check has run both.
      ffmpeg: { path: '/nonexistent', source: 'FFMPEG_PATH' },
      ffprobe: { path: 'ffprobe', source: 'PATH' },
    });
    expect(await heartbeats()).toEqual([
      { healthy: false, reason: expect.stringContaining('FFMPEG_PATH'), at: expect.any(Number) },
    ]);
    expect(sample(await (await fetch(`${worker.metricsUrl}/metrics`)).text(), 'reelay_worker_healthy', {})).toBe(0);

    const job = payload([{ url: origin.url('/muxed.mp4'), stream_profile: 'muxed_progressive' }], { format: 'mp3' });
    await queue.add(job, { attempts: 3 });
    await sleep(1_000);
    expect(await queue.state(job.id)).toBe('waiting');
    await queue.queue.remove(job.id);
  } finally {
    await worker.stop();
  }
  expect(await heartbeats()).toEqual([]); // a stopped worker is no longer counted
});

test('a worker whose ffmpeg appears later starts taking jobs without a restart', async () => {
  const link = path.join(dataDir, 'ffmpeg-later');
  const worker = await startTestWorker({ prefix: PREFIX, dataDir, env: { FFMPEG_PATH: link }, heartbeatMs: 200 });
  try {
    expect(worker.health().healthy).toBe(false);
    const job = payload([{ url: origin.url('/muxed.mp4'), stream_profile: 'muxed_progressive' }], { format: 'mp3' });
    await queue.add(job);
    fs.symlinkSync(process.env.FFMPEG_PATH || '/usr/bin/ffmpeg', link);
    // Generous: the worker looks again on its 200 ms beat, but a loaded CI machine may hold it back.
    await until(() => worker.health().healthy, 20_000, 'the worker to find its ffmpeg');
    expect(await (await queue.finished(job.id)).getState()).toBe('completed');
    expect((await fetch(`${worker.metricsUrl}/healthz`)).status).toBe(200);
    await until(async () => (await heartbeats()).some((h) => h.healthy), 10_000, 'a healthy heartbeat');
  } finally {
    await worker.stop();
  }
});

test('a worker whose ffmpeg disappears while it runs hands the job back unharmed, stops taking jobs, and resumes once it is back', async () => {
  const link = path.join(dataDir, 'ffmpeg-vanishing');
  fs.symlinkSync(process.env.FFMPEG_PATH || '/usr/bin/ffmpeg', link);
  const worker = await startTestWorker({ prefix: PREFIX, dataDir, env: { FFMPEG_PATH: link }, heartbeatMs: 300 });
  try {
    expect(worker.health().healthy).toBe(true);
    fs.rmSync(link);
    const job = payload([{ url: origin.url('/muxed.mp4'), stream_profile: 'muxed_progressive' }], {
      format: 'mp3',
      duration: 2,
    });
    await queue.add(job, { attempts: 1 });
    await until(() => !worker.health().healthy, 20_000, 'the worker to notice');
    expect(worker.health().reason).toContain('cannot be run: not found');
    await sleep(500);
    expect(await queue.state(job.id)).toBe('waiting'); // not failed, and its one attempt unused

    fs.symlinkSync(process.env.FFMPEG_PATH || '/usr/bin/ffmpeg', link);
    const done = await queue.finished(job.id);
    expect(await done.getState()).toBe('completed');
    expect(done.attemptsMade).toBe(1);
  } finally {
    await worker.stop();
  }
});

test("a healthy worker's /healthz and start-up log say which ffmpeg and ffprobe it runs, their versions and where they came from", async () => {
  const ffprobe = process.env.FFPROBE_PATH || '/usr/bin/ffprobe';
  const lines: string[] = [];
  const destination = new (await import('node:stream')).Writable({
    write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()),
  });
  const worker = await startTestWorker({
    prefix: PREFIX,
    dataDir,
    env: { FFPROBE_PATH: ffprobe },
    logger: createLogger({ name: 'worker-test', level: 'info', destination }),
  });
  try {
    const res = await fetch(`${worker.metricsUrl}/healthz`);
    const version = (binary: string) =>
      execFileSync(binary, ['-hide_banner', '-version'], { encoding: 'utf8' }).split(' ')[2];
    // Without FFMPEG_PATH: ffmpeg-static's binary where its download worked, else ffmpeg on PATH.
    const ffmpeg = locateBinaries({}).ffmpeg;
    const expected = {
      ffmpeg: { ...ffmpeg, version: version(ffmpeg.path) },
      ffprobe: { path: ffprobe, source: 'FFPROBE_PATH', version: version(ffprobe) },
    };
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 200,
      body: { status: 'ok', ...expected },
    });
    const started = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'worker started');
    expect(started).toMatchObject(expected);
  } finally {
    await worker.stop();
  }
});
