// Webhooks end to end: the gateway takes webhook_url and webhook_secret, a real worker (real Redis
// and ffmpeg) runs the job and POSTs the message to a receiver on 127.0.0.1, which checks every
// signature with the docs' own verification code (extracted from docs/api.md and imported as it
// stands). Retries are shortened to 300 ms and the deadline to 1.5 s; the production schedule is
// tested as a pure function in packages/contracts/test/webhooks.test.ts.
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Job, Queue } from 'bullmq';
import request from 'supertest';
import { FsArtifactStore } from '@reelay/artifacts';
import { parseConfig } from '@reelay/config';
import { WEBHOOK_QUEUE } from '@reelay/contracts';
import { createLogger } from '@reelay/observability';
import { startOrigin, testMedia, type Origin } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { buildGateway, type TestGateway } from './helpers.js';

const API_DOC = fileURLToPath(new URL('../../../docs/api.md', import.meta.url));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-webhooks-'));
const prefix = `test-webhooks-${randomBytes(4).toString('hex')}`;
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const DEPLOYMENT_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const OLD_DEPLOYMENT_SECRET = `whsec_${randomBytes(24).toString('base64')}`;

type Behaviour = 'ok' | 'fail' | 'hang' | 'redirect';
interface Delivery {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** What the docs' verifyWebhook said: the event, or its error's message. */
  verified: { event?: { type: string; timestamp: string; data: Record<string, unknown> }; error?: string };
}

let verifyWebhook: (secret: string, headers: http.IncomingHttpHeaders, body: string) => Delivery['verified']['event'];
let origin: Origin;
let gw: TestGateway;
let worker: RunningWorker;
let receiver: http.Server;
let receiverBase: string;
const logs = new PassThrough();
let logText = '';
logs.on('data', (chunk: Buffer) => (logText += chunk.toString('utf8')));
/** Per receiver path: what each attempt gets (the last entry repeats). */
const plans = new Map<string, Behaviour[]>();
const secrets = new Map<string, string>();
const deliveries: Delivery[] = [];
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  // docs/api.md's snippet, byte for byte, as a module.
  const doc = fs.readFileSync(API_DOC, 'utf8');
  const snippet = /<!-- webhook-verify -->\n```js\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!snippet) throw new Error('docs/api.md has no webhook-verify snippet');
  const file = path.join(dataDir, 'verify.mjs');
  fs.writeFileSync(file, snippet);
  ({ verifyWebhook } = (await import(pathToFileURL(file).href)) as { verifyWebhook: typeof verifyWebhook });

  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const route = req.url ?? '/';
      const verified: Delivery['verified'] = {};
      try {
        verified.event = verifyWebhook(secrets.get(route) ?? SECRET, req.headers, body);
      } catch (err) {
        verified.error = (err as Error).message;
      }
      const attempt = deliveries.filter((d) => d.path === route).length;
      deliveries.push({ path: route, headers: req.headers, body, verified });
      const plan = plans.get(route) ?? ['ok'];
      const behaviour = plan[Math.min(attempt, plan.length - 1)];
      if (behaviour === 'hang') return; // never answers
      if (behaviour === 'fail') return void res.writeHead(500).end('no');
      if (behaviour === 'redirect') return void res.writeHead(302, { location: `${receiverBase}/followed` }).end();
      res.writeHead(204).end();
    });
  });
  receiver.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverBase = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}`;

  const media = await testMedia();
  origin = await startOrigin();
  origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
  origin.file('/media/gone.mp4', media.muxedMp4, 'video/mp4');
  const logger = createLogger({ name: 'webhooks-test', level: 'debug', destination: logs });
  gw = await buildGateway({
    env: { DATA_DIR: dataDir, WEBHOOK_SECRET: `${DEPLOYMENT_SECRET} ${OLD_DEPLOYMENT_SECRET}` },
    deps: { artifacts: new FsArtifactStore(dataDir), queuePrefix: prefix, logger },
  });
  const config = parseConfig({
    REDIS_URL: process.env.REDIS_URL,
    EGRESS_ALLOWLIST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'debug',
    WORKER_CONCURRENCY: '1',
    WEBHOOK_SECRET: `${DEPLOYMENT_SECRET} ${OLD_DEPLOYMENT_SECRET}`,
  });
  worker = await startWorker({
    config,
    logger,
    metricsPort: 0,
    prefix,
    dataDir,
    webhookRetryDelayMs: 300,
    webhookTimeoutMs: 1_500,
  });
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await gw?.close();
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => receiver?.close(resolve));
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function sourceUrl(route: string): Promise<string> {
  const extracted = (
    await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url(route) })
      .expect(200)
  ).body.data;
  return extracted.media[0].sources[0].url as string;
}

