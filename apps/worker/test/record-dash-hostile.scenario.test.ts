// Hostile live DASH manifests against the recorder (record/ with the DASH segment source), through
// the real egress guard and a local origin: an MPD that never advances, one that advances on every
// request and never ends, a timeline of 10^8 segments, codecs that change mid-stream, encryption.
// Each gets a bounded, clear outcome, measured in requests, seconds and bytes on disk. A resumed
// attempt continues at the next segment, as for HLS.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Egress } from '@reelay/egress';
import { createLogger } from '@reelay/observability';
import { startFolderOrigin, type FolderOrigin } from '@reelay/testkit';
import { DashSource } from '../src/record/dash-source.js';
import { MAX_LISTED } from '@reelay/manifests';
import { record } from '../src/record/recorder.js';
import { RecordingStore } from '../src/record/recording-store.js';
import { tempDataDir, testConfig } from './helpers.js';

let origin: FolderOrigin;
let dataDir: string;
let egress: Egress;
const log = createLogger({ name: 'record-dash-hostile', level: 'silent' });
const SEGMENT = 1000;
const INIT = 100;
let n = 0;

beforeAll(async () => {
  origin = await startFolderOrigin();
  dataDir = tempDataDir('record-dash-hostile');
  fs.mkdirSync(path.join(dataDir, 'media'));
  fs.writeFileSync(path.join(dataDir, 'media', 'seg.m4s'), Buffer.alloc(SEGMENT, 1));
  fs.writeFileSync(path.join(dataDir, 'media', 'init.m4s'), Buffer.alloc(INIT, 2));
  origin.mount('media', path.join(dataDir, 'media'));
  egress = new Egress({ allowlist: testConfig().EGRESS_ALLOWLIST, purpose: 'media' });
});
afterAll(async () => {
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A dynamic MPD of one video representation whose segments are all /media/seg.m4s (named by number). */
const mpd = (
  entries: string,
  options: { startNumber?: number; codecs?: string; extra?: string } = {},
) => `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="1970-01-01T00:00:00Z" minimumUpdatePeriod="PT1S">
  <Period id="0" start="PT0S">
    <AdaptationSet contentType="video" mimeType="video/mp4">${options.extra ?? ''}
      <Representation id="v" codecs="${options.codecs ?? 'avc1.42c00a'}" bandwidth="1">
        <SegmentTemplate timescale="1000" startNumber="${options.startNumber ?? 0}" initialization="/media/init.m4s" media="/media/seg.m4s?n=$Number$">
          <SegmentTimeline>${entries}</SegmentTimeline>
        </SegmentTemplate>
      </Representation>
    </AdaptationSet>
  </Period>
</MPD>`;
/** A window of `count` one-second segments from number `first` (times in ms match the numbers). */
const sliding = (first: number, count: number, options: { codecs?: string } = {}) =>
  mpd(`<S t="${first * 1000}" d="1000" r="${count - 1}"/>`, { startNumber: first, ...options });

const segmentRequests = () => origin.hits.get('/media/seg.m4s') ?? 0;

async function run(
  route: string,
  options: {
    id?: string;
    duration?: number;
    maxSeconds?: number;
    fromStart?: boolean;
    stopWhen?: (seconds: number) => boolean;
  } = {},
) {
  const { store, resumed } = await RecordingStore.open(dataDir, options.id ?? `job${++n}`);
  const stop = new AbortController();
  const ended = await record({
    egress,
    url: origin.url(route),
    source: new DashSource(egress, origin.url(route), { representation: 'v' }),
    store,
    resumed,
    fromStart: options.fromStart ?? false,
    duration: options.duration,
    maxSeconds: options.maxSeconds ?? 60,
    maxBytes: 10 * 1024 * 1024,
    stop: stop.signal,
    signal: new AbortController().signal,
    onProgress: () => {
      if (options.stopWhen?.(store.state.seconds)) stop.abort();
    },
    log,
  });
  await store.closePart();
  const disk = store.state.parts.reduce((sum, p) => sum + fs.statSync(path.join(store.dir, p)).size, 0);
  return { ended, state: store.state, disk };
}

test('an MPD that never advances ends the recording as stalled after three segment durations, bounded in time and requests', async () => {
  origin.texts.set('/still.mpd', () => sliding(10, 3));
  const started = Date.now();
  const { ended, state } = await run('/still.mpd');
  expect(ended).toBe('stalled');
  expect(state.seconds).toBe(1); // the live edge's segment
  expect(Date.now() - started).toBeLessThan(6_000);
  expect(origin.hits.get('/still.mpd')!).toBeLessThanOrEqual(9);
});

test('an MPD that advances on every request and never ends is read at the half-segment cadence, and live.duration ends it', async () => {
  let k = 0;
  origin.texts.set('/eager.mpd', () => sliding(100 + k++, 3));
  const started = Date.now();
  const { ended, state } = await run('/eager.mpd', { duration: 3 });
  expect(ended).toBe('duration');
  expect(state.seconds).toBe(3);
  expect(origin.hits.get('/eager.mpd')!).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / 500) + 1);
});

