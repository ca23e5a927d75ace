// GET /api/v1/download/stream: what a browser follows as a link to save a direct stream (the front
// page's one action). It streams exactly what POST /api/v1/download would stream, and never starts a
// job: a download that needs one is refused, so a GET stays safe to repeat.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { binary, buildGateway, type TestGateway } from './helpers.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-dlstream-'));
let origin: Origin;
let media: TestMedia;
let gw: TestGateway;

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  origin.file('/media/m240.mp4', media.muxedMp4, 'video/mp4');
  origin.file('/media/m720.mp4', media.muxedMp4, 'video/mp4');
  origin.body(
    '/muxed.html',
    `<html><head><title>Muxed</title></head><body><video>
    <source src="/media/m240.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"' label="240p">
    <source src="/media/m720.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"' label="720p">
    </video></body></html>`,
    'text/html',
  );
  gw = await buildGateway({ env: { DATA_DIR: dataDir } });
});

afterAll(async () => {
  await gw.close();
  await origin.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const stream = (query: Record<string, string>) =>
  request(gw.app)
    .get(`/api/v1/download/stream?${new URLSearchParams(query)}`)
    .buffer(true)
    .parse(binary);

test('a page_url with a preset streams the chosen source as an attachment, naming its quality', async () => {
  const res = await stream({ page_url: origin.url('/muxed.html'), quality: '480p' });
  expect(res.status).toBe(200);
  expect(res.headers['reelay-source-quality']).toBe('240p');
  expect(res.headers['content-disposition']).toMatch(/^attachment; filename="?Muxed\.mp4/);
  expect(Buffer.compare(res.body as Buffer, fs.readFileSync(media.muxedMp4))).toBe(0);
});

test('the same answer as POST /api/v1/download gives for the same preset', async () => {
  const post = await request(gw.app)
    .post('/api/v1/download')
    .send({ page_url: origin.url('/muxed.html') })
    .buffer(true)
    .parse(binary);
  const get = await stream({ page_url: origin.url('/muxed.html') });
  expect({
    status: get.status,
    quality: get.headers['reelay-source-quality'],
    type: get.headers['content-type'],
  }).toEqual({
    status: post.status,
    quality: post.headers['reelay-source-quality'],
    type: post.headers['content-type'],
  });
});

test('a download that needs a job is refused with 400 and starts none', async () => {
  const res = await stream({ page_url: origin.url('/muxed.html'), format: 'mp3' });
  expect({ status: res.status, code: JSON.parse(String(res.body)).error.code }).toEqual({
    status: 400,
    code: 'invalid_request',
  });
  expect(JSON.parse(String(res.body)).error.message).toMatch(/POST \/api\/v1\/download/);
  expect(await gw.queue.getJobCounts('waiting', 'active', 'completed')).toEqual({
    waiting: 0,
    active: 0,
    completed: 0,
  });
});

test('an unknown parameter, a repeated one, or a bad value is 400 naming it; a private address is 403', async () => {
  const code = (res: request.Response) => [
    res.status,
    JSON.parse(String(res.body)).error.code,
    JSON.parse(String(res.body)).error.message,
  ];
  expect(code(await stream({ page_url: origin.url('/muxed.html'), webhook_url: 'https://x.example/' }))).toEqual([
    400,
    'invalid_request',
    expect.stringContaining('webhook_url'),
  ]);
  expect(
    code(await request(gw.app).get(`/api/v1/download/stream?page_url=a&page_url=b`).buffer(true).parse(binary)),
  ).toEqual([400, 'invalid_request', expect.stringContaining('page_url')]);
  expect(code(await stream({ page_url: origin.url('/muxed.html'), audio_only: 'yes' }))).toEqual([
    400,
    'invalid_request',
    expect.stringContaining('audio_only'),
  ]);
  expect(code(await stream({ page_url: 'not a url' }))).toEqual([400, 'invalid_url', expect.any(String)]);
  expect(code(await stream({ page_url: 'http://10.0.0.1/watch' }))[0]).toBe(403);
});

test("a browser request from another site is refused; the web app's own and a typed link pass", async () => {
  const query = new URLSearchParams({ page_url: origin.url('/muxed.html') });
  const from = (site: string) =>
    request(gw.app).get(`/api/v1/download/stream?${query}`).set('Sec-Fetch-Site', site).buffer(true).parse(binary);
  const refused = await from('cross-site');
  expect([refused.status, JSON.parse(String(refused.body)).error.code]).toEqual([403, 'cross_site_request']);
  expect((await from('same-site')).status).toBe(403);
  expect((await from('same-origin')).status).toBe(200);
  expect((await from('none')).status).toBe(200);
});
