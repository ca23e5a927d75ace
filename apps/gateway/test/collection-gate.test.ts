// A collection among other clients (DESIGN.md "Collections" Limits): COLLECTION_CONCURRENCY children
// in flight, another client's single job starting within seconds while a long collection runs, the
// collection counting as one job against MAX_ACTIVE_JOBS_PER_CLIENT, and a cancelled parent cancelling
// its children. Real Redis, a real worker, a local origin sending its files slowly.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import request from 'supertest';
import { FsArtifactStore } from '@reelay/artifacts';
import { parseConfig } from '@reelay/config';
import { DOWNLOAD_QUEUE } from '@reelay/contracts';
import { createLogger } from '@reelay/observability';
import { serveFile, startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { buildGateway, type TestGateway } from './helpers.js';
import { openEvents } from './sse-client.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-collgate-'));
const artifacts = new FsArtifactStore(dataDir);
const prefix = `test-collgate-${randomBytes(4).toString('hex')}`;
let origin: Origin;
let media: TestMedia;
let gw: TestGateway;
let worker: RunningWorker;
let downloads: Queue;

function feed(title: string, files: string[]): string {
  const items = files.map(
    (file, i) =>
      `<item><title>${title} ${i + 1}</title><guid isPermaLink="false">${title}-${i + 1}</guid><enclosure url="${origin.url(file)}" length="1000" type="audio/mp4"/></item>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>${title}</title>${items.join('\n')}</channel></rss>`;
}

const post = (ip: string, body: object) =>
  request(gw.app).post('/api/v1/download').set('X-Forwarded-For', ip).send(body);
const view = async (id: string) => (await request(gw.app).get(`/api/v1/jobs/${id}`)).body.data;

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await fn();
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  const size = fs.statSync(media.audioOnlyM4a).size;
  // Each slow file takes about 1.5 s to send.
  for (let n = 1; n <= 6; n++)
    origin.route(`/slow/${n}.m4a`, (req, res) =>
      serveFile(req, res, media.audioOnlyM4a, 'audio/mp4', {}, Math.ceil(size / 1.5)),
    );
  origin.file('/quick.m4a', media.audioOnlyM4a, 'audio/mp4');
  origin.body(
    '/long.xml',
    feed(
      'Long',
      [1, 2, 3, 4, 5, 6].map((n) => `/slow/${n}.m4a`),
    ),
    'application/rss+xml',
  );
  origin.body('/single.xml', feed('Single', ['/quick.m4a']), 'application/rss+xml');
  gw = await buildGateway({
    env: {
      DATA_DIR: dataDir,
      TRUST_PROXY: 'true',
      COLLECTION_CONCURRENCY: '2',
      MAX_ACTIVE_JOBS_PER_CLIENT: '1',
      JOB_TIMEOUT_SECONDS: '600',
    },
    deps: { artifacts, queuePrefix: prefix },
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
    logger: createLogger({ name: 'collgate-worker', level: 'silent' }),
    metricsPort: 0,
    prefix,
    dataDir,
  });
  downloads = new Queue(DOWNLOAD_QUEUE, { connection: { url: process.env.REDIS_URL }, prefix });
});

