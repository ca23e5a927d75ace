// A Redis that hangs or refuses: every route that touches Redis answers 503 service_unavailable,
// never 500 and never a hang, and the same app answers 200 again once Redis does. Each case runs
// its own redis-server: frozen with SIGSTOP, full (maxmemory with noeviction), unable to snapshot
// (MISCONF), a read-only replica.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { startOrigin, startRedis, testMedia, testRedisClient, type Origin, type RedisHandle } from '@reelay/testkit';
import { connectRedis, redisReady } from '@reelay/redis';
import { PASSWORD, uniqueEmail, uniqueIp } from '../account-helpers.js';
import { buildGateway, testConfig, type TestGateway } from '../helpers.js';

const TIMEOUT_MS = 300;
let origin: Origin;
const servers: RedisHandle[] = [];
const dirs: string[] = [];
const gateways: TestGateway[] = [];

beforeAll(async () => {
  const media = await testMedia();
  origin = await startOrigin();
  origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
  origin.file('/media/audio.m4a', media.audioOnlyM4a, 'audio/mp4');
});

afterAll(async () => {
  for (const s of servers) s.process.kill('SIGCONT');
  await Promise.all(gateways.map((g) => g.close()));
  await Promise.all(servers.map((s) => s.stop()));
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  await origin?.close();
});

async function server(): Promise<RedisHandle> {
  // A folder of its own: a replica's initial sync writes an RDB file to it.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-redis-faults-'));
  dirs.push(dir);
  const s = await startRedis({ dir });
  servers.push(s);
  return s;
}

/** The production client and gateway with a short command timeout, trusting X-Forwarded-For. */
async function gatewayOn(url: string): Promise<TestGateway> {
  const config = testConfig({ REDIS_URL: url, REDIS_COMMAND_TIMEOUT_MS: String(TIMEOUT_MS), TRUST_PROXY: 'true' });
  const redis = connectRedis(config);
  redis.on('error', () => {});
  await redisReady(redis);
  const gw = await buildGateway({
    env: { REDIS_URL: url, REDIS_COMMAND_TIMEOUT_MS: String(TIMEOUT_MS), TRUST_PROXY: 'true' },
    redis,
  });
  gateways.push(gw);
  return gw;
}

interface Before {
  email: string;
  /** The session cookie, sent as a header so it works against any gateway on the same data. */
  cookie: string;
  key: string;
  jobId: string;
}

/** What a signed-in user has before the fault: a session, an API key, a finished extract and a job. */
async function setUp(gw: TestGateway): Promise<Before> {
  const email = uniqueEmail();
  const signup = await request(gw.app)
    .post('/account/signup')
    .set('X-Forwarded-For', uniqueIp())
    .send({ email, password: PASSWORD })
    .expect(201);
  const cookie = String(signup.headers['set-cookie']?.[0]).split(';')[0]!;
  const key = (await request(gw.app).post('/account/keys').set('Cookie', cookie).send({ name: 'before' }).expect(201))
    .body.data.secret as string;
  await request(gw.app)
    .post('/api/v1/extract')
    .send({ url: origin.url('/media/clip.mp4') })
    .expect(200);
  await request(gw.app)
    .post('/api/v1/extract')
    .send({ url: origin.url('/media/audio.m4a') })
    .expect(200);
  const job = await request(gw.app)
    .post('/api/v1/download')
    .set('X-Forwarded-For', uniqueIp())
    .send({ url: origin.url('/media/clip.mp4'), format: 'mkv' })
    .expect(202);
  return { email, cookie, key, jobId: job.body.data.job_id as string };
}

type Probe = [name: string, send: () => request.Test];

