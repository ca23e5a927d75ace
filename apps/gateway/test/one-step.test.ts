// One-step downloads (DESIGN.md "One-step downloads (presets)"): POST /api/v1/download with a
// page_url extracts the page, picks with the shared chooseSource and answers as that download would:
// a stream naming its quality, or a job (merged by a real worker) whose view names what was chosen.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { FsArtifactStore } from '@reelay/artifacts';
import { parseConfig } from '@reelay/config';
import { createLogger } from '@reelay/observability';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { binary, buildGateway, type TestGateway } from './helpers.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-onestep-'));
const artifacts = new FsArtifactStore(dataDir);
const prefix = `test-onestep-${randomBytes(4).toString('hex')}`;
let origin: Origin;
let media: TestMedia;
let gw: TestGateway;
let worker: RunningWorker;
const hits: Record<string, number> = {};

const sha256 = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  // One file under three names, labelled as three renditions of one video.
  for (const h of [240, 480, 720]) origin.file(`/media/m${h}.mp4`, media.muxedMp4, 'video/mp4');
  origin.file('/media/video-only.mp4', media.videoOnlyMp4, 'video/mp4');
  origin.file('/media/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
  origin.file('/media/pic.png', media.png, 'image/png');
  const page = (name: string, html: string) =>
    origin.route(name, (_req, res) => {
      hits[name] = (hits[name] ?? 0) + 1;
      res.writeHead(200, { 'content-type': 'text/html' }).end(html);
    });
  page(
    '/muxed.html',
    `<html><head><title>Muxed</title></head><body><video>
    <source src="/media/m240.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"' label="240p">
    <source src="/media/m720.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"' label="720p">
    <source src="/media/m480.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"' label="480p">
    </video></body></html>`,
  );
  page(
    '/split.html',
    `<html><head><title>Split</title></head><body><video>
    <source src="/media/video-only.mp4" type='video/mp4; codecs="avc1.64001e"' label="360p">
    <source src="/media/audio-only.m4a" type='audio/mp4; codecs="mp4a.40.2"'>
    </video></body></html>`,
  );
  page(
    '/picture.html',
    `<html><head><title>Picture</title><meta property="og:image" content="/media/pic.png"></head><body></body></html>`,
  );
  gw = await buildGateway({
    env: { DATA_DIR: dataDir, EXTRACT_CACHE_SECONDS: '60' },
    deps: { artifacts, queuePrefix: prefix },
  });
  const config = parseConfig({
    REDIS_URL: process.env.REDIS_URL,
    EGRESS_ALLOWLIST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    WORKER_CONCURRENCY: '1',
  });
  worker = await startWorker({
    config,
    logger: createLogger({ name: 'onestep-worker', level: 'silent' }),
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

const download = (body: object) => request(gw.app).post('/api/v1/download').send(body);
const expectError = (res: request.Response, status: number, code: string) =>
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });

async function finished(statusUrl: string) {
  const deadline = Date.now() + 20_000;
  let job = (await request(gw.app).get(statusUrl).expect(200)).body.data;
  while (job.status !== 'completed' && job.status !== 'failed' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    job = (await request(gw.app).get(statusUrl).expect(200)).body.data;
  }
  return job;
}

describe('a page of muxed sources', () => {
  test('streams the best source and names its quality', async () => {
    const res = await download({ page_url: origin.url('/muxed.html') })
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(res.headers['reelay-source-quality']).toBe('720p');
    // What was chosen, in words a person reads (the CLI prints it).
    expect(res.headers['reelay-source-description']).toBe('720p video with audio (mp4)');
    expect(sha256(res.body as Buffer)).toBe(sha256(fs.readFileSync(media.muxedMp4)));
    expect(res.headers['content-disposition']).toBe('attachment; filename=Muxed.mp4');
  });

  test('a quality caps the height, and a cap below every source takes the lowest', async () => {
    for (const [quality, expected] of [
      ['720p', '720p'],
      ['480p', '480p'],
      ['360p', '240p'],
      ['240p', '240p'],
      ['worst', '240p'],
      ['best', '720p'],
    ]) {
      const res = await download({ page_url: origin.url('/muxed.html'), quality })
        .buffer(true)
        .parse(binary)
        .expect(200);
      expect([quality, res.headers['reelay-source-quality']]).toEqual([quality, expected]);
    }
  });

  test('the page is extracted through the extract cache', async () => {
    const before = hits['/muxed.html'] ?? 0;
    await download({ page_url: origin.url('/muxed.html'), quality: '480p' })
      .buffer(true)
      .parse(binary)
      .expect(200);
    await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url('/muxed.html') })
      .expect(200);
    expect(hits['/muxed.html']).toBe(Math.max(before, 1));
  });

  test('a format makes the job a download of the chosen source would make, its view naming the choice', async () => {
    const started = await download({ page_url: origin.url('/muxed.html'), quality: '480p', format: 'mkv' }).expect(202);
    const job = await finished(started.body.data.status_url);
    expect(job).toMatchObject({
      status: 'completed',
      operation: 'convert',
      source: { quality: '480p', url: origin.url('/media/m480.mp4') },
      artifact: { filename: 'Muxed.mkv' },
    });
  });
});

