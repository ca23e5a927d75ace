// Nothing of a collection is lost when a worker dies mid-collection: the built worker process (short
// BullMQ lock timings) is SIGKILLed while it runs one of the collection's children, another process
// takes over, and the parent still completes with every entry, each child run to the end.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { FsArtifactStore } from '@reelay/artifacts';
import { serveFile, startOrigin, testMedia, type Origin } from '@reelay/testkit';
import { buildGateway, type TestGateway } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ENTRY = fileURLToPath(new URL('../../worker/test/fixtures/worker-process.mjs', import.meta.url));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-collkill-'));
const prefix = `test-collkill-${randomBytes(4).toString('hex')}`;
const procs = new Set<ChildProcess>();
let origin: Origin;
let gw: TestGateway;

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await fn();
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function spawnWorker(): Promise<ChildProcess> {
  const env = {
    PATH: process.env.PATH,
    REDIS_URL: process.env.REDIS_URL,
    DATA_DIR: dataDir,
    EGRESS_ALLOWLIST: '127.0.0.1',
    LOG_LEVEL: 'info',
    WORKER_CONCURRENCY: '2',
  };
  const proc = spawn(
    process.execPath,
    [ENTRY, JSON.stringify({ prefix, metricsPort: 0, lockDuration: 1_500, stalledInterval: 1_000 })],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  procs.add(proc);
  proc.once('exit', () => procs.delete(proc));
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  proc.stderr!.resume();
  await until(
    'the worker process to start',
    async () => out.includes('"worker started"') || proc.exitCode !== null,
    15_000,
  );
  if (proc.exitCode !== null) throw new Error(`the worker exited with ${proc.exitCode}`);
  return proc;
}

beforeAll(async () => {
  const build = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'apps/worker/tsconfig.json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`apps/worker does not build:\n${build.stdout}${build.stderr}`);
  const media = await testMedia();
  origin = await startOrigin();
  const size = fs.statSync(media.audioOnlyM4a).size;
  for (let n = 1; n <= 4; n++)
    origin.route(`/slow/${n}.m4a`, (req, res) =>
      serveFile(req, res, media.audioOnlyM4a, 'audio/mp4', {}, Math.ceil(size / 1.5)),
    );
  const items = [1, 2, 3, 4].map(
    (n) =>
      `<item><title>Part ${n}</title><guid isPermaLink="false">part-${n}</guid><enclosure url="${origin.url(`/slow/${n}.m4a`)}" length="1000" type="audio/mp4"/></item>`,
  );
  origin.body(
    '/feed.xml',
    `<?xml version="1.0"?><rss version="2.0"><channel><title>Survivor</title>${items.join('')}</channel></rss>`,
    'application/rss+xml',
  );
  gw = await buildGateway({
    env: { DATA_DIR: dataDir, COLLECTION_CONCURRENCY: '2' },
    deps: { artifacts: new FsArtifactStore(dataDir), queuePrefix: prefix },
  });
}, 60_000);

afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await gw?.close();
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a worker SIGKILLed mid-collection loses nothing: another process finishes every child and the parent completes', async () => {
  const first = await spawnWorker();
  const started = await request(gw.app)
    .post('/api/v1/download')
    .send({ collection_url: origin.url('/feed.xml'), bundle: 'none' });
  expect(started.status).toBe(202);
  const id = started.body.data.job_id as string;
  await until(
    'a child to run',
    async () => (await request(gw.app).get(`/api/v1/jobs/${id}`)).body.data.entries.running > 0,
  );
  const exited = new Promise((resolve) => first.once('exit', resolve));
  first.kill('SIGKILL');
  await exited;
  await spawnWorker();
  const parent = await until(
    'the parent to end',
    async () => {
      const v = (await request(gw.app).get(`/api/v1/jobs/${id}`)).body.data;
      return ['completed', 'failed', 'cancelled'].includes(v.status) && v;
    },
    40_000,
  );
  expect(parent).toMatchObject({ status: 'completed', entries: { total: 4, completed: 4, failed: 0 } });
  expect(parent.partial).toBeUndefined();
}, 90_000);
