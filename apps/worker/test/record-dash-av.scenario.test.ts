// Live DASH recorded with its video AND its audio: ffmpeg makes a REAL live DASH stream in real time
// with separate video and audio adaptation sets (what its dash muxer writes by default: a 440 Hz tone
// for sound), a local origin serves it, and a real worker records both representations into one
// faststart mp4. What a person hears and sees is checked on the file: both streams, the same length,
// a tone and not silence, and after an audio segment that could not be fetched the sound resumes
// where it belongs instead of early.
import { execFileSync, spawnSync } from 'node:child_process';
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
import { moovBeforeMdat } from '@reelay/media';
import { startFolderOrigin, startLiveDash, testRedisClient, type FolderOrigin, type LiveStream } from '@reelay/testkit';
import { payload, until, useWorkerStack } from './helpers.js';
import type { RedisClient } from '@reelay/redis';

const stack = useWorkerStack('record-dash-av', { serveMedia: false });
let origin: FolderOrigin;
let live: LiveStream;
let redis: RedisClient;
let store: FsArtifactStore;

beforeAll(async () => {
  origin = await startFolderOrigin();
  live = startLiveDash({ windowSize: 8 });
  origin.mount('av', live.dir);
  redis = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
  store = new FsArtifactStore(stack.dataDir);
  await live.listed(2);
});
afterAll(async () => {
  live?.kill();
  await origin?.close();
  await redis?.quit();
  if (live) fs.rmSync(live.dir, { recursive: true, force: true });
});

/** The video (id 0) and audio (id 1) representations of the live stream, as the gateway names a pair. */
const pair = (): JobInput[] => [
  { url: origin.url('/av/manifest.mpd'), stream_profile: 'dash', representation: '0', representation_type: 'video' },
  { url: origin.url('/av/manifest.mpd'), stream_profile: 'dash', representation: '1', representation_type: 'audio' },
];
const recording = (extra: Partial<JobPayload> = {}): JobPayload =>
  payload(pair(), { operation: 'record', basename: 'live', ...extra });

async function completed(id: string, timeoutMs = 30_000): Promise<{ result: JobResult; file: string }> {
  const done = await stack.queue.finished(id, timeoutMs);
  if ((await done.getState()) !== 'completed')
    throw new Error(`recording failed: ${JSON.stringify(decodeJobError(done.failedReason))}`);
  const stored = await store.get(id);
  if (!stored) throw new Error('no artifact');
  return { result: done.returnvalue, file: stored.path };
}

const ffprobe = process.env.FFPROBE_PATH || 'ffprobe';
const ffmpeg = process.env.FFMPEG_PATH || 'ffmpeg';

/** Each stream's type, codec, and where it starts and ends in the file (seconds). */
function streams(file: string): { type: string; codec: string; start: number; end: number }[] {
  const out = JSON.parse(
    execFileSync(
      ffprobe,
      ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name,start_time,duration', '-of', 'json', file],
      { encoding: 'utf8' },
    ),
  ) as { streams: { codec_type: string; codec_name: string; start_time: string; duration: string }[] };
  return out.streams.map((s) => ({
    type: s.codec_type,
    codec: s.codec_name,
    start: Number(s.start_time),
    end: Number(s.start_time) + Number(s.duration),
  }));
}

/** The presentation times of one stream's packets, in order. */
function packetTimes(file: string, type: 'v' | 'a'): number[] {
  const out = execFileSync(
    ffprobe,
    ['-v', 'error', '-select_streams', `${type}:0`, '-show_entries', 'packet=pts_time', '-of', 'csv=p=0', file],
    { encoding: 'utf8' },
  );
  return out
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .sort((a, b) => a - b);
}

/** The audio's mean volume in dB (ffmpeg volumedetect, on stderr): a 440 Hz tone at ffmpeg's default level is about -21 dB; silence -91. */
function meanVolume(file: string): number {
  const run = spawnSync(
    ffmpeg,
    ['-hide_banner', '-nostats', '-i', file, '-map', '0:a', '-af', 'volumedetect', '-f', 'null', '-'],
    { encoding: 'utf8' },
  );
  return Number(/mean_volume: (-?[\d.]+) dB/.exec(run.stderr)?.[1] ?? NaN);
}

/** The largest step between consecutive packets: where a stream has a hole, and how long it is. */
function largestStep(times: number[]): { at: number; seconds: number } {
  let best = { at: 0, seconds: 0 };
  for (let i = 1; i < times.length; i++)
    if (times[i] - times[i - 1] > best.seconds) best = { at: times[i - 1], seconds: times[i] - times[i - 1] };
  return best;
}