describe('a page of a video-only and an audio-only file', () => {
  test('merges the pair in a job whose view names both', async () => {
    const started = await download({ page_url: origin.url('/split.html') }).expect(202);
    const job = await finished(started.body.data.status_url);
    expect(job).toMatchObject({
      status: 'completed',
      operation: 'merge',
      source: {
        quality: '360p',
        video_url: origin.url('/media/video-only.mp4'),
        audio_url: origin.url('/media/audio-only.m4a'),
        description: '360p video (mp4) + audio (m4a), merged',
      },
      artifact: { filename: 'Split.mp4' },
    });
    // The same request again is the same job.
    const again = await download({ page_url: origin.url('/split.html') }).expect(202);
    expect(again.body.data.job_id).toBe(started.body.data.job_id);
  });

  test('audio_only streams the audio file', async () => {
    const res = await download({ page_url: origin.url('/split.html'), audio_only: true })
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(sha256(res.body as Buffer)).toBe(sha256(fs.readFileSync(media.audioOnlyM4a)));
    expect(res.headers['reelay-source-quality']).toBeTruthy();
  });

  test('an audio format converts the audio file', async () => {
    const started = await download({ page_url: origin.url('/split.html'), format: 'mp3' }).expect(202);
    const job = await finished(started.body.data.status_url);
    expect(job).toMatchObject({
      status: 'completed',
      operation: 'convert',
      source: { url: origin.url('/media/audio-only.m4a') },
      artifact: { filename: 'Split.mp3' },
    });
  });
});

describe('what cannot be chosen', () => {
  test('no source the preset can deliver is 422 no_matching_source naming what exists', async () => {
    const res = await download({ page_url: origin.url('/picture.html'), audio_only: true });
    expectError(res, 422, 'no_matching_source');
    expect(res.body.error.message).toMatch(/no audio.*It has: .*image/);
    expectError(await download({ page_url: origin.url('/picture.html'), format: 'mp4' }), 422, 'no_matching_source');
  });

  test('an item out of range is 400 naming the count', async () => {
    const res = await download({ page_url: origin.url('/muxed.html'), item: 3 });
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.message).toBe('item 3 is out of range: this page has 1 media item (item 0).');
  });

  test('bad bodies are 400 with the envelope', async () => {
    const page = origin.url('/muxed.html');
    const bad: Array<[object, string, RegExp?]> = [
      [
        { page_url: page, url: origin.url('/media/m240.mp4') },
        'invalid_request',
        /exactly one of url, video_url with audio_url, page_url, or collection_url/,
      ],
      [{ page_url: page, video_url: 'a', audio_url: 'b' }, 'invalid_request'],
      [
        { url: origin.url('/media/m240.mp4'), quality: '720p' },
        'invalid_request',
        /quality chooses among a page's sources/,
      ],
      [{ url: origin.url('/media/m240.mp4'), audio_only: true }, 'invalid_request'],
      [{ page_url: page, quality: '999p' }, 'invalid_request'],
      [{ page_url: page, quality: 720 }, 'invalid_request'],
      [{ page_url: page, audio_only: 'yes' }, 'invalid_request'],
      [{ page_url: page, item: -1 }, 'invalid_request'],
      [{ page_url: page, item: 1.5 }, 'invalid_request'],
      [{ page_url: page, extraction_id: 'abc' }, 'invalid_request'],
      [{ page_url: 42 }, 'invalid_request'],
      [{ page_url: 'ftp://example.com/x' }, 'invalid_url'],
      [{ page_url: 'not a url' }, 'invalid_url'],
      [{ page_url: `https://example.com/${'a'.repeat(2100)}` }, 'invalid_url'],
    ];
    for (const [body, code, message] of bad) {
      const res = await download(body);
      expect([body, res.status, res.body?.error?.code]).toEqual([body, 400, code]);
      if (message) expect(res.body.error.message).toMatch(message);
    }
  });

  test('a page_url at a private address is refused by the egress guard', async () => {
    expectError(await download({ page_url: 'http://10.0.0.1/video' }), 403, 'url_blocked');
  });
});

test('the OpenAPI document states the three download forms as a oneOf, with the preset fields', async () => {
  const doc = (await request(gw.app).get('/api/openapi.json').expect(200)).body;
  const schema = doc.components.schemas.DownloadRequest;
  expect(schema.oneOf.map((f: { required: string[] }) => f.required)).toEqual([
    ['url'],
    ['video_url', 'audio_url'],
    ['page_url'],
    ['collection_url'],
  ]);
  expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['page_url', 'item', 'quality', 'audio_only']));
  expect(schema.properties.quality.enum).toEqual([
    'best',
    'worst',
    '2160p',
    '1440p',
    '1080p',
    '720p',
    '480p',
    '360p',
    '240p',
  ]);
  expect(doc.components.schemas.Job.properties.source).toBeDefined();
});
