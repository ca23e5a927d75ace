// A cancel that reaches Redis before a worker starts the job (the gateway found it queued, but a
// worker took it before it could be removed; or the worker was down and the job came back): the
// worker reads the cancel key when it starts the job and ends it as cancelled before any work — no
// ffmpeg, no temp folder, no retry — and a job finished that way shows status cancelled.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { decodeJobError, jobSignalKey, jobView } from '@reelay/contracts';
import { payload, sampleSum, useWorkerStack } from './helpers.js';
import { testRedisClient } from '@reelay/testkit';
import type { RedisClient } from '@reelay/redis';

const stack = useWorkerStack('cancel-start');
let redis: RedisClient;

beforeAll(() => {
  redis = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  await redis?.quit();
});

test('a job whose cancel key is set before it starts fails at once as cancelled, unretried, with nothing run or left', async () => {
  const job = payload([{ url: stack.origin.url('/muxed.mp4'), stream_profile: 'muxed_progressive' }], {
    format: 'mkv',
  });
  await redis.set(jobSignalKey('cancel', job.id), String(Date.now()), 'EX', 60);
  await stack.queue.add(job, { attempts: 3 });
  const done = await stack.queue.finished(job.id);
  expect(await stack.queue.state(job.id)).toBe('failed');
  expect(done.attemptsMade).toBe(1); // unrecoverable: the two attempts left are not used
  expect(decodeJobError(done.failedReason).code).toBe('cancelled');
  expect(jobView(job.id, done, 'failed').status).toBe('cancelled');
  // The origin was never asked for the media, and no temp folder of the job remains.
  expect(stack.origin.hits.get('/muxed.mp4') ?? 0).toBe(0);
  const tmp = path.join(stack.dataDir, 'tmp');
  expect(fs.existsSync(tmp) ? fs.readdirSync(tmp).filter((n) => n.startsWith(job.id)) : []).toEqual([]);
  const metrics = await (await fetch(`${stack.worker.metricsUrl}/metrics`)).text();
  expect(sampleSum(metrics, 'reelay_jobs_total', { outcome: 'cancelled' })).toBe(1);
});
