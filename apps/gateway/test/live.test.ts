// Live sources through the gateway: extract marks a live HLS playlist and a dynamic DASH manifest
// served by a local origin `is_live: true` with no duration; a download of a live HLS source made by
// ffmpeg in real time is a recording (operation record) that the stop route ends with its file, and
// the live options are checked. A live master is marked at extract from its variant; one whose
// variant the extract could not read is refused by a real worker when it reads it live.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { createLogger } from '@reelay/observability';
import {
  startFolderOrigin,
  startLiveHls,
  startOrigin,
  type FolderOrigin,
  type LiveStream,
  type Origin,
} from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { buildGateway, testConfig, type TestGateway } from './helpers.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-live-'));
const queuePrefix = `test-live-${process.pid}`;
let origin: Origin;
let gw: TestGateway;
let worker: RunningWorker;
let stream: LiveStream;
let streams: FolderOrigin;

const live = [
  '#EXTM3U',
  '#EXT-X-VERSION:3',
  '#EXT-X-TARGETDURATION:2',
  '#EXT-X-MEDIA-SEQUENCE:7',
  '#EXTINF:2.0,',
  'seg7.ts',
  '#EXTINF:2.0,',
  'seg8.ts',
  '',
].join('\n');
const vod = [
  '#EXTM3U',
  '#EXT-X-VERSION:3',
  '#EXT-X-TARGETDURATION:2',
  '#EXTINF:2.0,',
  'seg0.ts',
  '#EXTINF:2.0,',
  'seg1.ts',
  '#EXT-X-ENDLIST',
  '',
].join('\n');
const dynamic = `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="2026-11-27T00:00:00Z" minimumUpdatePeriod="PT2S" minBufferTime="PT2S" profiles="urn:mpeg:dash:profile:isoff-live:2011">
  <Period id="0" start="PT0S">
    <AdaptationSet mimeType="video/mp4" codecs="avc1.64001f">
      <SegmentTemplate timescale="1000" duration="2000" startNumber="1" media="v-$Number$.m4s" initialization="v-init.mp4"/>
      <Representation id="v1" bandwidth="900000" width="640" height="360"/>
    </AdaptationSet>
  </Period>
</MPD>`;

// ffmpeg's and most packagers' layout: video and audio in adaptation sets of their own.
const dynamicAv = dynamic.replace(
  '  </Period>',
  `    <AdaptationSet mimeType="audio/mp4" codecs="mp4a.40.2">
      <SegmentTemplate timescale="1000" duration="2000" startNumber="1" media="a-$Number$.m4s" initialization="a-init.mp4"/>
      <Representation id="a1" bandwidth="64000"/>
    </AdaptationSet>
  </Period>`,
);

beforeAll(async () => {
  origin = await startOrigin();
  stream = startLiveHls();
  streams = await startFolderOrigin();
  streams.mount('tv', stream.dir);
  origin.body('/live/index.m3u8', live, 'application/vnd.apple.mpegurl');
  origin.body('/vod/index.m3u8', vod, 'application/vnd.apple.mpegurl');
  origin.body('/live/manifest.mpd', dynamic, 'application/dash+xml');
  origin.body('/live/av.mpd', dynamicAv, 'application/dash+xml');
  origin.body(
    '/live/master.m3u8',
    ['#EXTM3U', '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360', 'index.m3u8', ''].join('\n'),
    'application/vnd.apple.mpegurl',
  );
  origin.body(
    '/flaky/master.m3u8',
    ['#EXTM3U', '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360', 'index.m3u8', ''].join('\n'),
    'application/vnd.apple.mpegurl',
  );
  let flakyReads = 0;
  origin.route('/flaky/index.m3u8', (_req, res) => {
    if (flakyReads++ === 0) return void res.writeHead(503).end();
    res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' }).end(live);
  });
  gw = await buildGateway({ env: { DATA_DIR: dataDir }, deps: { queuePrefix } });
  worker = await startWorker({
    config: testConfig({ DATA_DIR: dataDir, WORKER_CONCURRENCY: '1' }),
    logger: createLogger({ name: 'live-test', level: 'silent' }),
    metricsPort: 0,
    prefix: queuePrefix,
    dataDir,
  });
}, 30_000);

