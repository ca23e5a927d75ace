// Live recording end to end: ffmpeg makes a REAL live HLS stream in real time (1 s segments, a
// sliding window, and an EVENT playlist that ends), a local origin serves it, and a real worker
// records it into its data dir and stores one faststart mp4. Each way a recording ends is tried:
// live.duration, a stop through Redis, the stream's end, a stall; a failing segment becomes a gap;
// a cancel keeps nothing.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { FsArtifactStore } from '@reelay/artifacts';
import {
  decodeJobError,
  JOB_SIGNAL_CHANNEL,
  jobSignalKey,
  jobView,
  RecordingProgressSchema,
  type JobPayload,
  type JobResult,
} from '@reelay/contracts';
import { moovBeforeMdat, probe } from '@reelay/media';
import { payload, until, useWorkerStack } from './helpers.js';
import { startFolderOrigin, startLiveHls, testRedisClient, type FolderOrigin, type LiveStream } from '@reelay/testkit';
import type { RedisClient } from '@reelay/redis';

const stack = useWorkerStack('record', { serveMedia: false });
let origin: FolderOrigin;
let live: LiveStream;
let event: LiveStream;
let redis: RedisClient;
let store: FsArtifactStore;

beforeAll(async () => {
  origin = await startFolderOrigin();
  live = startLiveHls();
  event = startLiveHls({ seconds: 3, event: true });
  origin.mount('live', live.dir);
  origin.mount('event', event.dir);
  redis = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
  store = new FsArtifactStore(stack.dataDir);
  await live.listed(2);
});
afterAll(async () => {
  live?.kill();
  event?.kill();
  await origin?.close();
  await redis?.quit();
  for (const s of [live, event]) if (s) fs.rmSync(s.dir, { recursive: true, force: true });
});

const recording = (url: string, extra: Partial<JobPayload> = {}): JobPayload =>
  payload([{ url, stream_profile: 'hls' }], { operation: 'record', basename: 'live', ...extra });

async function signal(id: string, which: 'stop' | 'cancel'): Promise<void> {
  await redis.set(jobSignalKey(which, id), String(Date.now()), 'EX', 60);
  await redis.publish(JOB_SIGNAL_CHANNEL, JSON.stringify({ id, signal: which }));
}

async function progressOf(id: string) {
  const job = await stack.queue.queue.getJob(id);
  return RecordingProgressSchema.safeParse(job?.progress).data;
}

async function completed(id: string, timeoutMs = 20_000): Promise<{ result: JobResult; file: string }> {
  const done = await stack.queue.finished(id, timeoutMs);
  if ((await done.getState()) !== 'completed')
    throw new Error(`recording failed: ${JSON.stringify(decodeJobError(done.failedReason))}`);
  const stored = await store.get(id);
  if (!stored) throw new Error('no artifact');
  return { result: done.returnvalue, file: stored.path };
}

test('live.duration: records from the live edge about that long, shows its recording while running, and stores a seekable mp4 of what it recorded', async () => {
  const job = recording(origin.url('/live/index.m3u8'), { live: { duration: 3 } });
  await stack.queue.add(job);
  const seen: number[] = [];
  await until(
    async () => {
      const p = await progressOf(job.id);
      if (p) seen.push(p.recording.seconds);
      return (await stack.queue.state(job.id)) !== 'active' || (p?.recording.seconds ?? 0) >= 1;
    },
    15_000,
    'a running recording to show seconds',
  );
  const { result, file } = await completed(job.id);
  expect(result.ended).toBe('duration');
  expect(result.recording!.seconds).toBeGreaterThanOrEqual(3);
  expect(result.recording!.seconds).toBeLessThan(5);
  expect(result.recording!.gaps).toEqual([]);
  expect(result.filename).toBe('live.mp4');
  const info = await probe(file);
  expect(info.streams.map((s) => s.type).sort()).toEqual(['audio', 'video']);
  expect(Math.abs(info.durationSeconds! - result.recording!.seconds)).toBeLessThanOrEqual(1); // within a segment
  expect(await moovBeforeMdat(file)).toBe(true);
  expect(seen.some((s) => s >= 1)).toBe(true);
  // The Job view shows the recording and why it ended; the parts folder is gone.
  const view = jobView(job.id, (await stack.queue.queue.getJob(job.id))!, 'completed');
  expect(view).toMatchObject({
    operation: 'record',
    status: 'completed',
    ended: 'duration',
    recording: { seconds: result.recording!.seconds },
  });
  expect(fs.existsSync(path.join(stack.dataDir, 'recordings', job.id))).toBe(false);
});

