// Jobs end to end: enqueued as the gateway does, run by a real worker with real ffmpeg, every input
// fetched from the local origin through the worker's egress proxy.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { FsArtifactStore } from '@reelay/artifacts';
import { decodeJobError, JobResultSchema, type JobInput } from '@reelay/contracts';
import { moovBeforeMdat, probe, type ProbeResult } from '@reelay/media';
import { ffmpegBinary } from '@reelay/testkit';
import { payload, sample, sleep, trickle, useWorkerStack } from './helpers.js';

const TTL_SECONDS = 600;
const stack = useWorkerStack('jobs', { env: { ARTIFACT_TTL_SECONDS: String(TTL_SECONDS) } });
let store: FsArtifactStore;

beforeAll(() => {
  store = new FsArtifactStore(stack.dataDir);
});

const input = (path: string, profile: JobInput['stream_profile'], extra: Partial<JobInput> = {}): JobInput => ({
  url: stack.origin.url(path),
  stream_profile: profile,
  ...extra,
});

/** Runs a job to completion and returns its result, its progress and ffprobe's view of the artifact. */
async function complete(
  job: ReturnType<typeof payload>,
): Promise<{ result: ReturnType<typeof JobResultSchema.parse>; progress: unknown; info: ProbeResult; file: string }> {
  await stack.queue.add(job);
  const done = await stack.queue.finished(job.id);
  if ((await done.getState()) !== 'completed')
    throw new Error(`job failed: ${JSON.stringify(decodeJobError(done.failedReason))}`);
  const stored = await store.get(job.id);
  if (!stored) throw new Error('no artifact');
  return {
    result: JobResultSchema.parse(done.returnvalue),
    progress: done.progress,
    info: await probe(stored.path),
    file: stored.path,
  };
}

const streams = (info: ProbeResult) => info.streams.map((s) => [s.type, s.codec]);

describe('merge', () => {
  test('a video-only and an audio-only file become one faststart mp4 with both streams, and progress reaches 100', async () => {
    const job = payload(
      [
        input('/video-only.mp4', 'video_only', { codecs: 'avc1.64001e' }),
        input('/audio-only.m4a', 'audio_only', { codecs: 'mp4a.40.2' }),
      ],
      { operation: 'merge', basename: 'my clip', duration: 2 },
    );
    const before = Date.now();
    const { result, progress, info, file } = await complete(job);
    expect(streams(info)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info.streams[0]).toMatchObject({ width: 640, height: 360 });
    expect(info.durationSeconds).toBeGreaterThan(1.8);
    expect(info.durationSeconds).toBeLessThan(2.3);
    expect(await moovBeforeMdat(file)).toBe(true);
    expect(progress).toBe(100);
    expect(result).toEqual({
      filename: 'my clip.mp4',
      content_type: 'video/mp4',
      size: fs.statSync(file).size,
      expires_at: expect.any(Number),
    });
    expect(result.expires_at).toBeGreaterThanOrEqual(before + TTL_SECONDS * 1000);
    expect(result.expires_at).toBeLessThanOrEqual(Date.now() + TTL_SECONDS * 1000);
    expect(stack.origin.hits.get('/video-only.mp4')).toBeGreaterThanOrEqual(1);
    expect(stack.origin.hits.get('/audio-only.m4a')).toBeGreaterThanOrEqual(1);
  });
});