/** Every route that reads or writes Redis, as a user with a session, a key and a job sends it. */
function probes(gw: TestGateway, ctx: Before): Probe[] {
  const ip = () => uniqueIp();
  return [
    [
      'POST /api (key check and limit)',
      () =>
        request(gw.app)
          .post('/api')
          .set('X-Forwarded-For', ip())
          .set('X-API-Key', ctx.key)
          .send({ url: origin.url('/media/clip.mp4') }),
    ],
    [
      'POST /api/playground (limit)',
      () =>
        request(gw.app)
          .post('/api/playground')
          .set('X-Forwarded-For', ip())
          .send({ url: origin.url('/media/clip.mp4') }),
    ],
    [
      'POST /account/signup',
      () =>
        request(gw.app)
          .post('/account/signup')
          .set('X-Forwarded-For', ip())
          .send({ email: uniqueEmail(), password: PASSWORD }),
    ],
    [
      'POST /account/login',
      () =>
        request(gw.app)
          .post('/account/login')
          .set('X-Forwarded-For', ip())
          .send({ email: ctx.email, password: PASSWORD }),
    ],
    ['GET /account/me (session)', () => request(gw.app).get('/account/me').set('Cookie', ctx.cookie)],
    ['GET /account/keys', () => request(gw.app).get('/account/keys').set('Cookie', ctx.cookie)],
    [
      'POST /account/keys',
      () => request(gw.app).post('/account/keys').set('Cookie', ctx.cookie).send({ name: 'during the fault' }),
    ],
    [
      'POST /api/v1/extract (sources)',
      () =>
        request(gw.app)
          .post('/api/v1/extract')
          .send({ url: origin.url('/media/clip.mp4') }),
    ],
    [
      'POST /api/v1/download (enqueue)',
      () =>
        request(gw.app)
          .post('/api/v1/download')
          .set('X-Forwarded-For', ip())
          .send({ url: origin.url('/media/audio.m4a'), format: 'mp3' }),
    ],
    ['GET /api/v1/jobs/{id}', () => request(gw.app).get(`/api/v1/jobs/${ctx.jobId}`)],
    ['GET /api/v1/jobs/{id}/artifact', () => request(gw.app).get(`/api/v1/jobs/${ctx.jobId}/artifact`)],
  ];
}

const WRITES = [
  'POST /api (key check and limit)',
  'POST /api/playground (limit)',
  'POST /account/signup',
  'POST /account/login',
  'POST /account/keys',
  'POST /api/v1/extract (sources)',
  'POST /api/v1/download (enqueue)',
];

/** Sends each probe, returning its status, error code and seconds to answer. */
async function run(list: Probe[]): Promise<{ name: string; status: number; code?: string; seconds: number }[]> {
  const results = [];
  for (const [name, send] of list) {
    const started = performance.now();
    const res = await send().timeout(10_000);
    results.push({
      name,
      status: res.status,
      code: res.body?.error?.code as string | undefined,
      seconds: (performance.now() - started) / 1000,
    });
  }
  return results;
}

const unavailable = (r: { name: string; status: number; code?: string }) => ({
  name: r.name,
  status: r.status,
  code: r.code,
});

describe('a frozen Redis (SIGSTOP)', () => {
  test('answers 503 on every route within the command timeout plus a second, and 200 again after SIGCONT', async () => {
    const redis = await server();
    const gw = await gatewayOn(redis.url);
    const ctx = await setUp(gw);
    const list = probes(gw, ctx);

    redis.process.kill('SIGSTOP');
    let frozen;
    let operations;
    try {
      frozen = await run(list);
      // Routes that need no Redis, or bound their own wait (/readyz: no worker here, so 503), answer too.
      operations = await run([
        ['GET /healthz', () => request(gw.app).get('/healthz')],
        ['GET /metrics', () => request(gw.app).get('/metrics')],
        ['GET /readyz', () => request(gw.app).get('/readyz')],
      ]);
    } finally {
      redis.process.kill('SIGCONT');
    }
    expect(operations.map((r) => [r.name, r.status])).toEqual([
      ['GET /healthz', 200],
      ['GET /metrics', 200],
      ['GET /readyz', 503],
    ]);
    const slowest = Math.max(...frozen.map((r) => r.seconds));
    process.stderr.write(
      `frozen Redis: slowest 503 after ${slowest.toFixed(2)} s (timeout ${TIMEOUT_MS} ms): ${frozen.map((r) => `${r.name} ${r.seconds.toFixed(2)}`).join(', ')}\n`,
    );
    expect(frozen.map(unavailable)).toEqual(list.map(([name]) => ({ name, status: 503, code: 'service_unavailable' })));
    expect(slowest).toBeLessThan(TIMEOUT_MS / 1000 + 1);

    // The same app, not restarted: the first request that succeeds after SIGCONT.
    const resumed = performance.now();
    for (;;) {
      const res = await request(gw.app).get('/account/me').set('Cookie', ctx.cookie);
      if (res.status === 200) break;
      if (performance.now() - resumed > 10_000) throw new Error(`still ${res.status} 10 s after SIGCONT`);
    }
    process.stderr.write(
      `frozen Redis: first 200 ${((performance.now() - resumed) / 1000).toFixed(2)} s after SIGCONT\n`,
    );
    const after = await run(list);
    for (const r of after) expect({ name: r.name, ok: r.status < 500 }).toEqual({ name: r.name, ok: true });
    expect(after.find((r) => r.name === 'GET /account/me (session)')?.status).toBe(200);
    expect(after.find((r) => r.name === 'POST /api/playground (limit)')?.status).toBe(200);
  });
});

