// The egress guard at delivery time: a worker whose EGRESS_ALLOWLIST does not list 127.0.0.1 refuses
// every attempt to a receiver there before connecting (the receiver counts no connection at all), the
// delivery ends failed with last_error url_blocked, and its secret then leaves Redis.
import http from 'node:http';
import type net from 'node:net';
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { FlowProducer, Job, Queue } from 'bullmq';
import { DOWNLOAD_QUEUE, WEBHOOK_ATTEMPTS, WEBHOOK_QUEUE, type WebhookJob } from '@reelay/contracts';
import type { RunningWorker } from '../src/index.js';
import { payload, sample, startTestWorker, tempDataDir, until } from './helpers.js';
import { testRedisClient } from '@reelay/testkit';
import type { RedisClient } from '@reelay/redis';

const prefix = `test-webhook-guard-${randomBytes(4).toString('hex')}`;
const dataDir = tempDataDir('webhook-guard');
let connection: RedisClient;
let flows: FlowProducer;
let webhooks: Queue;
let downloads: Queue;
let worker: RunningWorker;
let receiver: http.Server;
let port: number;
let connections = 0;

beforeAll(async () => {
  receiver = http.createServer((_req, res) => res.writeHead(204).end());
  receiver.on('connection', () => connections++);
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as net.AddressInfo).port;
  connection = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
  flows = new FlowProducer({ connection, prefix });
  webhooks = new Queue(WEBHOOK_QUEUE, { connection, prefix });
  downloads = new Queue(DOWNLOAD_QUEUE, { connection, prefix });
  worker = await startTestWorker({ prefix, dataDir, env: { EGRESS_ALLOWLIST: '' }, webhookRetryDelayMs: 20 });
});

afterAll(async () => {
  await worker?.stop();
  for (const q of [webhooks, downloads]) await q?.obliterate({ force: true }).catch(() => undefined);
  await webhooks?.close();
  await downloads?.close();
  await flows?.close();
  await connection?.quit();
  await new Promise((resolve) => receiver?.close(resolve));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a webhook URL the guard refuses at delivery is never connected to, and the delivery fails with url_blocked after every attempt', async () => {
  // The job itself fails too (its input on 127.0.0.1 is refused alike): its webhook says job.failed.
  const job = payload([{ url: `http://127.0.0.1:${port}/in.mp4`, stream_profile: 'muxed_progressive' }], {
    format: 'mkv',
    webhook_url: `http://127.0.0.1:${port}/hook`,
  });
  const delivery: WebhookJob = {
    job_id: job.id,
    url: `http://127.0.0.1:${port}/hook`,
    secret: `whsec_${randomBytes(32).toString('base64')}`,
  };
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
  await until(async () => (await webhooks.getJobState(job.id)) === 'failed', 20_000, 'the delivery to fail for good');
  const done = (await Job.fromId(webhooks, job.id))!;
  expect(await downloads.getJobState(job.id)).toBe('failed');
  expect(done.attemptsMade).toBe(WEBHOOK_ATTEMPTS);
  expect(done.progress).toEqual({ last_error: 'url_blocked' });
  expect(connections).toBe(0);
  // The message was made (job.failed), and the secret is gone from Redis now that no attempt follows.
  expect(JSON.parse((done.data as WebhookJob).message!.body)).toMatchObject({
    type: 'job.failed',
    data: { id: job.id, status: 'failed' },
  });
  expect(done.data).not.toHaveProperty('secret');
  const metrics = await (await fetch(`${worker.metricsUrl}/metrics`)).text();
  expect(sample(metrics, 'reelay_webhook_attempts_total', { outcome: 'retried' })).toBe(WEBHOOK_ATTEMPTS - 1);
  expect(sample(metrics, 'reelay_webhook_attempts_total', { outcome: 'failed' })).toBe(1);
});
