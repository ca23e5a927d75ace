// /readyz from the workers' heartbeats: no workers is not ready (503, saying so: jobs would wait
// forever), workers that all cannot run ffmpeg is not ready, and one healthy worker among broken ones is ready.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createLogger } from '@reelay/observability';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { buildGateway, type TestGateway } from './helpers.js';

let gw: TestGateway;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-readiness-'));
const logger = createLogger({ name: 'worker-test', level: 'silent' });

beforeAll(async () => {
  gw = await buildGateway({ env: { DATA_DIR: dataDir } });
});

afterAll(async () => {
  await gw.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const start = (env: { FFMPEG_PATH?: string } = {}): Promise<RunningWorker> =>
  startWorker({ config: { ...gw.config, ...env }, logger, metricsPort: 0, dataDir, prefix: gw.queue.opts.prefix });

const NO_WORKER = {
  status: 'not_ready',
  redis: 'ok',
  worker_health: { healthy: 0, unhealthy: 0 },
  reason: expect.stringMatching(/^No worker has sent a heartbeat in the last 30 s/),
};

test('readyz is 503 while every worker with a heartbeat cannot run ffmpeg, and ready again once one can', async () => {
  expect((await request(gw.app).get('/readyz').expect(503)).body).toMatchObject(NO_WORKER);
  const broken = await start({ FFMPEG_PATH: '/nonexistent' });
  let healthy: RunningWorker | undefined;
  try {
    expect((await request(gw.app).get('/readyz').expect(503)).body).toMatchObject({
      status: 'not_ready',
      redis: 'ok',
      worker_health: { healthy: 0, unhealthy: 1 },
      reason: expect.stringContaining('cannot run ffmpeg'),
    });
    healthy = await start();
    const ready = (await request(gw.app).get('/readyz').expect(200)).body;
    expect(ready).toMatchObject({ status: 'ready', worker_health: { healthy: 1, unhealthy: 1 } });
    expect(ready.reason).toBeUndefined();
  } finally {
    await healthy?.stop();
    await broken.stop();
  }
  expect((await request(gw.app).get('/readyz').expect(503)).body).toMatchObject(NO_WORKER);
});

test('the Readiness schema in the OpenAPI document describes worker_health', async () => {
  const doc = (await request(gw.app).get('/api/openapi.json').expect(200)).body;
  expect(Object.keys(doc.components.schemas.Readiness.properties)).toEqual(
    expect.arrayContaining(['workers', 'worker_health', 'reason']),
  );
});
