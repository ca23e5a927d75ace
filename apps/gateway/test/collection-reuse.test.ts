// A repeated feed download reuses what the first made (DESIGN.md "Collections", reuse): the same
// 12-entry podcast feed converted to mp3 and bundled, twice, through a real gateway, worker, Redis and
// ffmpeg. The second run's children complete from the first run's living files (copies), and its
// ZIP from the first ZIP, so no ffmpeg runs and the origin serves no media at all; it takes a fraction
// of the time. Ids stay each run's own, another client's too.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import request from 'supertest';
import { FsArtifactStore } from '@reelay/artifacts';
import { parseConfig } from '@reelay/config';
import { createLogger } from '@reelay/observability';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { buildGateway, type TestGateway } from './helpers.js';

const ENTRIES = 12;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-reuse-'));
const artifacts = new FsArtifactStore(dataDir);
const prefix = `test-reuse-${randomBytes(4).toString('hex')}`;
let origin: Origin;
let media: TestMedia;
let gw: TestGateway;
let worker: RunningWorker;
/** Requests for the episodes' media files, as the origin saw them. */
const mediaRequests = () =>
  [...origin.hits].filter(([at]) => at.startsWith('/audio/')).reduce((sum, [, n]) => sum + n, 0);
/** The worker's log messages. */
const messages: string[] = [];

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  for (let n = 1; n <= ENTRIES; n++) origin.file(`/audio/${n}.m4a`, media.audioOnlyM4a, 'audio/mp4');
  const items = Array.from(
    { length: ENTRIES },
    (_, i) =>
      `<item><title>Tone ${i + 1}</title><guid isPermaLink="false">tone-${i + 1}</guid><enclosure url="${origin.url(`/audio/${i + 1}.m4a`)}" type="audio/mp4"/></item>`,
  );
  origin.body(
    '/tones.xml',
    `<?xml version="1.0"?><rss version="2.0"><channel><title>Tones Weekly</title>${items.join('')}</channel></rss>`,
    'application/rss+xml',
  );
  gw = await buildGateway({
    env: { DATA_DIR: dataDir, MAX_ACTIVE_JOBS_PER_CLIENT: '50', TRUST_PROXY: 'true' },
    deps: { artifacts, queuePrefix: prefix },
  });
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
        messages.push((JSON.parse(line) as { msg: string }).msg);
      callback();
    },
  });
  worker = await startWorker({
    config: parseConfig({
      REDIS_URL: process.env.REDIS_URL,
      EGRESS_ALLOWLIST: '127.0.0.1',
      DATA_DIR: dataDir,
      WORKER_CONCURRENCY: '2',
    }),
    logger: createLogger({ name: 'reuse-worker', level: 'info', destination }),
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

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, read by the matchers
type Json = Record<string, any>;

/** Downloads the feed as mp3 in a ZIP for `client`; resolves the parent and its children once it ended. */
async function run(client: string): Promise<{ parent: Json; children: Json[]; ms: number }> {
  const started = Date.now();
  const res = await request(gw.app)
    .post('/api/v1/download')
    .set('X-Forwarded-For', client)
    .send({ collection_url: origin.url('/tones.xml'), format: 'mp3' });
  expect(res.status).toBe(202);
  const id = res.body.data.job_id as string;
  const deadline = Date.now() + 60_000;
  let parent: Json;
  for (;;) {
    parent = (await request(gw.app).get(`/api/v1/jobs/${id}`).expect(200)).body.data;
    if (['completed', 'failed', 'cancelled'].includes(parent.status)) break;
    if (Date.now() > deadline) throw new Error(`the collection did not end: ${JSON.stringify(parent)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const ms = Date.now() - started;
  const children = (await request(gw.app).get(`/api/v1/jobs/${id}/children`).expect(200)).body.data.children as Json[];
  return { parent, children, ms };
}

const count = (message: string) => messages.filter((m) => m === message).length;
const sha = (id: string) =>
  createHash('sha256')
    .update(fs.readFileSync(path.join(dataDir, 'artifacts', `${id}.bin`)))
    .digest('hex');

test('the same 12-entry feed again completes from the living files: no ffmpeg, no media fetched, a fraction of the time', async () => {
  const first = await run('10.1.0.1');
  expect(first.parent).toMatchObject({ status: 'completed', entries: { total: ENTRIES, completed: ENTRIES } });
  expect(count('job output stored')).toBe(ENTRIES);
  const fetched = mediaRequests();
  expect(fetched).toBeGreaterThanOrEqual(ENTRIES);

  const second = await run('10.1.0.1');
  expect(second.parent).toMatchObject({ status: 'completed', entries: { total: ENTRIES, completed: ENTRIES } });
  // Nothing was made again: no job ran ffmpeg, the origin was not asked for a byte of media.
  expect(count('job output stored')).toBe(ENTRIES);
  expect(count('job output reused: the file of an identical request')).toBe(ENTRIES);
  expect(count('collection bundle reused: the same entries')).toBe(1);
  expect(mediaRequests()).toBe(fetched);
  // Each run has jobs and files of its own, with the same bytes.
  expect(second.parent.id).not.toBe(first.parent.id);
  for (const [i, child] of second.children.entries()) {
    expect(child).toMatchObject({ index: i + 1, status: 'completed' });
    expect(child.job_id).not.toBe(first.children[i].job_id);
    expect(sha(child.job_id)).toBe(sha(first.children[i].job_id));
  }
  expect(second.parent.artifact).toMatchObject({ filename: 'Tones Weekly.zip', size: first.parent.artifact.size });
  expect(sha(second.parent.id)).toBe(sha(first.parent.id));
  // What a person notices: the second run takes a fraction of the first.
  console.log(`collection of ${ENTRIES}: first run ${first.ms} ms, second ${second.ms} ms`);
  expect(second.ms).toBeLessThan(first.ms * 0.6);

  // Another client asking the same gets its own jobs (ids are capabilities), built from the same files.
  const other = await run('10.2.0.2');
  expect(other.parent.id).not.toBe(second.parent.id);
  expect(new Set(other.children.map((c) => c.job_id)).size).toBe(ENTRIES);
  for (const child of other.children) expect(second.children.map((c) => c.job_id)).not.toContain(child.job_id);
  expect(count('job output stored')).toBe(ENTRIES);
  expect(mediaRequests()).toBe(fetched);
}, 120_000);
