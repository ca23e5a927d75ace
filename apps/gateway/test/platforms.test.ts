import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createLogger } from '@reelay/observability';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { buildGateway, type TestGateway } from './helpers.js';

let gw: TestGateway;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-platforms-'));

beforeAll(async () => {
  gw = await buildGateway({ env: { DATA_DIR: dataDir } });
});

afterAll(async () => {
  await gw.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('GET /api/v1/platforms', () => {
  test('lists every registered platform with its patterns and kinds, generated from the registry', async () => {
    const res = await request(gw.app).get('/api/v1/platforms').expect(200);
    const names = res.body.data.platforms.map((p: { platform: string }) => p.platform);
    expect(names).toEqual(
      expect.arrayContaining(['bluesky', 'mastodon', 'peertube', 'reddit', 'x', 'vimeo', 'streamable', 'dailymotion']),
    );
    const reddit = res.body.data.platforms.find((p: { platform: string }) => p.platform === 'reddit');
    // The patterns travel as strings; a client compiles them and must get the registry's answers.
    const listed = (url: string) => reddit.patterns.some((p: string) => new RegExp(p).test(url));
    expect(listed('https://www.reddit.com/r/videos/comments/abc123/some_title/')).toBe(true);
    expect(listed('https://v.redd.it/abc123')).toBe(true);
    expect(listed('https://notreddit.com/r/videos/comments/abc123/')).toBe(false);
    expect(listed('https://www.reddit.com/r/videos/')).toBe(false);
    expect(reddit.kinds).toEqual(expect.arrayContaining(['video', 'gallery']));
    expect(reddit.extractor).toBe('reddit');
    expect(res.body.data.generic).toEqual(['hls_manifest', 'dash_manifest', 'feed', 'direct_file', 'html_page']);
  });

  test('is described in the OpenAPI document', async () => {
    const doc = (await request(gw.app).get('/api/openapi.json').expect(200)).body;
    expect(doc.paths['/api/v1/platforms'].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/PlatformsEnvelope',
    });
  });
});

describe('readiness', () => {
  test('readyz says how many workers are connected to the queue', async () => {
    expect((await request(gw.app).get('/readyz').expect(503)).body).toMatchObject({
      status: 'not_ready',
      redis: 'ok',
      workers: 0,
    });
    const logger = createLogger({ name: 'worker-test', level: 'silent' });
    const worker: RunningWorker = await startWorker({
      config: gw.config,
      logger,
      metricsPort: 0,
      dataDir,
      prefix: gw.queue.opts.prefix,
    });
    try {
      const deadline = Date.now() + 5_000;
      let workers = 0;
      while (workers === 0 && Date.now() < deadline) {
        workers = (await request(gw.app).get('/readyz')).body.workers;
        if (!workers) await new Promise((r) => setTimeout(r, 100));
      }
      expect(workers).toBe(1);
    } finally {
      await worker.stop();
    }
  });
});