afterAll(async () => {
  await downloads?.close();
  await worker?.stop();
  await gw?.close();
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('collections among other clients', () => {
  test("two children in flight at most; another client's job starts within seconds; the collection is one job of its client", async () => {
    const started = await post('10.0.0.1', { collection_url: origin.url('/long.xml'), bundle: 'none' });
    expect(started.status).toBe(202);
    const id = started.body.data.job_id;
    // The collection holds its client's one slot: a second job of the same client is refused.
    const second = await post('10.0.0.1', { collection_url: origin.url('/single.xml'), bundle: 'none' });
    expect(second.status).toBe(429);
    expect(second.body.error.code).toBe('too_many_jobs');
    await until('a child runs', async () => (await view(id)).entries.running > 0);
    const other = await post('10.0.0.2', { page_url: origin.url('/quick.m4a'), format: 'mp3' });
    expect(other.status).toBe(202);
    const otherId = other.body.data.job_id;
    let most = 0;
    const t0 = Date.now();
    let otherStartedAfter: number | undefined;
    let otherStartedWhile: Record<string, number> | undefined;
    for (;;) {
      const counts = await downloads.getJobCounts('waiting', 'active', 'delayed');
      const parent = await view(id);
      most = Math.max(most, parent.entries.running);
      expect(parent.entries.running).toBeLessThanOrEqual(2);
      // The queue never holds more than two of the collection's children (plus the other client's job).
      expect(counts.waiting + counts.active).toBeLessThanOrEqual(3);
      if (otherStartedAfter === undefined && (await view(otherId)).status !== 'queued') {
        otherStartedAfter = Date.now() - t0;
        otherStartedWhile = parent.entries;
      }
      if (parent.status === 'completed') break;
      if (Date.now() - t0 > 20_000) throw new Error(`collection did not end: ${JSON.stringify(parent)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(most).toBe(2);
    expect(otherStartedAfter).toBeLessThan(5_000);
    // It started while the collection still had entries left to start.
    expect(otherStartedWhile!.queued).toBeGreaterThan(0);
    expect((await view(id)).entries).toMatchObject({ total: 6, completed: 6 });
  });

  test("the parent's event stream has an event at its children's changes, ids rising, and ends with it", async () => {
    const server = gw.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      // A request of its own (metadata off): the files an earlier test made of /long.xml still live,
      // and an identical request's children would be copied from them at once (worker reuse.ts).
      const started = await post('10.0.0.4', {
        collection_url: origin.url('/long.xml'),
        entries: '1-4',
        bundle: 'none',
        metadata: false,
      });
      const id = started.body.data.job_id;
      const stream = await openEvents(base, `/api/v1/jobs/${id}/events`);
      expect(stream.status).toBe(200);
      await stream.ended;
      const views = stream.events.map((e) => JSON.parse(e.data));
      const last = views[views.length - 1];
      expect(last).toMatchObject({ status: 'completed', operation: 'collection', entries: { completed: 4 } });
      // Children completing one after another show as separate events of the parent.
      const completedCounts = new Set(views.map((v) => v.entries.completed));
      expect(completedCounts.size).toBeGreaterThanOrEqual(3);
      const ids = stream.events.map((e) => Number(e.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  test('cancelling the parent cancels its children: nothing more runs and it ends cancelled', async () => {
    // As mp3, a request no earlier test made: its children run rather than being copied (reuse.ts).
    const started = await post('10.0.0.3', { collection_url: origin.url('/long.xml'), bundle: 'none', format: 'mp3' });
    const id = started.body.data.job_id;
    await until('a child runs', async () => (await view(id)).entries.running > 0);
    const bearer = `Bearer ${started.body.data.control_token}`;
    const cancel = await request(gw.app).delete(`/api/v1/jobs/${id}`).set('Authorization', bearer);
    expect(cancel.status).toBe(204);
    const parent = await until('the parent ends', async () => {
      const v = await view(id);
      return v.status !== 'processing' && v.status !== 'queued' && v;
    });
    expect(parent.status).toBe('cancelled');
    const children = (await request(gw.app).get(`/api/v1/jobs/${id}/children`)).body.data.children as {
      status: string;
      job_id: string;
    }[];
    expect(children).toHaveLength(6);
    // Each child is cancelled, or had already completed before the cancel reached it.
    for (const c of children) expect(['cancelled', 'completed']).toContain(c.status);
    expect(children.filter((c) => c.status === 'cancelled').length).toBeGreaterThanOrEqual(4);
    const again = await request(gw.app).delete(`/api/v1/jobs/${id}`).set('Authorization', bearer);
    expect(again.status).toBe(409);
    // The slot is free again.
    expect((await post('10.0.0.3', { collection_url: origin.url('/single.xml'), bundle: 'none' })).status).toBe(202);
  });
});
