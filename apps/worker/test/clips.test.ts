// Clips end to end: fast and precise clips of each input kind (a progressive file, a merge pair, HLS,
// DASH) run by a real worker through its egress proxy, the files checked with ffprobe (length, first
// timestamp, frames), and the segments before the clip never fetched.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { FsArtifactStore } from '@reelay/artifacts';
import { decodeJobError, type JobInput, type JobPayload } from '@reelay/contracts';
import { ffprobe, firstPts, makeClipMedia, serveClipMedia } from './clip-media.js';
import { payload, useWorkerStack } from './helpers.js';

const stack = useWorkerStack('clips');
let store: FsArtifactStore;

beforeAll(async () => {
  store = new FsArtifactStore(stack.dataDir);
  serveClipMedia(stack.origin, await makeClipMedia(stack.dataDir));
});

const AVC = 'avc1.64000c';
const AAC = 'mp4a.40.2';
const input = (path: string, profile: JobInput['stream_profile'], extra: Partial<JobInput> = {}): JobInput => ({
  url: stack.origin.url(path),
  stream_profile: profile,
  ...extra,
});
const progressive = () => [input('/c/muxed.mp4', 'muxed_progressive', { codecs: `${AVC},${AAC}` })];
const pair = () => [
  input('/c/video.mp4', 'video_only', { codecs: AVC }),
  input('/c/audio.m4a', 'audio_only', { codecs: AAC }),
];
const hls = () => [input('/c/hls/index.m3u8', 'hls', { codecs: `${AVC},${AAC}` })];
const dash = () => [
  input('/c/dash/manifest.mpd', 'dash', { representation: '0', codecs: AVC }),
  input('/c/dash/manifest.mpd', 'dash', { representation: '1', codecs: AAC }),
];

async function run(job: JobPayload): Promise<string> {
  await stack.queue.add(job);
  const done = await stack.queue.finished(job.id, 40_000);
  if ((await done.getState()) !== 'completed')
    throw new Error(`job failed: ${JSON.stringify(decodeJobError(done.failedReason))}`);
  return (await store.get(job.id))!.path;
}

const hits = (prefix: string) => [...stack.origin.hits.entries()].filter(([p]) => p.startsWith(prefix));
const hitsOf = (path: string) => stack.origin.hits.get(path) ?? 0;

// Each kind: its inputs, the operation the gateway names, and a clip that starts between keyframes.
const KINDS = [
  {
    kind: 'progressive file',
    inputs: progressive,
    operation: 'convert',
    format: 'mp4',
    clip: { start: 2.5, end: 4.5 },
  },
  { kind: 'merge pair', inputs: pair, operation: 'merge', format: undefined, clip: { start: 2.5, end: 4.5 } },
  { kind: 'HLS stream', inputs: hls, operation: 'remux', format: undefined, clip: { start: 4.2, end: 5.2 } },
  { kind: 'DASH pair', inputs: dash, operation: 'remux', format: undefined, clip: { start: 3.5, end: 5.5 } },
] as const;

describe.each(KINDS)('a clip of a $kind', ({ inputs, operation, format, clip }) => {
  const length = clip.end - clip.start;

  test('in fast mode is copied from the keyframe at or before start and lasts the clip', async () => {
    const file = await run(payload(inputs(), { operation, format, duration: 6, clip: { ...clip, mode: 'fast' } }));
    const info = ffprobe(file, ['-count_packets']);
    expect(info.format.format_name).toContain('mp4');
    expect(Number(info.format.duration)).toBeGreaterThan(length - 0.1);
    expect(Number(info.format.duration)).toBeLessThan(length + 0.1); // the early keyframe is hidden by an edit list
    // Copied: the first video packet is the keyframe before start, at most one second (the GOP) early.
    const first = firstPts(file, 'v');
    expect(first).toBeLessThanOrEqual(0.001);
    expect(first).toBeGreaterThanOrEqual(-1.0);
    expect(first).toBeCloseTo(-(clip.start - Math.floor(clip.start)), 1);
  });

  test('in precise mode is re-encoded to start at start and last the clip within 0.1 s', async () => {
    const file = await run(payload(inputs(), { operation, format, duration: 6, clip: { ...clip, mode: 'precise' } }));
    const info = ffprobe(file, ['-count_packets']);
    expect(Math.abs(Number(info.format.duration) - length)).toBeLessThan(0.1);
    expect(Math.abs(firstPts(file, 'v'))).toBeLessThan(0.05);
    expect(Math.abs(firstPts(file, 'a'))).toBeLessThan(0.05);
    const video = info.streams.find((s) => s.codec_type === 'video')!;
    expect(video.codec_name).toBe('h264');
    expect(Math.abs(Number(video.nb_read_packets) - length * 25)).toBeLessThanOrEqual(1); // 25 fps
  });
});

describe('segments', () => {
  // ffmpeg reads the first segment or two to learn the streams, then seeks: the stretch between is never fetched.
  test('an HLS clip skips the segments between the first ones and the clip', async () => {
    const before = new Map(hits('/c/hls/'));
    await run(payload(hls(), { operation: 'remux', duration: 6, clip: { start: 4.2, end: 5.2, mode: 'fast' } }));
    const fetched = (name: string) => hitsOf(`/c/hls/${name}`) - (before.get(`/c/hls/${name}`) ?? 0);
    expect(['seg000.ts', 'seg001.ts', 'seg002.ts', 'seg003.ts', 'seg004.ts', 'seg005.ts'].map(fetched)).toEqual([
      1,
      expect.any(Number),
      0,
      0,
      1,
      1,
    ]);
  });

  test('a DASH clip skips the segments before the clip in both representations', async () => {
    const before = new Map(hits('/c/dash/'));
    await run(payload(dash(), { operation: 'remux', duration: 6, clip: { start: 3.5, end: 5.5, mode: 'fast' } }));
    const fetched = (rep: number, n: number) =>
      hitsOf(`/c/dash/chunk-${rep}-0000${n}.m4s`) - (before.get(`/c/dash/chunk-${rep}-0000${n}.m4s`) ?? 0);
    // The first chunk and the clip's first chunk may be read twice (the demuxer reopens them on seeking).
    for (const rep of [0, 1])
      expect([1, 2, 3, 4, 5, 6].map((n) => fetched(rep, n) > 0)).toEqual([true, false, false, true, true, true]);
  });
});

// A precise clip into mp4 or mkv is cut smart: its range is fetched while ffprobe finds the duration.
describe.each(['fast', 'precise'] as const)('the end of the media, %s clip', (mode) => {
  test('a clip ending past the end of media of unknown length is cut there', async () => {
    const file = await run(
      payload(progressive(), { operation: 'convert', format: 'mkv', clip: { start: 4, end: 30, mode } }),
    );
    const info = ffprobe(file);
    expect(info.format.format_name).toBe('matroska,webm');
    expect(Math.abs(Number(info.format.duration) - 2)).toBeLessThan(0.1);
  });

  test('a clip starting past the end of media of unknown length fails the job with invalid_clip', async () => {
    const job = payload(progressive(), { operation: 'convert', format: 'mp4', clip: { start: 10, end: 12, mode } });
    await stack.queue.add(job);
    const done = await stack.queue.finished(job.id, 20_000);
    expect(await done.getState()).toBe('failed');
    expect(decodeJobError(done.failedReason)).toEqual({
      code: 'invalid_clip',
      message: expect.stringContaining('past the end of the media (6.0'),
    });
    expect(done.attemptsMade).toBe(1);
  });
});
