// A Redis outage longer than the job lock: BullMQ gives the running job out again, and the job must
// still complete exactly once (one completion in Redis, one in the metrics), not once per run.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { Queue } from 'bullmq';
import { DOWNLOAD_QUEUE } from '@reelay/contracts';
import { freePort, startOrigin, testMedia, testRedisClient, type Origin, type TestMedia } from '@reelay/testkit';
import type { RunningWorker } from '../src/worker.js';
import { payload, sample, sleep, startTestWorker, tempDataDir, trickle, until } from './helpers.js';

const PREFIX = `reelay-test-outage-${process.pid}`;
const LOCK_MS = 1500;
let media: TestMedia;
let origin: Origin;
let port: number;
let redis: ChildProcess;
const redisDir = tempDataDir('outage-redis');
const dataDirs = [tempDataDir('outage-a'), tempDataDir('outage-b')];
const workers: RunningWorker[] = [];
let pace = 0;

/** redis-server with every write fsynced to its AOF, so a SIGKILL loses nothing; same port each time. */
async function startRedisAt(): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--dir',
      redisDir,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${out}`)));
  });
  child.stdout!.resume();
  return child;
}

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  // The job's input arrives slowly while `pace` is 0, so the job is mid-run when Redis goes away.
  trickle(origin, '/slow.mp4', media.muxedMp4, 'video/mp4', () => pace);
  port = await freePort();
  redis = await startRedisAt();
  const env = { REDIS_URL: `redis://127.0.0.1:${port}`, WORKER_CONCURRENCY: '1' };
  // Two workers on separate data folders, as on two hosts: the re-run may land on either.
  for (const dataDir of dataDirs)
    workers.push(await startTestWorker({ prefix: PREFIX, dataDir, env, lockDuration: LOCK_MS, stalledInterval: 1000 }));
});

afterAll(async () => {
  for (const w of workers) await w.stop().catch(() => undefined);
  redis?.kill('SIGKILL');
  await origin?.close();
  for (const dir of [redisDir, ...dataDirs]) fs.rmSync(dir, { recursive: true, force: true });
});

test('a job running through a Redis outage longer than its lock completes exactly once', async () => {
  const client = testRedisClient(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: null });
  client.on('error', () => {});
  const queue = new Queue(DOWNLOAD_QUEUE, { connection: client, prefix: PREFIX });
  queue.on('error', () => {});
  try {
    const job = payload(
      [{ url: origin.url('/slow.mp4'), stream_profile: 'muxed_progressive', codecs: 'avc1.42c00d,mp4a.40.2' }],
      { operation: 'convert', format: 'mkv', duration: 2 },
    );
    await queue.add('download', job, { jobId: job.id, attempts: 1 });
    await until(async () => (await queue.getJobState(job.id)) === 'active', 10_000, 'the job to start');
    await sleep(500); // ffmpeg is reading the slow input

    // The outage: Redis is killed and comes back on the same port after 2 lock durations.
    redis.kill('SIGKILL');
    await sleep(2 * LOCK_MS + 500);
    redis = await startRedisAt();
    await sleep(2 * LOCK_MS); // the stalled check hands the job out again
    pace = Infinity;

    await until(
      async () => (await queue.getJobState(job.id).catch(() => 'unknown')) === 'completed',
      20_000,
      'the job to complete',
    ).catch(async (err: Error) => {
      const j = await queue.getJob(job.id);
      throw new Error(
        `${err.message}: state ${await queue.getJobState(job.id)}, reason ${j?.failedReason}, stalled ${j?.stalledCounter}, ats ${j?.attemptsStarted}`,
      );
    });
    await sleep(1000); // let any other run of the job finish or give up

    // Redis's own record: one 'completed' event for this job in the queue's event stream.
    const events = await client.xrange(`${PREFIX}:${DOWNLOAD_QUEUE}:events`, '-', '+');
    const completions = events.filter(
      ([, fields]) =>
        fields[fields.indexOf('event') + 1] === 'completed' && fields[fields.indexOf('jobId') + 1] === job.id,
    );
    expect(completions).toHaveLength(1);
    // The workers' metrics agree, and the job was really started more than once.
    let completedCount = 0;
    for (const w of workers) {
      const text = await (await fetch(`${w.metricsUrl}/metrics`)).text();
      completedCount += sample(text, 'reelay_jobs_total', { operation: 'convert', outcome: 'completed' }) ?? 0;
    }
    expect(completedCount).toBe(1);
    // Each worker counted what its BullMQ workers reported while Redis was gone, for every queue it
    // takes jobs from (the ReelayQueueWorkerFailing alert reads this counter).
    for (const w of workers) {
      const text = await (await fetch(`${w.metricsUrl}/metrics`)).text();
      for (const queue of ['downloads', 'webhooks', 'collections'])
        expect({ queue, errors: sample(text, 'reelay_queue_worker_errors_total', { queue }) }).toEqual({
          queue,
          errors: expect.any(Number),
        });
      expect(sample(text, 'reelay_queue_worker_errors_total', { queue: 'downloads' })).toBeGreaterThan(0);
    }
    const started = Number(await client.hget(`${PREFIX}:${DOWNLOAD_QUEUE}:${job.id}`, 'ats'));
    expect(started).toBeGreaterThanOrEqual(2);
  } finally {
    await queue.close();
    client.disconnect();
  }
}, 60_000);