test('a stop through Redis ends a running recording within seconds, completed as stopped with everything so far', async () => {
  const job = recording(origin.url('/live/index.m3u8'));
  await stack.queue.add(job);
  await until(async () => ((await progressOf(job.id))?.recording.seconds ?? 0) >= 2, 15_000, 'two seconds recorded');
  const asked = Date.now();
  await signal(job.id, 'stop');
  const { result, file } = await completed(job.id);
  const finishedOn = (await stack.queue.queue.getJob(job.id))!.finishedOn!;
  expect(finishedOn - asked).toBeLessThan(3_000);
  expect(result.ended).toBe('stopped');
  expect(result.recording!.seconds).toBeGreaterThanOrEqual(2);
  expect(Math.abs((await probe(file)).durationSeconds! - result.recording!.seconds)).toBeLessThanOrEqual(1);
});

test('an EVENT playlist recorded from its start ends with the broadcast (EXT-X-ENDLIST): completed as stream_end, all of it', async () => {
  const job = recording(origin.url('/event/index.m3u8'), { live: { from_start: true } });
  await stack.queue.add(job);
  const { result, file } = await completed(job.id);
  expect(result.ended).toBe('stream_end');
  expect(result.recording!.seconds).toBeGreaterThan(2.5);
  expect(result.recording!.seconds).toBeLessThan(4);
  expect(Math.abs((await probe(file)).durationSeconds! - result.recording!.seconds)).toBeLessThanOrEqual(1);
});

test('a segment that fails after retries is a gap, not a failure: the recording goes on and says where and how long', async () => {
  const listed = fs.readFileSync(path.join(live.dir, 'index.m3u8'), 'utf8');
  const newest = Math.max(...[...listed.matchAll(/seg(\d+)\.ts/g)].map((m) => Number(m[1])));
  const broken = `/live/seg${newest + 2}.ts`;
  origin.fail = (p) => (p === broken ? 503 : undefined);
  try {
    const job = recording(origin.url('/live/index.m3u8'), { live: { duration: 4 } });
    await stack.queue.add(job);
    const { result, file } = await completed(job.id);
    expect(origin.hits.get(broken)).toBe(3); // its retries, then no more
    expect(result.recording!.gaps).toHaveLength(1);
    expect(result.recording!.gaps[0].seconds).toBeGreaterThan(0.5);
    expect(result.recording!.gaps[0].seconds).toBeLessThan(1.5);
    // The file holds what was recorded, the gap taking no time in it.
    expect(Math.abs((await probe(file)).durationSeconds! - result.recording!.seconds)).toBeLessThanOrEqual(1);
  } finally {
    origin.fail = undefined;
  }
});

test('a playlist that stops advancing ends the recording after three target durations: completed as stalled', async () => {
  await event.listed(3);
  const frozen = fs
    .readFileSync(path.join(event.dir, 'index.m3u8'), 'utf8')
    .replace('#EXT-X-ENDLIST', '')
    .replace(/^(seg\d+\.ts)$/gm, '/event/$1');
  origin.texts.set('/frozen/index.m3u8', () => frozen);
  const job = recording(origin.url('/frozen/index.m3u8'));
  const started = Date.now();
  await stack.queue.add(job);
  const { result } = await completed(job.id);
  expect(result.ended).toBe('stalled');
  expect(Date.now() - started).toBeGreaterThan(3_000);
  expect(result.recording!.seconds).toBeGreaterThan(0); // the live edge's segment, kept
  // Refreshes bounded by the cadence: half a target duration apart, at most, while nothing changes.
  expect(origin.hits.get('/frozen/index.m3u8')).toBeLessThanOrEqual(12);
});

test('a cancel ends a running recording and keeps nothing: no artifact, no parts', async () => {
  const job = recording(origin.url('/live/index.m3u8'));
  await stack.queue.add(job);
  await until(async () => ((await progressOf(job.id))?.recording.seconds ?? 0) >= 1, 15_000, 'a second recorded');
  expect(fs.existsSync(path.join(stack.dataDir, 'recordings', job.id))).toBe(true);
  await signal(job.id, 'cancel');
  const done = await stack.queue.finished(job.id);
  expect(decodeJobError(done.failedReason).code).toBe('cancelled');
  expect(await store.get(job.id)).toBeUndefined();
  expect(fs.existsSync(path.join(stack.dataDir, 'recordings', job.id))).toBe(false);
});
