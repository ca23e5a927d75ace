// reelay on a real Redis Cluster (3 primaries, 3 replicas, Debian's redis-server with
// --cluster-enabled, joined by redis-cli --cluster create), configured as a deployment is:
// REDIS_URL=redis+cluster://…, every limit and the extract cache on, the queues under the default
// cluster prefix `{reelay}`. Each flow here touches the keys a cross-slot command would break
// (CROSSSLOT is an error reply, so it would fail the flow): limits and API keys, sign-in throttling,
// the extract cache and source records, jobs with their client slots, signals and events, a
// collection (a BullMQ flow across two queues), subscriptions. Then a primary's replica is promoted
// with CLUSTER FAILOVER while jobs keep arriving, and every accepted job completes.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { defaultQueuePrefix } from '@reelay/redis';
import { createLogger } from '@reelay/observability';
import {
  describeWithTools,
  startOrigin,
  startRedisCluster,
  testMedia,
  type Origin,
  type RedisClusterHandle,
  type TestMedia,
} from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { createKey, expectError, PASSWORD, signUp, uniqueEmail, uniqueIp } from '../account-helpers.js';
import { buildGateway, testConfig, testRedis, type TestGateway } from '../helpers.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-cluster-'));
let cluster: RedisClusterHandle;
let origin: Origin;
let media: TestMedia;
let gw: TestGateway;
let worker: RunningWorker;
let server: http.Server;
let base: string;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON answer, read by the matchers
async function waitEnd(id: string, deadlineMs = 20_000): Promise<Record<string, any>> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const res = await request(gw.app).get(`/api/v1/jobs/${id}`);
    if (['completed', 'failed', 'cancelled', 'expired'].includes(res.body.data?.status)) return res.body.data;
    if (Date.now() > until) throw new Error(`job ${id} did not end: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The event stream of a job, read until the job ends: the statuses its events carried, in order. */
async function followEvents(id: string): Promise<string[]> {
  const res = await fetch(`${base}/api/v1/jobs/${id}/events`, {
    headers: { accept: 'text/event-stream' },
    signal: AbortSignal.timeout(20_000),
  });
  expect(res.status).toBe(200);
  const statuses: string[] = [];
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body!) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
      const data = /^data: (.+)$/m.exec(text.slice(0, end))?.[1];
      text = text.slice(end + 2);
      if (!data) continue;
      const status = (JSON.parse(data) as { status: string }).status;
      if (statuses.at(-1) !== status) statuses.push(status);
      if (status === 'completed' || status === 'failed') return statuses;
    }
  }
  return statuses;
}

/** Extracts the URL (a download must name an extracted source), then submits a job for it. */
async function submitJob(url: string, ip: string, format = 'mkv'): Promise<request.Response> {
  await request(gw.app).post('/api/v1/extract').set('X-Forwarded-For', ip).send({ url }).expect(200);
  return request(gw.app).post('/api/v1/download').set('X-Forwarded-For', ip).send({ url, format });
}

describeWithTools('reelay on a Redis Cluster', [{ bin: 'redis-cli', install: 'apt-get install redis-tools' }], () => {
  beforeAll(async () => {
    [cluster, origin, media] = await Promise.all([startRedisCluster(), startOrigin(), testMedia()]);
    origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
    for (let n = 1; n <= 3; n++) origin.file(`/audio/${n}.m4a`, media.audioOnlyM4a, 'audio/mp4');
    const items = [1, 2, 3].map(
      (n) =>
        `<item><title>Episode ${n}</title><guid isPermaLink="false">ep-${n}</guid><enclosure url="${origin.url(`/audio/${n}.m4a`)}" type="audio/mp4"/></item>`,
    );
    origin.body(
      '/feed.xml',
      `<?xml version="1.0"?><rss version="2.0"><channel><title>Three</title><link>${origin.url('/')}</link>${items.join('')}</channel></rss>`,
      'application/rss+xml',
    );
    // As a deployment runs: limits per client, the extract cache, jobs per client all on.
    const env = {
      REDIS_URL: cluster.url,
      DATA_DIR: dataDir,
      TRUST_PROXY: 'true',
      RATE_LIMIT_V1_PER_MIN: '1000',
      RATE_LIMIT_SUBSCRIPTIONS_PER_MIN: '1000',
      RATE_LIMIT_PUBLIC_PER_MIN: '15',
      MAX_ACTIVE_JOBS_PER_CLIENT: '100',
      EXTRACT_CACHE_SECONDS: '60',
    };
    const config = testConfig(env);
    const queuePrefix = defaultQueuePrefix(config);
    expect(queuePrefix).toBe('{reelay}');
    gw = await buildGateway({ env, redis: await testRedis(cluster.url), deps: { queuePrefix } });
    // The worker finds the same prefix from the same REDIS_URL.
    worker = await startWorker({
      config: { ...config, WORKER_CONCURRENCY: 2 },
      logger: createLogger({ name: 'cluster-worker', level: process.env.CLUSTER_TEST_LOG ?? 'silent' }),
      metricsPort: 0,
      lockDuration: 3000,
      stalledInterval: 1500,
    });
    server = gw.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 90_000);

  afterAll(async () => {
    try {
      await worker?.stop();
      if (server) {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
      await gw?.close(); // throws when a response was not what the OpenAPI document describes
    } finally {
      await origin?.close();
      await cluster?.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('the queues live in the {reelay} slot, and other keys spread over every primary', async () => {
    const submitted = await submitJob(origin.url('/media/clip.mp4?spread'), uniqueIp());
    expect(submitted.status).toBe(202);
    await waitEnd(submitted.body.data.job_id);
    for (let i = 0; i < 20; i++)
      await request(gw.app)
        .post('/api/v1/extract')
        .set('X-Forwarded-For', uniqueIp())
        .send({ url: origin.url(`/media/clip.mp4?spread=${i}`) })
        .expect(200);
    const { primaries } = await cluster.roles();
    const counts = await Promise.all(primaries.map(async (port) => Number((await cluster.cli(port, 'DBSIZE')).trim())));
    expect(counts.every((n) => n > 0)).toBe(true);
    const slot = Number((await cluster.cli(primaries[0], 'CLUSTER', 'KEYSLOT', '{reelay}')).trim());
    const jobKey = `{reelay}:downloads:${submitted.body.data.job_id}`;
    expect(Number((await cluster.cli(primaries[0], 'CLUSTER', 'KEYSLOT', jobKey)).trim())).toBe(slot);
  });

  test('an extract is cached and shared: the second one of a URL is answered from the cache', async () => {
    const url = origin.url('/media/clip.mp4?cached');
    const first = await request(gw.app)
      .post('/api/v1/extract')
      .set('X-Forwarded-For', uniqueIp())
      .send({ url })
      .expect(200);
    const second = await request(gw.app)
      .post('/api/v1/extract')
      .set('X-Forwarded-For', uniqueIp())
      .send({ url })
      .expect(200);
    expect(first.headers.age).toBeUndefined();
    expect(second.headers.age).toBeDefined();
    expect(second.body.data.items).toEqual(first.body.data.items);
  });

  test('a job runs end to end: its event stream reports it, its artifact downloads, its client slot is freed', async () => {
    const ip = uniqueIp();
    const url = origin.url('/media/clip.mp4?job');
    const submitted = await submitJob(url, ip);
    expect(submitted.status).toBe(202);
    const id = submitted.body.data.job_id as string;
    const statuses = await followEvents(id);
    expect(statuses.at(-1)).toBe('completed');
    const view = await waitEnd(id);
    expect(view.status).toBe('completed');
    const file = await fetch(`${base}${view.artifact.url}`);
    expect(file.status).toBe(200);
    expect((await file.arrayBuffer()).byteLength).toBe(view.artifact.size);
  });

  test('a cancel reaches a queued job through its signal keys', async () => {
    const ip = uniqueIp();
    // Cancelled at once, queued or already running: either way the signal keys and records are used.
    const submitted = await submitJob(origin.url('/media/clip.mp4?cancel'), ip, 'mp3');
    expect(submitted.status).toBe(202);
    const id = submitted.body.data.job_id as string;
    const cancelled = await request(gw.app)
      .delete(`/api/v1/jobs/${id}`)
      .set('X-Forwarded-For', ip)
      .set('Authorization', `Bearer ${submitted.body.data.control_token}`);
    expect([200, 202, 204, 409]).toContain(cancelled.status);
    const end = await waitEnd(id);
    expect(['cancelled', 'completed']).toContain(end.status);
  });

  test('a collection (a flow: parent in one queue, children in another) completes with its children', async () => {
    const res = await request(gw.app)
      .post('/api/v1/download')
      .set('X-Forwarded-For', uniqueIp())
      .send({ collection_url: origin.url('/feed.xml'), bundle: 'none' });
    expect(res.status).toBe(202);
    const parent = await waitEnd(res.body.data.job_id, 30_000);
    expect(parent).toMatchObject({
      status: 'completed',
      operation: 'collection',
      entries: { total: 3, completed: 3, failed: 0 },
    });
  }, 60_000);

  test('surface A: accounts, API keys and their limits, and sign-in throttling', async () => {
    const { agent, email } = await signUp(gw.app);
    const key = await createKey(agent);
    const ip = uniqueIp();
    const withKey = await request(gw.app)
      .post('/api')
      .set('X-Forwarded-For', ip)
      .set('X-API-Key', key.secret)
      .send({ url: origin.url('/media/clip.mp4?a') });
    expect(withKey.status).toBe(200);
    expect(Number(withKey.headers['ratelimit-remaining'])).toBe(Number(withKey.headers['ratelimit-limit']) - 1);
    // An unknown key is charged to the address's bucket (a second script, in another slot).
    const unknown = await request(gw.app)
      .post('/api')
      .set('X-Forwarded-For', ip)
      .set('X-API-Key', `rly_${'x'.repeat(43)}`)
      .send({ url: origin.url('/media/clip.mp4?a') });
    expectError(unknown, 401, 'invalid_api_key');
    expect(unknown.headers['ratelimit-remaining']).toBe('14');
    const listed = await agent.get('/account/keys').expect(200);
    expect(listed.body.data.keys.map((k: { id: string }) => k.id)).toContain(key.id);
    await agent.delete(`/account/keys/${key.id}`).expect(204);
    expectError(
      await request(gw.app)
        .post('/api')
        .set('X-Forwarded-For', ip)
        .set('X-API-Key', key.secret)
        .send({ url: origin.url('/media/clip.mp4?a') }),
      401,
      'invalid_api_key',
    );
    // Wrong passwords from one address: refused after 5, with the owner's password too.
    const attacker = uniqueIp();
    for (let i = 0; i < 5; i++)
      await request(gw.app)
        .post('/account/login')
        .set('X-Forwarded-For', attacker)
        .send({ email, password: 'wrong password!' })
        .expect(401);
    expectError(
      await request(gw.app).post('/account/login').set('X-Forwarded-For', attacker).send({ email, password: PASSWORD }),
      429,
      'rate_limited',
    );
    // From another address the account's own delay applies (its keys share the account's slot): seconds, not the window.
    const elsewhere = await request(gw.app)
      .post('/account/login')
      .set('X-Forwarded-For', uniqueIp())
      .send({ email, password: PASSWORD });
    expectError(elsewhere, 429, 'rate_limited');
    expect(Number(elsewhere.headers['retry-after'])).toBeLessThanOrEqual(2);
    await request(gw.app)
      .post('/account/signup')
      .set('X-Forwarded-For', uniqueIp())
      .send({ email: uniqueEmail(), password: PASSWORD })
      .expect(201);
  });

  test('a subscription is created, listed and deleted', async () => {
    const { agent } = await signUp(gw.app);
    const key = (await createKey(agent)).secret;
    const api = (method: 'get' | 'post' | 'delete', url: string) =>
      request(gw.app)[method](url).set('X-API-Key', key).set('X-Forwarded-For', uniqueIp());
    const created = await api('post', '/api/v1/subscriptions').send({ url: origin.url('/feed.xml'), every: 3600 });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    const listed = await api('get', '/api/v1/subscriptions').expect(200);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual([id]);
    await api('delete', `/api/v1/subscriptions/${id}`).expect(204);
    expect((await api('get', '/api/v1/subscriptions').expect(200)).body.data).toEqual([]);
  });

  test("CLUSTER FAILOVER of the queues' primary under load: no job is lost", async () => {
    const { primaries, replicas } = await cluster.roles();
    const slot = (await cluster.cli(primaries[0], 'CLUSTER', 'KEYSLOT', '{reelay}')).trim();
    // The replica whose primary serves the queues' slot.
    const owner = (await cluster.cli(primaries[0], 'CLUSTER', 'NODES'))
      .split('\n')
      .map((line) => line.split(' '))
      .find(
        (f) =>
          f[2]?.includes('master') &&
          f.slice(8).some((range) => {
            const [from, to] = range.split('-').map(Number);
            return Number(slot) >= from && Number(slot) <= (to ?? from);
          }),
      );
    expect(owner).toBeDefined();
    const replicaPort = (
      await Promise.all(replicas.map(async (port) => ({ port, info: await cluster.cli(port, 'CLUSTER', 'NODES') })))
    ).find(({ info }) => info.split('\n').some((line) => line.includes('myself') && line.includes(owner![0])))?.port;
    expect(replicaPort).toBeDefined();

    const accepted: string[] = [];
    const statuses: number[] = [];
    let n = 0;
    let running = true;
    const ip = uniqueIp();
    const load = (async () => {
      while (running) {
        const url = origin.url(`/media/clip.mp4?load=${n++}`);
        const post = (pathname: string, body: object) =>
          fetch(`${base}${pathname}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
            body: JSON.stringify(body),
          }).catch(() => undefined);
        const extracted = await post('/api/v1/extract', { url });
        await extracted?.arrayBuffer();
        statuses.push(extracted?.status ?? 0);
        if (extracted?.status !== 200) continue;
        const res = await post('/api/v1/download', { url, format: 'mkv' });
        statuses.push(res?.status ?? 0);
        const body = (await res?.json().catch(() => undefined)) as { data?: { job_id?: string } } | undefined;
        if (res?.status === 202 && body?.data?.job_id) accepted.push(body.data.job_id);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const accepting = async (count: number) => {
      const until = Date.now() + 30_000;
      while (accepted.length < count && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(accepted.length).toBeGreaterThanOrEqual(count);
    };
    await accepting(5);
    await cluster.failover(replicaPort!);
    await accepting(accepted.length + 5);
    running = false;
    await load;
    expect((await cluster.roles()).primaries).toContain(replicaPort);

    const ends = await Promise.all(accepted.map((id) => waitEnd(id, 60_000)));
    const lost = ends.filter((e) => e.status !== 'completed');
    process.stdout.write(
      `cluster failover: ${accepted.length} jobs accepted, ${lost.length} not completed; answers ${JSON.stringify(Object.fromEntries([...new Set(statuses)].map((s) => [s, statuses.filter((x) => x === s).length])))}\n`,
    );
    expect(lost).toEqual([]);
    // A manual failover is coordinated: the gateway answered nothing but success or a clean 503.
    expect(statuses.every((s) => s === 200 || s === 202 || s === 503)).toBe(true);
  }, 120_000);
});
