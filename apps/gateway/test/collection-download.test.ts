// Collection downloads end to end (DESIGN.md "Collections": Download, End, Archive, Limits): a podcast
// feed on a local origin, a real worker and Redis. A feed's episodes become child jobs of one parent
// (a BullMQ flow) that completes when they do; a failing episode makes it partial without touching
// its siblings; entries select; the archive skips what was done; bad selections are 400.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { FsArtifactStore } from '@reelay/artifacts';
import { parseConfig } from '@reelay/config';
import { createLogger } from '@reelay/observability';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { buildGateway, type TestGateway } from './helpers.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-colldl-'));
const artifacts = new FsArtifactStore(dataDir);
const prefix = `test-colldl-${randomBytes(4).toString('hex')}`;
let origin: Origin;
let media: TestMedia;
let gw: TestGateway;
let worker: RunningWorker;

function feed(title: string, episodes: { n: number; file: string }[]): string {
  const items = episodes.map(
    ({ n, file }) =>
      `<item><title>Episode ${n}</title><guid isPermaLink="false">${title}-ep-${n}</guid><enclosure url="${origin.url(file)}" length="1000" type="audio/mp4"/></item>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>${title}</title><link>${origin.url('/')}</link>${items.join('\n')}</channel></rss>`;
}

const download = (body: object) => request(gw.app).post('/api/v1/download').send(body);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON answer, read by the matchers
async function waitEnd(id: string, deadlineMs = 15_000): Promise<Record<string, any>> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const res = await request(gw.app).get(`/api/v1/jobs/${id}`);
    expect(res.status).toBe(200);
    if (['completed', 'failed', 'cancelled', 'expired'].includes(res.body.data.status)) return res.body.data;
    if (Date.now() > until) throw new Error(`job ${id} did not end: ${JSON.stringify(res.body.data)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  for (let n = 1; n <= 5; n++) origin.file(`/audio/${n}.m4a`, media.audioOnlyM4a, 'audio/mp4');
  const five = [1, 2, 3, 4, 5].map((n) => ({ n, file: `/audio/${n}.m4a` }));
  origin.body('/five.xml', feed('Five Tones', five), 'application/rss+xml');
  origin.body(
    '/broken.xml',
    feed('Broken', [
      { n: 1, file: '/audio/1.m4a' },
      { n: 2, file: '/missing.m4a' },
      { n: 3, file: '/audio/3.m4a' },
    ]),
    'application/rss+xml',
  );
  origin.body(
    '/dead.xml',
    feed('Dead', [
      { n: 1, file: '/missing-1.m4a' },
      { n: 2, file: '/missing-2.m4a' },
    ]),
    'application/rss+xml',
  );
  // Entries with pages of their own that never answer: resolving them is bounded by the budget.
  origin.route('/hang/1', () => undefined);
  origin.route('/hang/2', () => undefined);
  origin.body(
    '/hanging.xml',
    `<?xml version="1.0"?><rss version="2.0"><channel><title>Hanging</title><item><title>H1</title><link>${origin.url('/hang/1')}</link></item><item><title>H2</title><link>${origin.url('/hang/2')}</link></item><item><title>Fine</title><guid>fine</guid><enclosure url="${origin.url('/audio/1.m4a')}" type="audio/mp4"/></item></channel></rss>`,
    'application/rss+xml',
  );
  origin.body('/archived.xml', feed('Archived', five.slice(0, 3)), 'application/rss+xml');
  gw = await buildGateway({
    env: {
      DATA_DIR: dataDir,
      EXTRACT_CACHE_SECONDS: '60',
      MAX_COLLECTION_ENTRIES: '4',
      MAX_ACTIVE_JOBS_PER_CLIENT: '50',
    },
    deps: { artifacts, queuePrefix: prefix, collectionResolveMs: 1_500 },
  });
  const config = parseConfig({
    REDIS_URL: process.env.REDIS_URL,
    EGRESS_ALLOWLIST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    WORKER_CONCURRENCY: '2',
  });
  worker = await startWorker({
    config,
    logger: createLogger({ name: 'colldl-worker', level: 'silent' }),
    metricsPort: 0,
    prefix,
    dataDir,
  });
});

afterAll(async () => {
  await worker?.stop();
  await gw?.close();
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('a collection download', () => {
  test('selected entries become child jobs; the parent completes when they do and lists them in entry order', async () => {
    const res = await download({ collection_url: origin.url('/five.xml'), entries: '1-2,4', bundle: 'none' });
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(`/api/v1/jobs/${res.body.data.job_id}`);
    const parent = await waitEnd(res.body.data.job_id);
    expect(parent).toMatchObject({
      status: 'completed',
      operation: 'collection',
      progress: 100,
      title: 'Five Tones',
      entries: { total: 3, queued: 0, running: 0, completed: 3, failed: 0, skipped: 0 },
    });
    expect(parent.partial).toBeUndefined();
    const children = await request(gw.app).get(`/api/v1/jobs/${parent.id}/children`);
    expect(children.status).toBe(200);
    expect(children.body.data.children.map((c: { index: number }) => c.index)).toEqual([1, 2, 4]);
    for (const child of children.body.data.children) {
      expect(child).toMatchObject({ status: 'completed', title: `Episode ${child.index}` });
      // Every child is an ordinary job with its own view and artifact.
      const own = await request(gw.app).get(`/api/v1/jobs/${child.job_id}`);
      expect(own.body.data).toMatchObject({ status: 'completed', operation: 'convert' });
      expect(own.body.data.artifact.filename).toBe(`Episode ${child.index}.m4a`);
    }
  });

  test('bundle zip (the default): one ZIP of the completed files, named NNN - title.ext, that unzip reads back whole', async () => {
    const res = await download({ collection_url: origin.url('/broken.xml') });
    const parent = await waitEnd(res.body.data.job_id, 20_000);
    expect(parent).toMatchObject({
      status: 'completed',
      partial: true,
      artifact: { filename: 'Broken.zip', content_type: 'application/zip' },
    });
    const zip = await request(gw.app)
      .get(parent.artifact.url)
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(zip.status).toBe(200);
    expect(zip.headers['content-type']).toMatch(/application\/zip/);
    const file = path.join(dataDir, 'bundle-check.zip');
    fs.writeFileSync(file, zip.body as Buffer);
    expect(parent.artifact.size).toBe((zip.body as Buffer).length);
    const list = spawnSync('unzip', ['-Z1', file], { encoding: 'utf8' });
    expect(list.stdout.trim().split('\n')).toEqual(['001 - Episode 1.m4a', '003 - Episode 3.m4a']);
    const check = spawnSync('unzip', ['-tq', file], { encoding: 'utf8' });
    expect(check.status).toBe(0);
    // Each file is the episode as its child job wrote it.
    const children = (await request(gw.app).get(`/api/v1/jobs/${parent.id}/children`)).body.data.children;
    const own = (await request(gw.app).get(`/api/v1/jobs/${children[0].job_id}`)).body.data;
    const one = spawnSync('unzip', ['-p', file, '001 - Episode 1.m4a']);
    expect(one.stdout.length).toBe(own.artifact.size);
  });

  test('page_url of a collection is a collection download too', async () => {
    const res = await download({ page_url: origin.url('/five.xml'), entries: [3], bundle: 'none' });
    expect(res.status).toBe(202);
    const parent = await waitEnd(res.body.data.job_id);
    expect(parent.entries).toMatchObject({ total: 1, completed: 1 });
  });

  test('a failing entry fails alone: the parent completes, partial', async () => {
    const res = await download({ collection_url: origin.url('/broken.xml'), bundle: 'none' });
    expect(res.status).toBe(202);
    const parent = await waitEnd(res.body.data.job_id, 20_000);
    expect(parent).toMatchObject({
      status: 'completed',
      partial: true,
      entries: { total: 3, completed: 2, failed: 1 },
    });
    const children = (await request(gw.app).get(`/api/v1/jobs/${parent.id}/children`)).body.data.children;
    expect(children.map((c: { status: string }) => c.status)).toEqual(['completed', 'failed', 'completed']);
    expect(children[1].error.code).toBeDefined();
  });

  test('when every entry fails the parent fails', async () => {
    const res = await download({ collection_url: origin.url('/dead.xml'), bundle: 'none' });
    const parent = await waitEnd(res.body.data.job_id, 20_000);
    expect(parent).toMatchObject({ status: 'failed', entries: { failed: 2, completed: 0 } });
    expect(parent.error.message).toMatch(/Every entry failed/);
  });

  test('entries whose pages never answer cost the request at most its budget and fail alone', async () => {
    const t0 = Date.now();
    const res = await download({ collection_url: origin.url('/hanging.xml'), bundle: 'none' });
    expect(res.status).toBe(202);
    expect(Date.now() - t0).toBeLessThan(6_000);
    const parent = await waitEnd(res.body.data.job_id);
    expect(parent).toMatchObject({
      status: 'completed',
      partial: true,
      entries: { total: 3, completed: 1, failed: 2 },
    });
    const children = (await request(gw.app).get(`/api/v1/jobs/${parent.id}/children`)).body.data.children;
    expect(children.slice(0, 2).map((c: { error: { code: string } }) => c.error.code)).toEqual([
      'upstream_timeout',
      'upstream_timeout',
    ]);
  });

  test('a webhook fires once, at the end, with the parent Job', async () => {
    const got: { body: string; signature: string }[] = [];
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push({ body: Buffer.concat(chunks).toString('utf8'), signature: String(req.headers['webhook-signature']) });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const res = await download({
        collection_url: origin.url('/broken.xml'),
        bundle: 'none',
        webhook_url: hook,
        webhook_secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
      });
      expect(res.status).toBe(202);
      const parent = await waitEnd(res.body.data.job_id, 20_000);
      const deadline = Date.now() + 10_000;
      while (got.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300)); // a second delivery, if any, would have come by now
      expect(got).toHaveLength(1);
      const event = JSON.parse(got[0].body);
      expect(event).toMatchObject({
        type: 'job.completed',
        data: {
          id: parent.id,
          operation: 'collection',
          status: 'completed',
          partial: true,
          entries: { total: 3, completed: 2, failed: 1 },
        },
      });
      expect(got[0].signature).toMatch(/^v1,/);
      const after = await request(gw.app).get(`/api/v1/jobs/${parent.id}`);
      expect(after.body.data.webhook).toMatchObject({ url: hook, status: 'delivered' });
    } finally {
      await new Promise((r) => receiver.close(r));
    }
  });

  test('an archive skips the entries it has done; all skipped still completes', async () => {
    const archive = `archive-${randomBytes(8).toString('hex')}`;
    const first = await waitEnd(
      (await download({ collection_url: origin.url('/archived.xml'), entries: '1-2', archive, bundle: 'none' })).body
        .data.job_id,
    );
    expect(first.entries).toMatchObject({ completed: 2, skipped: 0 });
    const second = await waitEnd(
      (await download({ collection_url: origin.url('/archived.xml'), archive, bundle: 'none' })).body.data.job_id,
    );
    expect(second).toMatchObject({ status: 'completed', entries: { total: 3, completed: 1, skipped: 2 } });
    const third = await waitEnd(
      (await download({ collection_url: origin.url('/archived.xml'), archive, bundle: 'none' })).body.data.job_id,
    );
    expect(third).toMatchObject({ status: 'completed', entries: { total: 3, completed: 0, skipped: 3 } });
  });
});

describe('bad collection requests', () => {
  const cases: [string, object, RegExp][] = [
    [
      'more entries than MAX_COLLECTION_ENTRIES',
      { collection_url: 'http://127.0.0.1:1/x.xml', entries: '1-5' },
      /MAX_COLLECTION_ENTRIES \(4\)/,
    ],
    ['a backwards range', { collection_url: 'http://127.0.0.1:1/x.xml', entries: '3-1' }, /backwards/],
    ['a malformed selection', { collection_url: 'http://127.0.0.1:1/x.xml', entries: '1-,x' }, /entries/],
    ['an archive name too short', { collection_url: 'http://127.0.0.1:1/x.xml', archive: 'short' }, /archive/],
    [
      'an archive name with slashes',
      { collection_url: 'http://127.0.0.1:1/x.xml', archive: '../../etc/passwd/aaaaaaa' },
      /archive/,
    ],
    ['entries without a collection', { url: 'http://127.0.0.1:1/a.mp4', entries: 'all' }, /collection/],
    [
      'collection_url with url',
      { collection_url: 'http://127.0.0.1:1/x.xml', url: 'http://127.0.0.1:1/a.mp4' },
      /exactly one/,
    ],
    [
      'a clip on a collection',
      { collection_url: 'http://127.0.0.1:1/x.xml', clip: { start: 0, end: 1 } },
      /collection/,
    ],
    ['a bundle of another kind', { collection_url: 'http://127.0.0.1:1/x.xml', bundle: 'tar' }, /bundle/],
  ];
  test.each(cases)('%s → 400', async (_name, body, message) => {
    const res = await download(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: { code: 'invalid_request' } });
    expect(res.body.error.message).toMatch(message);
  });

  test('an entry past the end, a whole collection over the limit, a collection_url that is no collection', async () => {
    const past = await download({ collection_url: origin.url('/archived.xml'), entries: [4] });
    expect(past.status).toBe(400);
    expect(past.body.error.message).toMatch(/entry 4 is out of range: this collection lists 3 entries/);
    const over = await download({ collection_url: origin.url('/five.xml') });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toMatch(/more than MAX_COLLECTION_ENTRIES \(4\)/);
    const single = await download({ collection_url: origin.url('/audio/1.m4a') });
    expect(single.status).toBe(400);
    expect(single.body.error.message).toMatch(/not a collection/);
  });

  test('children of an unknown id are 404', async () => {
    const res = await request(gw.app).get('/api/v1/jobs/AAAAAAAAAAAAAAAAAAAAAA/children');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('job_not_found');
  });
});
