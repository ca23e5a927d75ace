// Hostile live DASH manifests against an A/V recording (record/dash-av.ts: a video and an audio
// representation recorded together), through the real egress guard and a local origin: video and
// audio timelines that disagree wildly from the start or part ways mid-stream, a shared byte budget,
// and an attempt that continues a dead one's tracks. Each gets a bounded, clear outcome, measured in
// requests, seconds and bytes.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Egress } from '@reelay/egress';
import { createLogger } from '@reelay/observability';
import { startFolderOrigin, type FolderOrigin } from '@reelay/testkit';
import { AvTake } from '../src/record/dash-av.js';
import { tempDataDir, testConfig, until } from './helpers.js';

let origin: FolderOrigin;
let dataDir: string;
let egress: Egress;
const log = createLogger({ name: 'record-dash-av-hostile', level: 'silent' });
const SEGMENT = 1000;
let n = 0;

beforeAll(async () => {
  origin = await startFolderOrigin();
  dataDir = tempDataDir('record-dash-av-hostile');
  fs.mkdirSync(path.join(dataDir, 'media'));
  for (const name of ['v.m4s', 'a.m4s']) fs.writeFileSync(path.join(dataDir, 'media', name), Buffer.alloc(SEGMENT, 1));
  fs.writeFileSync(path.join(dataDir, 'media', 'init.m4s'), Buffer.alloc(100, 2));
  origin.mount('media', path.join(dataDir, 'media'));
  egress = new Egress({ allowlist: testConfig().EGRESS_ALLOWLIST, purpose: 'media' });
});
afterAll(async () => {
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const template = (media: string, entries: string) =>
  `<SegmentTemplate timescale="1000" initialization="/media/init.m4s" media="${media}?t=$Time$"><SegmentTimeline>${entries}</SegmentTimeline></SegmentTemplate>`;
/** A dynamic MPD with a video and an audio adaptation set, each given its own SegmentTimeline entries. */
const mpd = (video: string, audio: string) => `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="1970-01-01T00:00:00Z" minimumUpdatePeriod="PT1S">
  <Period id="0" start="PT0S">
    <AdaptationSet contentType="video" mimeType="video/mp4">
      <Representation id="v" codecs="avc1.42c00a" bandwidth="1">${template('/media/v.m4s', video)}</Representation>
    </AdaptationSet>
    <AdaptationSet contentType="audio" mimeType="audio/mp4">
      <Representation id="a" codecs="mp4a.40.2" bandwidth="1">${template('/media/a.m4s', audio)}</Representation>
    </AdaptationSet>
  </Period>
</MPD>`;
/** `count` one-second segments from `firstMs`. */
const run1s = (firstMs: number, count: number) => `<S t="${firstMs}" d="1000" r="${count - 1}"/>`;
/** The window of a clock started at t0: a new one-second segment each second, `count` listed (the newest `lag` s behind). */
const clock = (t0: number, offsetMs = 0, count = 5, lag = 0) =>
  run1s(Math.floor((Date.now() - t0) / 1000) * 1000 + 100_000 + offsetMs - (count - 5 + lag) * 1000, count);

const segmentRequests = () => (origin.hits.get('/media/v.m4s') ?? 0) + (origin.hits.get('/media/a.m4s') ?? 0);

async function take(
  route: string,
  options: { id?: string; duration?: number; maxBytes?: number; stopAt?: number; fromStart?: boolean } = {},
) {
  const id = options.id ?? `av${++n}`;
  const av = await AvTake.open(dataDir, id, [
    { url: origin.url(route), stream_profile: 'dash', representation: 'v', representation_type: 'video' },
    { url: origin.url(route), stream_profile: 'dash', representation: 'a', representation_type: 'audio' },
  ]);
  const stop = new AbortController();
  const recording = av.record({
    egress,
    ffprobe: process.env.FFPROBE_PATH || 'ffprobe',
    fromStart: options.fromStart ?? false,
    duration: options.duration,
    maxSeconds: 60,
    maxBytes: options.maxBytes ?? 10 * 1024 * 1024,
    stop: stop.signal,
    signal: new AbortController().signal,
    log,
  });
  if (options.stopAt !== undefined) {
    await until(() => av.view().seconds >= options.stopAt!, 15_000, `${options.stopAt} s recorded`);
    stop.abort();
  }
  const ended = await recording;
  await av.close();
  const state = (track: string) =>
    JSON.parse(fs.readFileSync(path.join(dataDir, 'recordings', id, track, 'state.json'), 'utf8')) as {
      parts: string[];
      bytes: number;
      spans: [number, number][];
    };
  return { ended, view: av.view(), video: state('video'), audio: state('audio'), resumed: av.resumed };
}

test('video and audio timelines a billion seconds apart from the start: the job fails saying so, before any segment is fetched', async () => {
  origin.texts.set('/apart.mpd', () => mpd(run1s(1_000_000, 3), run1s(1e12, 3)));
  const before = segmentRequests();
  await expect(take('/apart.mpd')).rejects.toThrow(/cannot be recorded in sync: .* timelines are \d+ s apart/);
  expect(segmentRequests()).toBe(before);
  // The two tracks' first reads were one request.
  expect(origin.hits.get('/apart.mpd')).toBe(1);
});

test('timelines that part ways mid-recording: nothing more is taken, the recording ends as stalled within three segments, holding only what was in step', async () => {
  const t0 = Date.now();
  let split: number | undefined;
  origin.texts.set('/drift.mpd', () => {
    if (Date.now() - t0 < 3_000) return mpd(clock(t0), clock(t0));
    split ??= Date.now();
    return mpd(clock(t0), clock(t0, 1e9));
  });
  const { ended, view, video, audio } = await take('/drift.mpd');
  expect(ended).toBe('stalled');
  expect(Date.now() - split!).toBeLessThan(5_000);
  expect(view.seconds).toBeLessThanOrEqual(5);
  expect(video.spans.at(-1)![1]).toBeLessThan(200_000 / 1000);
  expect(audio.spans.at(-1)![1]).toBeLessThan(200_000 / 1000);
  expect(origin.hits.get('/drift.mpd')!).toBeLessThanOrEqual(Math.ceil((Date.now() - t0) / 500) * 2 + 2);
});

test('the two tracks share MAX_MEDIA_BYTES: both stop at the budget (within one segment), ended max_bytes', async () => {
  const t0 = Date.now();
  origin.texts.set('/budget.mpd', () => mpd(clock(t0), clock(t0)));
  const { ended, view } = await take('/budget.mpd', { maxBytes: 4 * SEGMENT });
  expect(ended).toBe('max_bytes');
  expect(view.bytes).toBeGreaterThanOrEqual(4 * SEGMENT);
  expect(view.bytes).toBeLessThanOrEqual(5 * SEGMENT);
});

test('a second attempt continues both tracks of the first at their very next segments: no gap, one more part each, in step', async () => {
  const t0 = Date.now();
  origin.texts.set('/resume.mpd', () => mpd(clock(t0), clock(t0)));
  const first = await take('/resume.mpd', { id: 'resumed', stopAt: 2 });
  expect(first.ended).toBe('stopped');
  const second = await take('/resume.mpd', { id: 'resumed', duration: first.view.seconds + 2 });
  expect(second.resumed).toBe(true);
  expect(second.ended).toBe('duration');
  expect(second.view.gaps).toEqual([]);
  for (const track of [second.video, second.audio]) {
    expect(track.parts).toHaveLength(2);
    // The second part begins where the first ended: nothing lost between the attempts.
    expect(track.spans[1][0]).toBe(track.spans[0][1]);
  }
  expect(second.video.spans[0][0]).toBe(second.audio.spans[0][0]);
});

test('windows of other depths and edges: both tracks start at the same moment, at the live edge and from the start', async () => {
  const t0 = Date.now();
  // Video lists 8 segments; audio 3, its newest a second behind the video's.
  origin.texts.set('/depths.mpd', () => mpd(clock(t0, 0, 8), clock(t0, 0, 3, 1)));
  for (const fromStart of [false, true]) {
    const { ended, video, audio } = await take('/depths.mpd', { fromStart, duration: 2 });
    expect(ended).toBe('duration');
    expect(video.spans[0][0]).toBe(audio.spans[0][0]);
  }
});
