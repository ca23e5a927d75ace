// Clips and tags from a page to a file: the extract finds the author, date and thumbnail in the
// page's JSON-LD, the download asks for a precise clip as m4a, a real worker makes it, and the file
// served by the gateway holds the clip, the tags (the page URL as comment) and the cover art.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { FsArtifactStore } from '@reelay/artifacts';
import { parseConfig } from '@reelay/config';
import { createLogger } from '@reelay/observability';
import { startOrigin, testMedia, type Origin } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { binary, buildGateway, type TestGateway } from './helpers.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-clips-'));
const artifacts = new FsArtifactStore(dataDir);
const prefix = `test-clips-${randomBytes(4).toString('hex')}`;
let origin: Origin;
let gw: TestGateway;
let worker: RunningWorker;

beforeAll(async () => {
  const media = await testMedia();
  origin = await startOrigin();
  origin.file('/media/talk.mp4', media.muxedMp4, 'video/mp4');
  origin.file('/media/talk.png', media.png, 'image/png');
  origin.body(
    '/talk.html',
    `<html><head><title>Talk</title><script type="application/ld+json">
    {"@context":"https://schema.org","@type":"VideoObject","name":"A short talk","contentUrl":"/media/talk.mp4","encodingFormat":"video/mp4",
     "thumbnailUrl":"/media/talk.png","duration":"PT2S","author":{"@type":"Person","name":"Ada"},"uploadDate":"2024-05-06","description":"Two seconds."}
    </script></head><body></body></html>`,
    'text/html',
  );
  gw = await buildGateway({ env: { DATA_DIR: dataDir }, deps: { artifacts, queuePrefix: prefix } });
  const config = parseConfig({
    REDIS_URL: process.env.REDIS_URL,
    EGRESS_ALLOWLIST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    WORKER_CONCURRENCY: '1',
  });
  worker = await startWorker({
    config,
    logger: createLogger({ name: 'clips-worker', level: 'silent' }),
    metricsPort: 0,
    prefix,
    dataDir,
  });
});

afterAll(async () => {
  await worker?.stop();
  await gw.close();
  await origin.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test("a precise m4a clip of an extracted page carries the clip, the page's tags and its thumbnail as cover", async () => {
  const page = origin.url('/talk.html');
  const extracted = (await request(gw.app).post('/api/v1/extract').send({ url: page }).expect(200)).body.data;
  expect(extracted.media[0]).toMatchObject({
    author: 'Ada',
    upload_date: '2024-05-06',
    description: 'Two seconds.',
    duration: 2,
  });

  const url = extracted.media[0].sources[0].url;
  // The extract knew the duration: a start past it is refused at once.
  const refused = await request(gw.app)
    .post('/api/v1/download')
    .send({ url, clip: { start: 2, end: 3 } })
    .expect(400);
  expect(refused.body.error.code).toBe('invalid_clip');

  const started = await request(gw.app)
    .post('/api/v1/download')
    .send({ url, format: 'm4a', clip: { start: 0.5, end: 1.5, mode: 'precise' } })
    .expect(202);
  const statusUrl: string = started.body.data.status_url;
  const deadline = Date.now() + 30_000;
  let job = (await request(gw.app).get(statusUrl).expect(200)).body.data;
  while (job.status !== 'completed' && job.status !== 'failed' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    job = (await request(gw.app).get(statusUrl).expect(200)).body.data;
  }
  expect(job).toMatchObject({
    status: 'completed',
    clip: { start: 0.5, end: 1.5, mode: 'precise' },
    artifact: { filename: 'A short talk.m4a' },
  });

  const file = await request(gw.app).get(job.artifact.url).buffer(true).parse(binary).expect(200);
  const local = path.join(dataDir, 'talk-check.m4a');
  fs.writeFileSync(local, file.body as Buffer);
  const info = JSON.parse(
    execFileSync('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', local], {
      encoding: 'utf8',
    }),
  );
  expect(Math.abs(Number(info.format.duration) - 1)).toBeLessThan(0.1);
  expect(info.format.tags).toMatchObject({ title: 'A short talk', artist: 'Ada', date: '2024-05-06', comment: page });
  expect(
    info.streams.map((s: { codec_name: string; disposition: { attached_pic: number } }) => [
      s.codec_name,
      s.disposition.attached_pic,
    ]),
  ).toEqual([
    ['aac', 0],
    ['mjpeg', 1],
  ]);
});
