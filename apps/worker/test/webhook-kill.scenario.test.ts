// Webhook deliveries survive a killed worker: the built worker process (test/fixtures/worker-process.mjs,
// short BullMQ lock timings) is SIGKILLed between two attempts of a delivery, or during one, and
// another process sends it. The job and its delivery are added as the gateway adds them (one flow);
// the receiver on 127.0.0.1 checks the signatures with node:crypto on its own.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { FlowProducer, Job, Queue } from 'bullmq';
import { DOWNLOAD_QUEUE, WEBHOOK_ATTEMPTS, WEBHOOK_QUEUE, type WebhookJob } from '@reelay/contracts';
import { startOrigin, testMedia, testRedisClient, type Origin } from '@reelay/testkit';
import { payload, serveTestMedia, tempDataDir, until } from './helpers.js';
import type { RedisClient } from '@reelay/redis';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ENTRY = fileURLToPath(new URL('./fixtures/worker-process.mjs', import.meta.url));
const PREFIX = `reelay-test-webhook-kill-${process.pid}`;
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
let origin: Origin;
let dataDir: string;
let connection: RedisClient;
let flows: FlowProducer;
let webhooks: Queue;
let receiver: http.Server;
let receiverBase: string;
const children = new Set<ChildProcess>();
const sockets = new Set<net.Socket>();
const received: { path: string; id: string; body: string; signed: boolean }[] = [];
const plans = new Map<string, ('fail' | 'hang' | 'ok')[]>();

beforeAll(async () => {
  const build = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'apps/worker/tsconfig.json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`apps/worker does not build:\n${build.stdout}${build.stderr}`);
  origin = await startOrigin();
  serveTestMedia(origin, await testMedia());
  dataDir = tempDataDir('webhook-kill');
  connection = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
  flows = new FlowProducer({ connection, prefix: PREFIX });
  webhooks = new Queue(WEBHOOK_QUEUE, { connection, prefix: PREFIX });
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id']);
      const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
      const expected = `v1,${createHmac('sha256', key)
        .update(`${id}.${String(req.headers['webhook-timestamp'])}.${body}`)
        .digest('base64')}`;
      const route = req.url ?? '/';
      const attempt = received.filter((r) => r.path === route).length;
      received.push({
        path: route,
        id,
        body,
        signed: String(req.headers['webhook-signature']).split(' ').includes(expected),
      });
      const plan = plans.get(route) ?? ['ok'];
      const behaviour = plan[Math.min(attempt, plan.length - 1)];
      if (behaviour === 'hang') return;
      res.writeHead(behaviour === 'fail' ? 503 : 200).end();
    });
  });
  receiver.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverBase = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => receiver?.close(resolve));
  await webhooks?.obliterate({ force: true }).catch(() => undefined);
  await new Queue(DOWNLOAD_QUEUE, { connection, prefix: PREFIX }).obliterate({ force: true }).catch(() => undefined);
  await webhooks?.close();
  await flows?.close();
  await connection?.quit();
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A worker process; resolves once it logged 'worker started'. */
async function spawnWorker(settings: Record<string, number>): Promise<ChildProcess> {
  const env = {
    PATH: process.env.PATH,
    REDIS_URL: process.env.REDIS_URL,
    DATA_DIR: dataDir,
    EGRESS_ALLOWLIST: '127.0.0.1',
    LOG_LEVEL: 'info',
    WORKER_CONCURRENCY: '1',
  };
  const proc = spawn(
    process.execPath,
    [
      ENTRY,
      JSON.stringify({ prefix: PREFIX, metricsPort: 0, lockDuration: 1_500, stalledInterval: 1_000, ...settings }),
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  proc.stderr!.resume();
  await until(() => out.includes('"worker started"') || proc.exitCode !== null, 15_000, 'the worker process to start');
  if (proc.exitCode !== null) throw new Error(`the worker exited with ${proc.exitCode}`);
  return proc;
}

async function kill(proc: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGKILL');
  await exited;
}

/** A convert job and its delivery, as the gateway's DownloadService adds them. */
async function addJobWithWebhook(hook: string): Promise<string> {
  const job = payload([{ url: origin.url('/muxed.mp4'), stream_profile: 'muxed_progressive' }], {
    format: 'mkv',
    webhook_url: receiverBase + hook,
  });
  const delivery: WebhookJob = { job_id: job.id, url: receiverBase + hook, secret: SECRET };
  await flows.add({
    name: 'deliver',
    queueName: WEBHOOK_QUEUE,
    data: delivery,
    opts: { jobId: job.id, attempts: WEBHOOK_ATTEMPTS, backoff: { type: 'webhook' } },
    children: [
      {
        name: 'download',
        queueName: DOWNLOAD_QUEUE,
        data: job,
        opts: { jobId: job.id, attempts: 1, ignoreDependencyOnFailure: true },
      },
    ],
  });
  return job.id;
}

async function delivered(id: string, timeoutMs: number): Promise<Job> {
  await until(async () => (await webhooks.getJobState(id)) === 'completed', timeoutMs, `delivery ${id} to complete`);
  return (await Job.fromId(webhooks, id))!;
}

test('a worker killed between two attempts of a delivery loses nothing: another process sends the retry, same webhook-id and body', async () => {
  plans.set('/between', ['fail', 'ok']);
  const first = await spawnWorker({ webhookRetryDelayMs: 3_000 });
  const id = await addJobWithWebhook('/between');
  await until(
    async () => received.some((r) => r.path === '/between') && (await webhooks.getJobState(id)) === 'delayed',
    30_000,
    'the first attempt to fail',
  );
  await kill(first);
  const second = await spawnWorker({ webhookRetryDelayMs: 3_000 });
  const job = await delivered(id, 20_000);
  const attempts = received.filter((r) => r.path === '/between');
  expect(attempts).toHaveLength(2);
  expect(attempts.map((a) => a.signed)).toEqual([true, true]);
  expect(attempts[1].id).toBe(`msg_${id}`);
  expect(attempts[1].id).toBe(attempts[0].id);
  expect(attempts[1].body).toBe(attempts[0].body);
  expect(JSON.parse(attempts[1].body)).toMatchObject({ type: 'job.completed', data: { id, status: 'completed' } });
  expect(job.attemptsMade).toBe(2);
  await kill(second);
}, 90_000);

test('a worker killed during an attempt loses nothing: once its lock lapses another process sends the delivery', async () => {
  plans.set('/during', ['hang', 'ok']);
  const first = await spawnWorker({ webhookTimeoutMs: 60_000 });
  const id = await addJobWithWebhook('/during');
  await until(() => received.some((r) => r.path === '/during'), 30_000, 'the first attempt to reach the receiver');
  await kill(first);
  const second = await spawnWorker({});
  await delivered(id, 20_000);
  const attempts = received.filter((r) => r.path === '/during');
  expect(attempts).toHaveLength(2);
  expect(attempts.every((a) => a.signed && a.id === `msg_${id}`)).toBe(true);
  expect(attempts[1].body).toBe(attempts[0].body);
  await kill(second);
}, 90_000);