test('separate video and audio adaptation sets recorded for live.duration: one faststart mp4 with both, the same length, and a tone you can hear', async () => {
  const job = recording({ live: { duration: 4 } });
  await stack.queue.add(job);
  const { result, file } = await completed(job.id);
  expect(result.ended).toBe('duration');
  expect(result.recording!.seconds).toBeGreaterThanOrEqual(4);
  expect(result.recording!.seconds).toBeLessThan(6);
  expect(result.recording!.gaps).toEqual([]);
  expect(result.filename).toBe('live.mp4');
  const [video, audio] = streams(file);
  expect([video, audio].map((s) => `${s.type}:${s.codec}`)).toEqual(['video:h264', 'audio:aac']);
  // In step: they start together and end within a segment of each other and of what was recorded.
  expect(Math.abs(video.start - audio.start)).toBeLessThan(0.25);
  expect(Math.abs(video.end - audio.end)).toBeLessThanOrEqual(1);
  expect(Math.abs(video.end - result.recording!.seconds)).toBeLessThanOrEqual(1);
  expect(meanVolume(file)).toBeGreaterThan(-30);
  expect(await moovBeforeMdat(file)).toBe(true);
  expect(fs.existsSync(path.join(stack.dataDir, 'recordings', job.id))).toBe(false);
});

test('an audio segment that fails after its retries is a hole in the audio alone: the sound after it comes back where it belongs, and gaps names the track', async () => {
  // Well into the broadcast, as a real one is: ffmpeg gives an fMP4 part's length from time 0 of
  // the stream, so a part's place must come from the timeline, not from ffmpeg's idea of its length.
  await live.listed(8);
  let first: number | undefined;
  let lost: number | undefined;
  origin.fail = (p) => {
    const n = Number(/^\/av\/chunk-1-(\d+)\.m4s$/.exec(p)?.[1] ?? NaN);
    if (!Number.isFinite(n)) return undefined;
    first ??= n;
    if (n === first + 2) {
      lost = n;
      return 404;
    }
    return undefined;
  };
  try {
    const job = recording({ live: { duration: 6 } });
    await stack.queue.add(job);
    const { result, file } = await completed(job.id);
    expect(lost).toBeDefined();
    expect(result.ended).toBe('duration');
    const gaps = result.recording!.gaps;
    expect(gaps).toHaveLength(1);
    expect(gaps[0]).toMatchObject({ track: 'audio' });
    expect(gaps[0].seconds).toBeGreaterThan(0.9);
    expect(gaps[0].seconds).toBeLessThan(1.1);
    // The audio has a hole of that length where the gap is; the video none: the sound after the hole
    // plays with the picture it belongs to (a hole that took no time would shift it a second early).
    const hole = largestStep(packetTimes(file, 'a'));
    expect(hole.seconds).toBeGreaterThan(gaps[0].seconds - 0.15);
    expect(hole.seconds).toBeLessThan(gaps[0].seconds + 0.15);
    expect(Math.abs(hole.at - gaps[0].at)).toBeLessThan(0.15);
    expect(largestStep(packetTimes(file, 'v')).seconds).toBeLessThan(0.25);
    const [video, audio] = streams(file);
    expect(Math.abs(video.end - audio.end)).toBeLessThanOrEqual(1);
    expect(meanVolume(file)).toBeGreaterThan(-30);
  } finally {
    origin.fail = undefined;
  }
});

test('stopped through Redis: completed as stopped with both tracks of what it had', async () => {
  const job = recording();
  await stack.queue.add(job);
  await until(
    async () =>
      (RecordingProgressSchema.safeParse((await stack.queue.queue.getJob(job.id))?.progress).data?.recording.seconds ??
        0) >= 2,
    15_000,
    'two seconds recorded',
  );
  const asked = Date.now();
  await redis.set(jobSignalKey('stop', job.id), String(Date.now()), 'EX', 60);
  await redis.publish(JOB_SIGNAL_CHANNEL, JSON.stringify({ id: job.id, signal: 'stop' }));
  const { result, file } = await completed(job.id);
  expect(Date.now() - asked).toBeLessThan(5_000);
  expect(result.ended).toBe('stopped');
  const [video, audio] = streams(file);
  expect([video.type, audio.type]).toEqual(['video', 'audio']);
  expect(Math.abs(video.end - audio.end)).toBeLessThanOrEqual(1);
  expect(Math.abs(video.end - result.recording!.seconds)).toBeLessThanOrEqual(1);
});