describe('a Redis that refuses writes', () => {
  test('out of memory (maxmemory with noeviction): every write answers 503', async () => {
    const redis = await server();
    const gw = await gatewayOn(redis.url);
    const ctx = await setUp(gw);
    const admin = testRedisClient(redis.url);
    try {
      await admin.config('SET', 'maxmemory', '1');
      const results = await run(probes(gw, ctx).filter(([name]) => WRITES.includes(name)));
      expect(results.map(unavailable)).toEqual(
        WRITES.map((name) => ({ name, status: 503, code: 'service_unavailable' })),
      );
      await admin.config('SET', 'maxmemory', '0');
      await request(gw.app).post('/account/keys').set('Cookie', ctx.cookie).send({ name: 'after' }).expect(201);
    } finally {
      admin.disconnect();
    }
  });

  test('a disk that cannot take snapshots (MISCONF): every write answers 503', async () => {
    const redis = await server();
    const gw = await gatewayOn(redis.url);
    const ctx = await setUp(gw);
    const admin = testRedisClient(redis.url);
    try {
      // Snapshots configured, and the folder they go to removed: the next one fails, and Redis
      // refuses writes (stop-writes-on-bgsave-error, on by default).
      await admin.config('SET', 'save', '3600 1');
      fs.rmSync(dirs.at(-1)!, { recursive: true, force: true });
      await admin.bgsave();
      const deadline = Date.now() + 10_000;
      while (!(await admin.info('persistence')).includes('rdb_last_bgsave_status:err')) {
        if (Date.now() > deadline) throw new Error('the snapshot did not fail');
        await new Promise((r) => setTimeout(r, 50));
      }
      const results = await run(probes(gw, ctx).filter(([name]) => WRITES.includes(name)));
      expect(results.map(unavailable)).toEqual(
        WRITES.map((name) => ({ name, status: 503, code: 'service_unavailable' })),
      );
    } finally {
      await admin.config('SET', 'save', ''); // or its shutdown would try (and fail) to save, and not exit
      admin.disconnect();
    }
  });

  test('a read-only replica: every write answers 503', async () => {
    const primary = await server();
    const replica = await server();
    const seed = await gatewayOn(primary.url);
    const ctx = await setUp(seed);
    const admin = testRedisClient(replica.url);
    try {
      await admin.replicaof('127.0.0.1', primary.port);
      const deadline = Date.now() + 10_000;
      while (!(await admin.info('replication')).includes('master_link_status:up')) {
        if (Date.now() > deadline) throw new Error('the replica did not sync');
        await new Promise((r) => setTimeout(r, 50));
      }
      const gw = await gatewayOn(replica.url);
      const results = await run(probes(gw, ctx).filter(([name]) => WRITES.includes(name)));
      expect(results.map(unavailable)).toEqual(
        WRITES.map((name) => ({ name, status: 503, code: 'service_unavailable' })),
      );
    } finally {
      admin.disconnect();
    }
  });
});
