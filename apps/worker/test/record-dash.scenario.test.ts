// Live DASH recording end to end: ffmpeg makes a REAL live DASH stream in real time (type="dynamic",
// 1 s segments, a sliding window; video and audio as separate representations, as ffmpeg writes
// them), a local origin serves it, and a real worker records one representation through the same
// recorder as HLS into a faststart mp4. Both ways ffmpeg addresses segments are recorded: a
// SegmentTimeline ($Number$ names) and a fixed duration on the clock, whose MPD turns static at the end.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { FsArtifactStore } from '@reelay/artifacts';
import {
  decodeJobError,
  JOB_SIGNAL_CHANNEL,
  jobSignalKey,
  RecordingProgressSchema,
  type JobInput,
  type JobPayload,
  type JobResult,
} from '@reelay/contracts';
import { moovBeforeMdat, probe } from '@reelay/media';
import { startFolderOrigin, startLiveDash, testRedisClient, type FolderOrigin, type LiveStream } from '@reelay/testkit';
import { payload, until, useWorkerStack } from './helpers.js';
import type { RedisClient } from '@reelay/redis';

const stack = useWorkerStack('record-dash', { serveMedia: false });
let origin: FolderOrigin;
let timeline: LiveStream;
let fixed: LiveStream;
let redis: RedisClient;
let store: FsArtifactStore;

beforeAll(async () => {
  origin = await startFolderOrigin();
  timeline = startLiveDash();
  origin.mount('timeline', timeline.dir);
  redis = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
  store = new FsArtifactStore(stack.dataDir);
  await timeline.listed(2);
});
afterAll(async () => {
  for (const s of [timeline, fixed]) s?.kill();
  await origin?.close();
  await redis?.quit();
  for (const s of [timeline, fixed]) if (s) fs.rmSync(s.dir, { recursive: true, force: true });
});

const recording = (input: Omit<JobInput, 'stream_profile'>, extra: Partial<JobPayload> = {}): JobPayload =>
  payload([{ stream_profile: 'dash', ...input }], { operation: 'record', basename: 'live', ...extra });

async function completed(id: string, timeoutMs = 25_000): Promise<{ result: JobResult; file: string }> {
  const done = await stack.queue.finished(id, timeoutMs);
  if ((await done.getState()) !== 'completed')
    throw new Error(`recording failed: ${JSON.stringify(decodeJobError(done.failedReason))}`);
  const stored = await store.get(id);
  if (!stored) throw new Error('no artifact');
  return { result: done.returnvalue, file: stored.path };
}

test('a SegmentTimeline stream: the video representation for live.duration, a seekable mp4 of it lasting what was recorded', async () => {
  const job = recording({ url: origin.url('/timeline/manifest.mpd'), representation: '0' }, { live: { duration: 3 } });
  await stack.queue.add(job);
  const { result, file } = await completed(job.id);
  expect(result.ended).toBe('duration');
  expect(result.recording!.seconds).toBeGreaterThanOrEqual(3);
  expect(result.recording!.seconds).toBeLessThan(5);
  expect(result.recording!.gaps).toEqual([]);
  expect(result.filename).toBe('live.mp4');
  const info = await probe(file);
  expect(info.streams.map((s) => `${s.type}:${s.codec}`)).toEqual(['video:h264']);
  expect(Math.abs(info.durationSeconds! - result.recording!.seconds)).toBeLessThanOrEqual(1);
  expect(await moovBeforeMdat(file)).toBe(true);
  expect(fs.existsSync(path.join(stack.dataDir, 'recordings', job.id))).toBe(false);
});

test('a segment lost well into the broadcast takes no time in the file: its length is what was recorded', async () => {
  await timeline.listed(8);
  let first: number | undefined;
  origin.fail = (p) => {
    const n = Number(/^\/timeline\/chunk-0-(\d+)\.m4s$/.exec(p)?.[1] ?? NaN);
    if (!Number.isFinite(n)) return undefined;
    first ??= n;
    return n === first + 2 ? 404 : undefined;
  };
  try {
    const job = recording(
      { url: origin.url('/timeline/manifest.mpd'), representation: '0' },
      { live: { duration: 4 } },
    );
    await stack.queue.add(job);
    const { result, file } = await completed(job.id);
    expect(result.recording!.gaps).toHaveLength(1);
    expect(result.recording!.gaps[0].seconds).toBe(1);
    expect(Math.abs((await probe(file)).durationSeconds! - result.recording!.seconds)).toBeLessThanOrEqual(0.5);
  } finally {
    origin.fail = undefined;
  }
});

test('the audio representation, chosen by type, stopped through Redis: completed as stopped with what it had', async () => {
  const job = recording({
    url: origin.url('/timeline/manifest.mpd'),
    representation: '1',
    representation_type: 'audio',
  });
  await stack.queue.add(job);
  await until(
    async () =>
      (RecordingProgressSchema.safeParse((await stack.queue.queue.getJob(job.id))?.progress).data?.recording.seconds ??
        0) >= 2,
    15_000,
    'two seconds recorded',
  );
  await redis.set(jobSignalKey('stop', job.id), String(Date.now()), 'EX', 60);
  await redis.publish(JOB_SIGNAL_CHANNEL, JSON.stringify({ id: job.id, signal: 'stop' }));
  const { result, file } = await completed(job.id);
  expect(result.ended).toBe('stopped');
  const info = await probe(file);
  expect(info.streams.map((s) => `${s.type}:${s.codec}`)).toEqual(['audio:aac']);
  expect(Math.abs(info.durationSeconds! - result.recording!.seconds)).toBeLessThanOrEqual(1);
});

test('a fixed-duration template (segments from the clock) recorded from its start ends with the broadcast: the MPD turns static, stream_end', async () => {
  fixed = startLiveDash({ timeline: false, seconds: 4 });
  origin.mount('fixed', fixed.dir);
  await fixed.listed(1);
  const job = recording(
    { url: origin.url('/fixed/manifest.mpd'), representation: '0' },
    { live: { from_start: true } },
  );
  await stack.queue.add(job);
  const { result, file } = await completed(job.id);
  expect(result.ended).toBe('stream_end');
  expect(result.recording!.seconds).toBeGreaterThanOrEqual(3);
  expect(result.recording!.seconds).toBeLessThanOrEqual(4);
  expect(result.recording!.gaps).toEqual([]); // the segments past the end are not a gap
  expect(Math.abs((await probe(file)).durationSeconds! - result.recording!.seconds)).toBeLessThanOrEqual(1);
});