test('a timeline of 10^8 segments recorded from its start: the newest MAX_LISTED are kept, the rest one gap; requests and disk stop at the bound', async () => {
  origin.texts.set('/huge.mpd', () => mpd('<S t="0" d="1000" r="99999999"/>'));
  const before = segmentRequests();
  const { ended, state, disk } = await run('/huge.mpd', { fromStart: true, maxSeconds: 5 });
  expect(ended).toBe('max_duration');
  expect(state.seconds).toBe(5);
  expect(segmentRequests() - before).toBe(5);
  expect(disk).toBe(INIT + 5 * SEGMENT);
  expect(state.gaps).toEqual([{ at: 0, seconds: 100_000_000 - MAX_LISTED }]);
});

test('a representation whose codecs change mid-stream: the recording ends there (codec_change) with what came before', async () => {
  let k = 0;
  origin.texts.set('/switch.mpd', () => {
    k++;
    return sliding(200 + k, 2, { codecs: k <= 3 ? 'avc1.42c00a' : 'hvc1.1.6.L93.B0' });
  });
  const { ended, state } = await run('/switch.mpd');
  expect(ended).toBe('codec_change');
  expect(state.seconds).toBeGreaterThanOrEqual(1);
  expect(state.declared).toBe('video/mp4;avc1.42c00a');
  expect(state.parts).toHaveLength(1);
});

test('a protected representation (ContentProtection) fails with a clear message before any segment is fetched', async () => {
  origin.texts.set('/drm.mpd', () =>
    mpd('<S t="0" d="1000" r="2"/>', {
      extra: '<ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="cenc"/>',
    }),
  );
  const before = segmentRequests();
  await expect(run('/drm.mpd')).rejects.toThrow(/encrypted/);
  expect(segmentRequests()).toBe(before);
});

test('a second attempt continues the first at the very next segment while the MPD still lists it: no gap, one more part', async () => {
  const t0 = Date.now();
  // A clock-driven window: a new one-second segment each second, five listed.
  origin.texts.set('/clock.mpd', () => sliding(Math.floor((Date.now() - t0) / 1000) + 1000, 5));
  const first = await run('/clock.mpd', { id: 'resumed', stopWhen: (s) => s >= 2 });
  expect(first.ended).toBe('stopped');
  const last = first.state.lastSeq!;
  const second = await run('/clock.mpd', { id: 'resumed', duration: first.state.seconds + 2 });
  expect(second.ended).toBe('duration');
  expect(second.state.gaps).toEqual([]);
  expect(second.state.parts).toHaveLength(2);
  expect(second.state.lastSeq).toBe(last + 2_000); // two more one-second segments, in ms of presentation time
});