describe('convert', () => {
  test('a muxed mp4 becomes an mp3 with a single mp3 stream, read once: a job this short runs no duration probe beside ffmpeg', async () => {
    const before = stack.origin.hits.get('/muxed.mp4') ?? 0;
    const { result, progress, info } = await complete(
      payload([input('/muxed.mp4', 'muxed_progressive')], { operation: 'convert', format: 'mp3' }),
    );
    expect((stack.origin.hits.get('/muxed.mp4') ?? 0) - before).toBe(1); // ffmpeg alone
    expect(streams(info)).toEqual([['audio', 'mp3']]);
    expect(info.formatName).toBe('mp3');
    expect(result).toMatchObject({ filename: 'clip.mp3', content_type: 'audio/mpeg' });
    expect(progress).toBe(100);
  });

  test('a job that runs longer than a second has its duration probed through the proxy and shows running percentages', async () => {
    // 10 s of audio: ffmpeg and ffprobe both read 5 s of input before they write or answer anything.
    const file = path.join(stack.dataDir, 'ten-seconds.m4a');
    execFileSync(ffmpegBinary(), [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=10',
      '-c:a',
      'aac',
      '-b:a',
      '32k',
      '-movflags',
      '+faststart',
      '-y',
      file,
    ]);
    // ffmpeg's read (the first request) takes 3 s; ffprobe's (the second) is answered at once.
    const size = fs.statSync(file).size;
    trickle(stack.origin, '/slow-audio.m4a', file, 'audio/mp4', () => Math.ceil(size / 60), { firstOnly: true });
    const job = payload([input('/slow-audio.m4a', 'audio_only')], { operation: 'convert', format: 'mp3' });
    await stack.queue.add(job);
    const seen = new Set<unknown>();
    let state = '';
    const deadline = Date.now() + 15_000;
    while (state !== 'completed' && state !== 'failed' && Date.now() < deadline) {
      seen.add((await stack.queue.queue.getJob(job.id))?.progress);
      state = await stack.queue.state(job.id);
      await sleep(100);
    }
    expect(state).toBe('completed');
    expect(stack.origin.hits.get('/slow-audio.m4a')).toBe(2); // ffmpeg, and ffprobe a second later
    expect([...seen].some((p) => typeof p === 'number' && p > 0 && p < 100)).toBe(true);
  });

  test('a muxed mp4 becomes an mkv with its streams copied', async () => {
    const { result, info } = await complete(
      payload([input('/muxed.mp4', 'muxed_progressive', { codecs: 'avc1.42c00d,mp4a.40.2' })], {
        operation: 'convert',
        format: 'mkv',
        duration: 2,
      }),
    );
    expect(info.formatName).toContain('matroska');
    expect(streams(info)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(result.content_type).toBe('video/x-matroska');
  });

  test('a muxed mp4 becomes a webm with VP9 and Opus', async () => {
    const { result, info } = await complete(
      payload([input('/muxed.mp4', 'muxed_progressive', { codecs: 'avc1.42c00d,mp4a.40.2' })], {
        operation: 'convert',
        format: 'webm',
        duration: 2,
      }),
    );
    expect(info.formatName).toContain('webm');
    expect(streams(info)).toEqual([
      ['video', 'vp9'],
      ['audio', 'opus'],
    ]);
    expect(result).toMatchObject({ filename: 'clip.webm', content_type: 'video/webm' });
  });
});

describe('remux', () => {
  test('an HLS playlist becomes a 2 s mp4 with video and audio, every segment fetched through the proxy', async () => {
    const hits = (name: string) => stack.origin.hits.get(`/hls/${name}`) ?? 0;
    const before = [hits('index.m3u8'), hits('seg000.ts'), hits('seg001.ts')];
    const { result, info, file } = await complete(
      payload([input('/hls/index.m3u8', 'hls', { codecs: 'avc1.42c00d,mp4a.40.2' })], { operation: 'remux' }),
    );
    expect(streams(info)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info.durationSeconds).toBeGreaterThan(1.8);
    expect(info.durationSeconds).toBeLessThan(2.3);
    expect(await moovBeforeMdat(file)).toBe(true);
    expect(result.filename).toBe('clip.mp4');
    const after = [hits('index.m3u8'), hits('seg000.ts'), hits('seg001.ts')];
    after.forEach((n, i) => expect(n).toBeGreaterThan(before[i]));
  });

  test("the job's recorded Referer, User-Agent and Cookie reach the origin for the playlist and every segment", async () => {
    const seen = new Map<string, (string | undefined)[]>();
    for (const name of fs.readdirSync(stack.media.hlsDir)) {
      stack.origin.route(`/hdr/${name}`, (req, res) => {
        seen.set(name, [req.headers.referer, req.headers['user-agent'], req.headers.cookie]);
        res.writeHead(200, { 'content-type': name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t' });
        res.end(fs.readFileSync(path.join(stack.media.hlsDir, name)));
      });
    }
    const headers = {
      Referer: 'https://site.example/watch/1',
      'User-Agent': 'Mozilla/5.0 (reelay test)',
      Cookie: 'session=abc',
    };
    await complete(payload([input('/hdr/index.m3u8', 'hls', { headers })], { operation: 'remux', duration: 2 }));
    expect([...seen.keys()].sort()).toEqual(['index.m3u8', 'seg000.ts', 'seg001.ts']);
    for (const values of seen.values())
      expect(values).toEqual(['https://site.example/watch/1', 'Mozilla/5.0 (reelay test)', 'session=abc']);
  });

  test('a chosen DASH representation becomes an mp4 with that stream only', async () => {
    const video = input('/dash/manifest.mpd#representation=0', 'dash', { representation: '0', codecs: 'avc1.42c00d' });
    const { info } = await complete(payload([video], { operation: 'remux' }));
    expect(streams(info)).toEqual([['video', 'h264']]);
    expect(info.streams[0]).toMatchObject({ width: 320, height: 240 });
    expect(info.durationSeconds).toBeGreaterThan(1.8);
  });

  test('a DASH video and audio pair becomes one mp4 with both', async () => {
    const video = input('/dash/manifest.mpd#representation=0', 'dash', { representation: '0', codecs: 'avc1.42c00d' });
    const audio = input('/dash/manifest.mpd#representation=1', 'dash', { representation: '1', codecs: 'mp4a.40.2' });
    const { info } = await complete(payload([video, audio], { operation: 'remux', duration: 2 }));
    expect(streams(info)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info.durationSeconds).toBeGreaterThan(1.8);
    expect(info.durationSeconds).toBeLessThan(2.3);
  });
});

describe('operations', () => {
  test('/healthz answers and /metrics shows the job counters, the queue depth and the proxied bytes', async () => {
    expect((await fetch(`${stack.worker.metricsUrl}/healthz`)).status).toBe(200);
    const text = await (await fetch(`${stack.worker.metricsUrl}/metrics`)).text();
    expect(sample(text, 'reelay_jobs_total', { operation: 'merge', outcome: 'completed' })).toBe(1);
    expect(sample(text, 'reelay_jobs_total', { operation: 'convert', outcome: 'completed' })).toBe(4);
    expect(sample(text, 'reelay_jobs_total', { operation: 'remux', outcome: 'completed' })).toBe(4);
    expect(sample(text, 'reelay_job_duration_seconds_count', { operation: 'remux', outcome: 'completed' })).toBe(4);
    expect(sample(text, 'reelay_queue_jobs', { state: 'completed' })).toBe(9);
    expect(sample(text, 'reelay_queue_jobs', { state: 'waiting' })).toBe(0);
    expect(sample(text, 'reelay_proxy_bytes_total', {})).toBeGreaterThan(500_000);
    expect(sample(text, 'reelay_proxy_blocked_total', {})).toBe(0);
    expect(text).toMatch(/^# TYPE reelay_ffmpeg_failures_total counter$/m);
  });
});

// yt-dlp's float_duration.mpd case: an audio and a video representation share an id (in their own
// adaptation sets). The test manifest is rewritten so: its audio representation takes id "0" too,
// its segment names kept. The extract names each by type (&type=audio); the job maps only that kind.
describe('a DASH id shared by an audio and a video representation', () => {
  beforeAll(() => {
    const text = fs.readFileSync(path.join(stack.media.dashDir, 'manifest.mpd'), 'utf8');
    const shared = text.replace(
      /<Representation id="1"([^>]*mimeType="audio\/mp4"[\s\S]*?<\/Representation>)/,
      (_m, rest: string) => `<Representation id="0"${rest.replaceAll('$RepresentationID$', '1')}`,
    );
    expect(shared.match(/<Representation id="0"/g)).toHaveLength(2);
    stack.origin.body('/dash/shared.mpd', shared, 'application/dash+xml');
  });
  const named = (type: 'video' | 'audio', codecs: string) =>
    input(`/dash/shared.mpd#representation=0&type=${type}`, 'dash', {
      representation: '0',
      representation_type: type,
      codecs,
    });

  test('the video one alone is the video stream, the audio one alone the audio stream', async () => {
    expect(streams((await complete(payload([named('video', 'avc1.42c00d')], { operation: 'remux' }))).info)).toEqual([
      ['video', 'h264'],
    ]);
    expect(
      streams((await complete(payload([named('audio', 'mp4a.40.2')], { operation: 'convert', format: 'mp3' }))).info),
    ).toEqual([['audio', 'mp3']]);
  });

  test('as a pair they become one mp4 with one video and one audio stream', async () => {
    const { info } = await complete(
      payload([named('video', 'avc1.42c00d'), named('audio', 'mp4a.40.2')], { operation: 'remux', duration: 2 }),
    );
    expect(streams(info)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
  });
});

test('finished jobs leave no temporary folders behind', () => {
  expect(fs.readdirSync(path.join(stack.dataDir, 'tmp'))).toEqual([]);
});
