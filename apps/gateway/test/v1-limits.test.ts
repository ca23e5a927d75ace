// Surface B's limits per client address, on two gateway replicas sharing one Redis and one queue:
// RATE_LIMIT_V1_PER_MIN for extract and download, MAX_ACTIVE_JOBS_PER_CLIENT for live jobs.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { Worker, type Job } from 'bullmq';
import { DOWNLOAD_QUEUE, type JobPayload } from '@reelay/contracts';
import { startOrigin, testMedia, type Origin } from '@reelay/testkit';
import { eventually, expectError, uniqueIp } from './account-helpers.js';
import { buildGateway, testRedis, type TestGateway } from './helpers.js';
import { duplicateRedis } from '@reelay/redis';

let origin: Origin;
const open: TestGateway[] = [];
const prefix = `{test-v1-${randomBytes(4).toString('hex')}}`;

/** Replicas trust X-Forwarded-For (so each test is a client address of its own) and share one queue. */
async function gateway(env: Record<string, string>): Promise<TestGateway> {
  const built = await buildGateway({ env: { TRUST_PROXY: 'true', ...env }, deps: { queuePrefix: prefix } });
  open.push(built);
  return built;
}

beforeAll(async () => {
  const media = await testMedia();
  origin = await startOrigin();
  origin.file('/clip.mp4', media.muxedMp4, 'video/mp4');
});

afterAll(async () => {
  await Promise.all(open.map((g) => g.close()));
  await origin.close();
});

const limitHeaders = (res: request.Response) => ({
  limit: res.headers['ratelimit-limit'],
  remaining: res.headers['ratelimit-remaining'],
});
const extract = (gw: TestGateway, ip: string) =>
  request(gw.app)
    .post('/api/v1/extract')
    .set('X-Forwarded-For', ip)
    .send({ url: origin.url('/clip.mp4') });
/** A conversion job; each filename is another request, so another job. */
const convert = (gw: TestGateway, ip: string, filename: string) =>
  request(gw.app)
    .post('/api/v1/download')
    .set('X-Forwarded-For', ip)
    .send({ url: origin.url('/clip.mp4'), format: 'mp3', filename });