/** Starts a convert job (mkv) with a webhook to `hook` on the receiver; returns the job id. */
async function startJob(
  hook: string,
  extra: Record<string, unknown> = { webhook_secret: SECRET },
  route = '/media/clip.mp4',
): Promise<string> {
  const url = await sourceUrl(route);
  const res = await request(gw.app)
    .post('/api/v1/download')
    .send({ url, format: 'mkv', webhook_url: receiverBase + hook, ...extra });
  expect(res.status).toBe(202);
  return res.body.data.job_id as string;
}

/** The Job once its webhook is no longer pending (delivered or failed), within 30 s. */
async function settled(id: string): Promise<ShownJob> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const job = (await request(gw.app).get(`/api/v1/jobs/${id}`).expect(200)).body.data;
    if (job.webhook?.status !== 'pending' || Date.now() > deadline) return job;
    await new Promise((r) => setTimeout(r, 100));
  }
}

type ShownJob = Record<string, unknown> & { status: string; error?: unknown; webhook?: { status: string } };

const at = (hook: string) => deliveries.filter((d) => d.path === hook);

test("a completed job's webhook arrives signed, verifies with the docs' code, and the Job shows it delivered", async () => {
  const id = await startJob('/done');
  const job = await settled(id);
  expect(job.webhook).toEqual({ url: `${receiverBase}/done`, status: 'delivered', attempts: 1, last_status: 204 });
  const [delivery] = at('/done');
  expect(delivery.verified.error).toBeUndefined();
  expect(delivery.verified.event).toMatchObject({
    type: 'job.completed',
    data: { id, status: 'completed', artifact: { url: `/api/v1/jobs/${id}/artifact` } },
  });
  expect(delivery.headers['content-type']).toBe('application/json');
  expect(delivery.headers['webhook-id']).toBe(`msg_${id}`);
  expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
  // The message's Job is the Job as GET shows it, without the delivery's own state.
  const { webhook: _, ...shown } = job;
  expect(delivery.verified.event!.data).toEqual(shown);
  // Someone else's secret does not verify it.
  expect(() => verifyWebhook(`whsec_${randomBytes(32).toString('base64')}`, delivery.headers, delivery.body)).toThrow(
    'bad signature',
  );
  expect(() => verifyWebhook(SECRET, delivery.headers, delivery.body.replace('completed', 'failed'))).toThrow(
    'bad signature',
  );
}, 40_000);

test("a failed job's webhook says job.failed, with the job's error", async () => {
  const url = await sourceUrl('/media/gone.mp4');
  origin.status('/media/gone.mp4', 404);
  const res = await request(gw.app)
    .post('/api/v1/download')
    .send({ url, format: 'mkv', webhook_url: `${receiverBase}/failed`, webhook_secret: SECRET })
    .expect(202);
  const job = await settled(res.body.data.job_id);
  expect(job).toMatchObject({ status: 'failed', webhook: { status: 'delivered', attempts: 1 } });
  expect(at('/failed')[0].verified.event).toMatchObject({
    type: 'job.failed',
    data: { status: 'failed', error: job.error },
  });
}, 40_000);

test('a receiver that fails the first attempt gets the same message again, and the Job shows 2 attempts, delivered', async () => {
  plans.set('/flaky', ['fail', 'ok']);
  const job = await settled(await startJob('/flaky'));
  expect(job.webhook).toEqual({ url: `${receiverBase}/flaky`, status: 'delivered', attempts: 2, last_status: 204 });
  const [first, second] = at('/flaky');
  expect(at('/flaky')).toHaveLength(2);
  expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
  expect(second.body).toBe(first.body);
  expect([first.verified.error, second.verified.error]).toEqual([undefined, undefined]);
}, 40_000);

test('a receiver that hangs is cut at the deadline and the delivery retried', async () => {
  plans.set('/hang', ['hang', 'ok']);
  const job = await settled(await startJob('/hang'));
  expect(job.webhook).toEqual({ url: `${receiverBase}/hang`, status: 'delivered', attempts: 2, last_status: 204 });
  expect(at('/hang')).toHaveLength(2);
}, 40_000);

test('a redirect is not followed: it is a failed attempt, and the next one is delivered', async () => {
  plans.set('/moved', ['redirect', 'ok']);
  const job = await settled(await startJob('/moved'));
  expect(job.webhook).toMatchObject({ status: 'delivered', attempts: 2 });
  expect(at('/moved')).toHaveLength(2);
  expect(at('/followed')).toHaveLength(0);
}, 40_000);