afterAll(async () => {
  stream?.kill();
  await streams?.close();
  if (stream) fs.rmSync(stream.dir, { recursive: true, force: true });
  await worker?.stop();
  await gw?.close();
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The first `count` job events of a job's event stream (the app listening on a port of its own). */
async function fetchEvents(
  id: string,
  count: number,
  timeoutMs: number,
): Promise<{ recording: { seconds: number } }[]> {
  const server = gw.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const port = (server.address() as import('node:net').AddressInfo).port;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const found: { recording: { seconds: number } }[] = [];
  try {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/jobs/${id}/events`, { signal: abort.signal });
    let text = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += Buffer.from(chunk).toString('utf8');
      const events = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]));
      if (events.length >= count) {
        found.push(...events.slice(0, count));
        break;
      }
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  return found;
}

async function extract(route: string) {
  return (
    await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url(route) })
      .expect(200)
  ).body.data as { media: { is_live?: boolean; duration?: number; sources: { url: string; is_live?: boolean }[] }[] };
}

test('a live HLS playlist extracts as is_live with no duration; live options that do not fit are clear 400s', async () => {
  const [item] = (await extract('/live/index.m3u8')).media;
  expect(item.is_live).toBe(true);
  expect(item.duration).toBeUndefined();
  expect(item.sources[0].is_live).toBe(true);
  const url = item.sources[0].url;
  for (const [body, message] of [
    [{ url, live: { duration: 14_401 } }, /at most 14400 seconds/],
    [{ url, format: 'mp3' }, /mp4 or mkv/],
    [{ url, clip: { start: 1, end: 2 } }, /cannot be clipped/],
    [{ url, live: { duration: 0 } }, /./],
    [{ url, live: { duration: 'long' } }, /./],
    [{ url, live: { from_start: true, forever: true } }, /./],
    [{ url, live: 'yes' }, /./],
  ] as const) {
    const res = await request(gw.app).post('/api/v1/download').send(body);
    expect([res.status, res.body.error?.code]).toEqual([400, 'invalid_request']);
    expect(res.body.error.message).toMatch(message);
  }
  const [vod] = (await extract('/vod/index.m3u8')).media;
  const res = await request(gw.app)
    .post('/api/v1/download')
    .send({ url: vod.sources[0].url, live: { duration: 5 } });
  expect([res.status, res.body.error?.message]).toEqual([
    400,
    expect.stringMatching(/live options go with a live source/),
  ]);
});

test('a live stream made by ffmpeg in real time is recorded: operation record, its recording grows, the stop route ends it with the file', async () => {
  await stream.listed(2);
  const [item] = (
    await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: streams.url('/tv/index.m3u8') })
      .expect(200)
  ).body.data.media;
  expect(item.is_live).toBe(true);
  const accepted = await request(gw.app)
    .post('/api/v1/download')
    .send({ url: item.sources[0].url, live: {} })
    .expect(202);
  const id = accepted.body.data.job_id as string;
  const view = async () => (await request(gw.app).get(`/api/v1/jobs/${id}`).expect(200)).body.data;
  const deadline = Date.now() + 15_000;
  let job = await view();
  while (!(job.status === 'processing' && job.recording?.seconds >= 2) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    job = await view();
  }
  expect(job).toMatchObject({
    operation: 'record',
    status: 'processing',
    progress: 0,
    recording: { seconds: expect.any(Number), bytes: expect.any(Number), gaps: [] },
  });
  // Its event stream carries the growing recording (percent 0 throughout): two events a second apart at least.
  const events = await fetchEvents(id, 2, 10_000);
  expect(events[1].recording.seconds).toBeGreaterThan(events[0].recording.seconds);
  const bearer = `Bearer ${accepted.body.data.control_token}`;
  await request(gw.app).post(`/api/v1/jobs/${id}/stop`).set('Authorization', bearer).expect(202);
  const asked = Date.now();
  while (job.status === 'processing' && Date.now() - asked < 10_000) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    job = await view();
  }
  expect(job).toMatchObject({
    status: 'completed',
    ended: 'stopped',
    progress: 100,
    artifact: { content_type: 'video/mp4' },
  });
  expect(Date.now() - asked).toBeLessThan(5_000);
  expect(job.recording.seconds).toBeGreaterThanOrEqual(2);
  const file = await request(gw.app)
    .get(`/api/v1/jobs/${id}/artifact`)
    .buffer(true)
    .parse((res, cb) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => cb(null, Buffer.concat(chunks)));
    })
    .expect(200);
  expect((file.body as Buffer).length).toBe(job.artifact.size);
  // Stopped and finished: a second stop is 409 not_recording.
  const again = await request(gw.app).post(`/api/v1/jobs/${id}/stop`).set('Authorization', bearer);
  expect([again.status, again.body.error?.code]).toEqual([409, 'not_recording']);
}, 30_000);

test('a dynamic DASH manifest extracts as is_live, and a download of one representation is a recording of it (a DELETE cancels it)', async () => {
  const [item] = (await extract('/live/manifest.mpd')).media;
  expect(item).toMatchObject({ is_live: true });
  expect(item.duration).toBeUndefined();
  const res = await request(gw.app)
    .post('/api/v1/download')
    .send({ url: item.sources[0].url, format: 'mp4', live: { duration: 60 } })
    .expect(202);
  const id = res.body.data.job_id as string;
  const job = (await request(gw.app).get(`/api/v1/jobs/${id}`).expect(200)).body.data;
  expect(job.operation).toBe('record');
  await request(gw.app)
    .delete(`/api/v1/jobs/${id}`)
    .set('Authorization', `Bearer ${res.body.data.control_token}`)
    .expect(204);
});

test('a live DASH manifest with separate video and audio: page_url picks the pair and records both in one job, as does the pair by hand; a live pair of other kinds is refused', async () => {
  const [item] = (await extract('/live/av.mpd')).media as unknown as {
    sources: { url: string; has_video?: boolean }[];
  }[];
  const video = item.sources.find((s) => s.has_video)!;
  const audio = item.sources.find((s) => s.has_video === false)!;
  const view = async (id: string) => (await request(gw.app).get(`/api/v1/jobs/${id}`).expect(200)).body.data;
  const oneStep = await request(gw.app)
    .post('/api/v1/download')
    .send({ page_url: origin.url('/live/av.mpd'), live: { duration: 60 } })
    .expect(202);
  const chosen = await view(oneStep.body.data.job_id);
  expect(chosen).toMatchObject({ operation: 'record', source: { video_url: video.url, audio_url: audio.url } });
  await request(gw.app)
    .delete(`/api/v1/jobs/${chosen.id}`)
    .set('Authorization', `Bearer ${oneStep.body.data.control_token}`)
    .expect(204);
  const byHand = await request(gw.app)
    .post('/api/v1/download')
    .send({ video_url: video.url, audio_url: audio.url, live: { duration: 60 } })
    .expect(202);
  expect(await view(byHand.body.data.job_id)).toMatchObject({ operation: 'record' });
  await request(gw.app)
    .delete(`/api/v1/jobs/${byHand.body.data.job_id}`)
    .set('Authorization', `Bearer ${byHand.body.data.control_token}`)
    .expect(204);
  // A live HLS playlist beside a DASH audio representation is no such pair.
  const [hls] = (await extract('/live/index.m3u8')).media;
  const refused = await request(gw.app)
    .post('/api/v1/download')
    .send({ video_url: hls.sources[0].url, audio_url: audio.url });
  expect([refused.status, refused.body.error?.code, refused.body.error?.message]).toEqual([
    400,
    'invalid_request',
    expect.stringMatching(/only a video and an audio representation of one live DASH manifest/),
  ]);
}, 30_000);

test('a finished playlist is not live: it has its duration and no is_live', async () => {
  const [item] = (await extract('/vod/index.m3u8')).media;
  expect(item.is_live).toBeUndefined();
  expect(item.duration).toBe(4);
});

test('a master whose variant is live is marked live at extract (one variant read); one whose variant cannot be read then is not, and its job fails at once saying why', async () => {
  const [marked] = (await extract('/live/master.m3u8')).media;
  expect(marked.is_live).toBe(true);
  expect(marked.sources[0].is_live).toBe(true);
  // The variant fails the extract's one read, then answers live to the job.
  const [item] = (await extract('/flaky/master.m3u8')).media;
  expect(item.is_live).toBeUndefined();
  const started = Date.now();
  const res = await request(gw.app).post('/api/v1/download').send({ url: item.sources[0].url }).expect(202);
  const id = res.body.data.job_id as string;
  let job: { status: string; error?: { code: string; message: string } };
  for (;;) {
    job = (await request(gw.app).get(`/api/v1/jobs/${id}`).expect(200)).body.data;
    if (job.status === 'failed' || job.status === 'completed' || Date.now() - started > 20_000) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(job.status).toBe('failed');
  expect(job.error).toEqual({
    code: 'upstream_error',
    message: expect.stringMatching(/the stream is live .*a live variant of a master playlist is not recorded yet/),
  });
  expect(Date.now() - started).toBeLessThan(15_000);
}, 30_000);