describe('RATE_LIMIT_V1_PER_MIN', () => {
  let a: TestGateway;
  let b: TestGateway;
  beforeAll(async () => {
    [a, b] = [await gateway({ RATE_LIMIT_V1_PER_MIN: '4' }), await gateway({ RATE_LIMIT_V1_PER_MIN: '4' })];
  });

  test('extract and download share one budget per client address across replicas; past it, 429 rate_limited with Retry-After', async () => {
    const ip = uniqueIp();
    const first = await extract(a, ip).expect(200);
    expect(limitHeaders(first)).toEqual({ limit: '4', remaining: '3' });
    expect(Number(first.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(59);
    expect(limitHeaders(await convert(b, ip, 'one').expect(202))).toEqual({ limit: '4', remaining: '2' });
    // An error answer is counted and labelled too: the budget is for requests, not for successes.
    const bad = await request(a.app)
      .post('/api/v1/download')
      .set('X-Forwarded-For', ip)
      .send({ url: origin.url('/never-extracted.mp4') });
    expectError(bad, 400, 'unknown_source');
    expect(limitHeaders(bad)).toEqual({ limit: '4', remaining: '1' });
    await extract(b, ip).expect(200);
    const refused = await extract(a, ip);
    expectError(refused, 429, 'rate_limited');
    expect(limitHeaders(refused)).toEqual({ limit: '4', remaining: '0' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expectError(await convert(b, ip, 'two'), 429, 'rate_limited');
    // Another address has a budget of its own.
    expect(limitHeaders(await extract(b, uniqueIp()).expect(200))).toEqual({ limit: '4', remaining: '3' });
    expect((await request(a.app).get('/metrics')).text).toMatch(
      /reelay_rate_limited_total\{surface="v1",app="gateway"\} 1/,
    );
  });

  test('polling a job and asking for its artifact do not count, even once the budget is spent', async () => {
    const ip = uniqueIp();
    const accepted = await convert(a, ip, 'polled').expect(202);
    for (let i = 0; i < 3; i++) await extract(b, ip).expect(200);
    expectError(await extract(a, ip), 429, 'rate_limited');
    for (let i = 0; i < 10; i++) {
      const polled = await request(b.app).get(accepted.body.data.status_url).set('X-Forwarded-For', ip).expect(200);
      expect(polled.headers['ratelimit-limit']).toBeUndefined();
      expectError(
        await request(a.app).get(`${accepted.body.data.status_url}/artifact`).set('X-Forwarded-For', ip),
        409,
        'artifact_not_ready',
      );
    }
  });

  test('without TRUST_PROXY, a forged X-Forwarded-For does not buy a fresh budget', async () => {
    const direct = await gateway({ RATE_LIMIT_V1_PER_MIN: '2', TRUST_PROXY: 'false' });
    // Every test file reaches the gateway from 127.0.0.1, and other files may have counted in its
    // bucket this minute: start it afresh.
    await direct.redis.del('reelay:rl:v1:ip:127.0.0.1');
    await extract(direct, uniqueIp()).expect(200);
    await extract(direct, uniqueIp()).expect(200);
    expectError(await extract(direct, uniqueIp()), 429, 'rate_limited');
  });

  test('0 turns the limit off: no RateLimit headers, no refusals', async () => {
    const unlimited = await gateway({ RATE_LIMIT_V1_PER_MIN: '0' });
    const ip = uniqueIp();
    for (let i = 0; i < 6; i++)
      expect((await extract(unlimited, ip).expect(200)).headers['ratelimit-limit']).toBeUndefined();
  });
});

describe('MAX_ACTIVE_JOBS_PER_CLIENT', () => {
  let a: TestGateway;
  let b: TestGateway;
  beforeAll(async () => {
    [a, b] = [await gateway({ MAX_ACTIVE_JOBS_PER_CLIENT: '2' }), await gateway({ MAX_ACTIVE_JOBS_PER_CLIENT: '2' })];
    await extract(a, uniqueIp()).expect(200); // the source every job below converts
  });

  test('parallel jobs from one client across replicas get exactly the limit; one more is 429 too_many_jobs, a reused job is free', async () => {
    const ip = uniqueIp();
    const names = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
    const answers = await Promise.all(names.map((name, i) => convert(i % 2 ? a : b, ip, name)));
    expect(answers.map((r) => r.status).sort()).toEqual([202, 202, 429, 429, 429, 429]);
    for (const refused of answers.filter((r) => r.status === 429)) {
      expectError(refused, 429, 'too_many_jobs');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
    // The same request as a live job returns that job, through the other replica, without a slot.
    const i = answers.findIndex((r) => r.status === 202);
    const reused = await convert(i % 2 ? b : a, ip, names[i]).expect(202);
    expect(reused.body.data.job_id).toBe(answers[i].body.data.job_id);
    // Another client is not held by this one's jobs.
    await convert(a, uniqueIp(), 'p1').expect(202);
    expect((await request(a.app).get('/metrics')).text + (await request(b.app).get('/metrics')).text).toMatch(
      /reelay_rate_limited_total\{surface="jobs",app="gateway"\} [1-4]/,
    );
  });

  test('a slot is free again once its job completes or fails, and a job that never reached the queue frees its slot after the grace', async () => {
    const ip = uniqueIp();
    const release = new Map<string, (fail: boolean) => void>();
    const base = await testRedis();
    const connection = duplicateRedis(base, {
      maxRetriesPerRequest: null,
      enableOfflineQueue: true,
      commandTimeout: undefined,
    });
    // A real BullMQ worker on the gateways' queue that ends each job when the test says so.
    const worker = new Worker<JobPayload>(
      DOWNLOAD_QUEUE,
      (job: Job<JobPayload>) =>
        new Promise((resolve, reject) =>
          release.set(job.id!, (fail) => (fail ? reject(new Error('failed on purpose')) : resolve(undefined))),
        ),
      { connection, prefix, concurrency: 10 },
    );
    try {
      const done = (await convert(a, ip, 'done').expect(202)).body.data.job_id as string;
      const failing = (await convert(b, ip, 'failing').expect(202)).body.data.job_id as string;
      await eventually(
        async () => expect([...release.keys()]).toEqual(expect.arrayContaining([done, failing])),
        15_000,
      );
      expect((await request(a.app).get(`/api/v1/jobs/${done}`).expect(200)).body.data.status).toBe('processing');
      expectError(await convert(a, ip, 'third'), 429, 'too_many_jobs');

      release.get(done)!(false);
      await eventually(
        async () =>
          expect((await request(a.app).get(`/api/v1/jobs/${done}`)).body.data.status).toMatch(/completed|expired/),
        15_000,
      );
      const third = (await convert(b, ip, 'third').expect(202)).body.data.job_id as string;
      expectError(await convert(a, ip, 'fourth'), 429, 'too_many_jobs');

      // Failing for good needs its attempts used up; each failure frees nothing until the last one.
      for (
        let attempt = 0;
        (await request(a.app).get(`/api/v1/jobs/${failing}`)).body.data.status !== 'failed';
        attempt++
      ) {
        expect(attempt).toBeLessThan(3);
        await eventually(async () => expect(release.has(failing)).toBe(true), 15_000);
        const fail = release.get(failing)!;
        release.delete(failing);
        fail(true);
        await eventually(
          async () =>
            expect((await request(a.app).get(`/api/v1/jobs/${failing}`)).body.data.status).not.toBe('processing'),
          5000,
        );
      }
      await convert(a, ip, 'fourth').expect(202);
      expectError(await convert(b, ip, 'fifth'), 429, 'too_many_jobs');

      // A gateway that took a slot and died before enqueueing leaves an id the queue never saw: it
      // holds its slot for the grace period (a live replica may be about to enqueue it), then not.
      await eventually(async () => expect(release.has(third)).toBe(true), 15_000);
      release.get(third)!(false);
      await eventually(
        async () =>
          expect((await request(a.app).get(`/api/v1/jobs/${third}`)).body.data.status).toMatch(/completed|expired/),
        15_000,
      );
      const key = `reelay:${prefix.replace(/[{}]/g, '')}:client-jobs:${ip}`; // each deployment's (queue prefix's) slots, without its hash tag's braces
      await a.redis.zadd(key, Date.now() - 1000, 'never-enqueued-job-id-000000');
      expectError(await convert(b, ip, 'fifth'), 429, 'too_many_jobs');
      await a.redis.zadd(key, Date.now() - 61_000, 'never-enqueued-job-id-000000');
      await convert(b, ip, 'fifth').expect(202);
      expect(await a.redis.zscore(key, 'never-enqueued-job-id-000000')).toBeNull();
      // Nothing is kept for ever: the set expires after its last new job.
      expect(await a.redis.ttl(key)).toBeGreaterThan(86_400);
    } finally {
      for (const end of release.values()) end(false);
      // Not waiting for active jobs: the last job ('fifth') may be taken after the line above, and
      // its promise would then never end (the test timed out on a loaded machine that way).
      await worker.close(true);
      await Promise.all([connection.quit(), base.quit()]);
    }
  }, 60_000);

  test('a job whose worker dies keeps its slot while it waits for another worker, which then frees it', async () => {
    const own = `{test-v1-dies-${randomBytes(4).toString('hex')}}`;
    const gw = await buildGateway({
      env: { TRUST_PROXY: 'true', MAX_ACTIVE_JOBS_PER_CLIENT: '1' },
      deps: { queuePrefix: own },
    });
    open.push(gw);
    const ip = uniqueIp();
    await extract(gw, ip).expect(200);
    const base = await testRedis();
    const connections = [0, 1].map(() =>
      duplicateRedis(base, { maxRetriesPerRequest: null, enableOfflineQueue: true, commandTimeout: undefined }),
    );
    // Short locks, so a dead worker's job is seen as stalled within a second or two.
    const options = { prefix: own, lockDuration: 1000, stalledInterval: 500 };
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const doomed = new Worker<JobPayload>(DOWNLOAD_QUEUE, () => (started(), new Promise(() => undefined)), {
      ...options,
      connection: connections[0],
    });
    let rescuer: Worker<JobPayload> | undefined;
    try {
      const job = (await convert(gw, ip, 'orphaned').expect(202)).body.data.job_id as string;
      await running;
      await doomed.close(true); // stops at once: no more lock renewals, the job is left active
      expectError(await convert(gw, ip, 'next'), 429, 'too_many_jobs');
      rescuer = new Worker<JobPayload>(DOWNLOAD_QUEUE, async () => undefined, {
        ...options,
        connection: connections[1],
      });
      await eventually(
        async () =>
          expect((await request(gw.app).get(`/api/v1/jobs/${job}`)).body.data.status).toMatch(/completed|expired/),
        15_000,
      );
      await convert(gw, ip, 'next').expect(202);
    } finally {
      await rescuer?.close();
      await Promise.all([...connections, base].map((c) => c.quit().catch(() => c.disconnect())));
    }
  }, 30_000);
});