test('a receiver that never accepts makes the Job show the webhook failed after every attempt', async () => {
  plans.set('/down', ['fail']);
  const job = await settled(await startJob('/down'));
  expect(job.webhook).toEqual({ url: `${receiverBase}/down`, status: 'failed', attempts: 8, last_status: 500 });
  expect(at('/down')).toHaveLength(8);
}, 40_000);

test("without webhook_secret the deployment's WEBHOOK_SECRET signs, once per secret, so either verifies during a rotation", async () => {
  secrets.set('/deployment', DEPLOYMENT_SECRET);
  await settled(await startJob('/deployment', {}));
  const [delivery] = at('/deployment');
  expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(2);
  expect(verifyWebhook(DEPLOYMENT_SECRET, delivery.headers, delivery.body)).toMatchObject({ type: 'job.completed' });
  expect(verifyWebhook(OLD_DEPLOYMENT_SECRET, delivery.headers, delivery.body)).toMatchObject({
    type: 'job.completed',
  });
}, 40_000);

test("the webhook is part of the request's identity: the same media with another webhook is another job", async () => {
  const url = await sourceUrl('/media/clip.mp4');
  const send = (hook: string) =>
    request(gw.app)
      .post('/api/v1/download')
      .send({ url, format: 'webm', webhook_url: receiverBase + hook, webhook_secret: SECRET })
      .expect(202);
  const a = (await send('/identity-a')).body.data.job_id;
  expect((await send('/identity-a')).body.data.job_id).toBe(a);
  expect((await send('/identity-b')).body.data.job_id).not.toBe(a);
  await Promise.all([settled(a)]);
}, 40_000);

test('bad webhooks are refused at request time, before any job or connection', async () => {
  const url = await sourceUrl('/media/clip.mp4');
  const post = (body: Record<string, unknown>) =>
    request(gw.app)
      .post('/api/v1/download')
      .send({ url, format: 'mkv', ...body });
  const blocked = await post({ webhook_url: 'http://127.0.0.2:9/hook', webhook_secret: SECRET }).expect(403);
  expect(blocked.body.error.code).toBe('url_blocked');
  for (const body of [
    { webhook_url: 'ftp://127.0.0.1/hook', webhook_secret: SECRET },
    { webhook_url: '/relative', webhook_secret: SECRET },
    { webhook_url: `${receiverBase}/x`, webhook_secret: 'whsec_c2hvcnQ=' }, // 5 bytes
    { webhook_url: `${receiverBase}/x`, webhook_secret: 'not-a-secret' },
    { webhook_secret: SECRET },
  ]) {
    const res = await post(body).expect(400);
    expect(res.body.error.code).toBe('invalid_request');
    // A secret, even a malformed one, is never repeated in an answer.
    expect(JSON.stringify(res.body)).not.toContain(String(body.webhook_secret));
  }
  // A direct stream has no job to announce.
  const direct = await request(gw.app)
    .post('/api/v1/download')
    .send({ url, webhook_url: `${receiverBase}/x`, webhook_secret: SECRET })
    .expect(400);
  expect(direct.body.error.code).toBe('invalid_request');
});

test('without any secret a webhook is 400: a gateway with no WEBHOOK_SECRET and a request with no webhook_secret', async () => {
  const bare = await buildGateway({ deps: { queuePrefix: `${prefix}-bare` } });
  try {
    const res = await request(bare.app)
      .post('/api/v1/download')
      .send({ url: origin.url('/media/clip.mp4'), format: 'mkv', webhook_url: `${receiverBase}/x` })
      .expect(400);
    expect(res.body.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('WEBHOOK_SECRET'),
    });
  } finally {
    await bare.close();
  }
});

test('no secret appears in a Job view or in any log line of the gateway or the worker', async () => {
  const id = await startJob('/quiet');
  const job = await settled(id);
  for (const secret of [SECRET, DEPLOYMENT_SECRET, OLD_DEPLOYMENT_SECRET]) {
    expect(JSON.stringify(job)).not.toContain(secret);
    expect(JSON.stringify(job)).not.toContain(secret.slice('whsec_'.length));
    expect(logText).not.toContain(secret.slice('whsec_'.length));
  }
  expect(logText).toContain('webhook delivered');
  // Delivered, no attempt follows: the secret has left Redis too.
  const deliveries = new Queue(WEBHOOK_QUEUE, { connection: gw.redis, prefix });
  try {
    const stored = await Job.fromId(deliveries, id);
    expect(stored?.data).toMatchObject({ job_id: id, url: `${receiverBase}/quiet` });
    expect(stored?.data).not.toHaveProperty('secret');
  } finally {
    await deliveries.close();
  }
}, 40_000);
