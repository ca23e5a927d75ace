// Hostile live playlists against the recorder (record/), through the real egress guard and a local
// origin: thousands of segments per refresh, a playlist that advances on every request, a media
// sequence that jumps backwards, encryption. Each gets a bounded, clear outcome, and the bound is
// measured: segments kept per refresh, requests made, bytes on disk.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Egress } from '@reelay/egress';
import { MAX_LISTED } from '@reelay/manifests';
import { createLogger } from '@reelay/observability';
import { startFolderOrigin, type FolderOrigin } from '@reelay/testkit';
import { segmentCodecs } from '../src/record/codecs.js';
import { record } from '../src/record/recorder.js';
import { RecordingStore } from '../src/record/recording-store.js';
import { tempDataDir, testConfig } from './helpers.js';

let origin: FolderOrigin;
let dataDir: string;
let egress: Egress;
const log = createLogger({ name: 'record-hostile', level: 'silent' });
let n = 0;
let probes = 0;

beforeAll(async () => {
  origin = await startFolderOrigin();
  dataDir = tempDataDir('record-hostile');
  fs.mkdirSync(path.join(dataDir, 'media'));
  fs.writeFileSync(path.join(dataDir, 'media', 'seg.ts'), Buffer.alloc(188 * 10, 0x47));
  origin.mount('media', path.join(dataDir, 'media'));
  // Two real one-second TS segments of different video codecs, for a stream that changes codecs.
  for (const [name, codec] of [
    ['h264.ts', 'libx264'],
    ['mpeg2.ts', 'mpeg2video'],
  ]) {
    execFileSync('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=64x64:rate=10',
      '-t',
      '1',
      '-c:v',
      codec,
      '-f',
      'mpegts',
      '-y',
      path.join(dataDir, 'media', name),
    ]);
  }
  egress = new Egress({ allowlist: testConfig().EGRESS_ALLOWLIST, purpose: 'media' });
});
afterAll(async () => {
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const playlist = (seq: number, count: number, extra: string[] = []) =>
  [
    '#EXTM3U',
    '#EXT-X-TARGETDURATION:1',
    `#EXT-X-MEDIA-SEQUENCE:${seq}`,
    ...extra,
    ...Array.from({ length: count }, (_, i) => `#EXTINF:1.0,\n/media/seg.ts?n=${seq + i}`),
    '',
  ].join('\n');

async function run(
  route: string,
  options: { duration?: number; maxSeconds?: number; fromStart?: boolean; codecs?: boolean } = {},
) {
  const { store } = await RecordingStore.open(dataDir, `job${++n}`);
  const codecsOf = options.codecs
    ? (body: Buffer, init?: Buffer) => {
        probes++;
        return segmentCodecs(body, init, { dir: store.dir, ffprobe: 'ffprobe' });
      }
    : undefined;
  const ended = await record({
    codecsOf,
    egress,
    url: origin.url(route),
    store,
    resumed: false,
    fromStart: options.fromStart ?? false,
    duration: options.duration,
    maxSeconds: options.maxSeconds ?? 60,
    maxBytes: 10 * 1024 * 1024,
    stop: new AbortController().signal,
    signal: new AbortController().signal,
    onProgress: () => undefined,
    log,
  });
  await store.closePart();
  const disk = store.state.parts.reduce((sum, p) => sum + fs.statSync(path.join(store.dir, p)).size, 0);
  return { ended, state: store.state, disk };
}

test('thousands of segments per refresh, recorded from the start: the dropped ones are one gap, requests and disk stop at the bound', async () => {
  let k = 0;
  origin.texts.set('/flood.m3u8', () => playlist(5_000 * k++, 5_000));
  const before = [...origin.hits.entries()].filter(([p]) => p.startsWith('/media/')).reduce((a, [, v]) => a + v, 0);
  const { ended, state, disk } = await run('/flood.m3u8', { fromStart: true, maxSeconds: 5 });
  const segmentRequests =
    [...origin.hits.entries()].filter(([p]) => p.startsWith('/media/')).reduce((a, [, v]) => a + v, 0) - before;
  expect(ended).toBe('max_duration');
  expect(state.seconds).toBe(5);
  expect(segmentRequests).toBe(5); // one request per segment kept, none beyond the bound
  expect(disk).toBe(5 * 1880);
  expect(state.gaps).toEqual([{ at: 0, seconds: 5_000 - MAX_LISTED }]);
});

test('a playlist that advances on every request is still read at the target-duration cadence', async () => {
  let k = 0;
  origin.texts.set('/eager.m3u8', () => playlist(k++, 3));
  const started = Date.now();
  const { ended, state } = await run('/eager.m3u8', { duration: 3 });
  expect(ended).toBe('duration');
  expect(state.seconds).toBe(3);
  const seconds = (Date.now() - started) / 1000;
  expect(origin.hits.get('/eager.m3u8')!).toBeLessThanOrEqual(Math.ceil(seconds / 0.5) + 1);
});

test('a playlist that lists one more segment each second is read about once per segment, and each segment is recorded within a segment of being listed', async () => {
  // Segment k is listed from t0 + k s on, in a window of three, as a live packager lists them.
  const t0 = Date.now();
  const listedAt = (seq: number) => t0 + seq * 1000;
  origin.texts.set('/clock.m3u8', () => {
    const newest = Math.floor((Date.now() - t0) / 1000);
    return playlist(Math.max(0, newest - 2), Math.min(3, newest + 1));
  });
  const { store } = await RecordingStore.open(dataDir, `job${++n}`);
  const recordedAt = new Map<number, number>();
  const onProgress = () => {
    const seq = store.state.lastSeq;
    if (seq !== undefined && !recordedAt.has(seq)) recordedAt.set(seq, Date.now());
  };
  const ended = await record({
    egress,
    url: origin.url('/clock.m3u8'),
    store,
    resumed: false,
    fromStart: false,
    duration: 8,
    maxSeconds: 60,
    maxBytes: 10 * 1024 * 1024,
    stop: new AbortController().signal,
    signal: new AbortController().signal,
    onProgress,
    log,
  });
  await store.closePart();
  expect([ended, store.state.seconds, store.state.gaps]).toEqual(['duration', 8, []]);
  // Half-segment polling made 2 reads a segment; RFC 8216's reload rule let the lag creep to a segment.
  expect(origin.hits.get('/clock.m3u8')!).toBeLessThanOrEqual(8 * 1.3 + 2);
  const lags = [...recordedAt]
    .slice(1)
    .map(([seq, at]) => at - listedAt(seq))
    .sort((a, b) => a - b);
  expect(lags).toHaveLength(7);
  expect(lags[3]).toBeLessThan(700);
});

test('a media sequence that jumps backwards lists nothing new: the recording ends as stalled, bounded in time and requests', async () => {
  let k = 0;
  origin.texts.set('/back.m3u8', () => (k++ === 0 ? playlist(100, 3) : playlist(5, 3)));
  const started = Date.now();
  const { ended, state } = await run('/back.m3u8');
  expect(ended).toBe('stalled');
  expect(state.seconds).toBe(1); // the live edge's segment, before the jump
  expect(Date.now() - started).toBeLessThan(6_000);
  expect(origin.hits.get('/back.m3u8')!).toBeLessThanOrEqual(9);
});

test('an encrypted live playlist fails with a clear message before anything is fetched', async () => {
  origin.texts.set('/key.m3u8', () => playlist(1, 3, ['#EXT-X-KEY:METHOD=AES-128,URI="/k"']));
  await expect(run('/key.m3u8')).rejects.toThrow(/encrypted/);
});

test('a stream that changes its codecs at a discontinuity: the recording ends there (codec_change) with what came before, in one codec', async () => {
  const seg = (name: string) => `#EXTINF:1.0,\n/media/${name}`;
  origin.texts.set('/switch.m3u8', () =>
    [
      '#EXTM3U',
      '#EXT-X-TARGETDURATION:1',
      '#EXT-X-MEDIA-SEQUENCE:0',
      seg('h264.ts?a'),
      seg('h264.ts?b'),
      '#EXT-X-DISCONTINUITY',
      seg('mpeg2.ts?c'),
      seg('mpeg2.ts?d'),
      '#EXT-X-ENDLIST',
      '',
    ].join('\n'),
  );
  const { ended, state } = await run('/switch.m3u8', { fromStart: true, codecs: true });
  expect(ended).toBe('codec_change');
  expect(state.seconds).toBe(2);
  expect(state.codecs).toBe('video:h264');
  expect(state.parts).toHaveLength(1);
});

test('codecs are read only at a discontinuity, never for a stream without one: no ffprobe at all while recording it', async () => {
  const seg = (name: string) => `#EXTINF:1.0,\n/media/${name}`;
  origin.texts.set('/plain.m3u8', () =>
    [
      '#EXTM3U',
      '#EXT-X-TARGETDURATION:1',
      '#EXT-X-MEDIA-SEQUENCE:0',
      seg('h264.ts?a'),
      seg('h264.ts?b'),
      seg('h264.ts?c'),
      '#EXT-X-ENDLIST',
      '',
    ].join('\n'),
  );
  probes = 0;
  const plain = await run('/plain.m3u8', { fromStart: true, codecs: true });
  expect([plain.ended, plain.state.seconds, probes]).toEqual(['stream_end', 3, 0]);
  // The same codecs after a discontinuity: two reads (the first part's head, the new segment), and it goes on.
  origin.texts.set('/same.m3u8', () =>
    [
      '#EXTM3U',
      '#EXT-X-TARGETDURATION:1',
      '#EXT-X-MEDIA-SEQUENCE:0',
      seg('h264.ts?a'),
      '#EXT-X-DISCONTINUITY',
      seg('h264.ts?b'),
      '#EXT-X-ENDLIST',
      '',
    ].join('\n'),
  );
  probes = 0;
  const same = await run('/same.m3u8', { fromStart: true, codecs: true });
  expect([same.ended, same.state.seconds, same.state.codecs, probes]).toEqual(['stream_end', 2, 'video:h264', 2]);
});
