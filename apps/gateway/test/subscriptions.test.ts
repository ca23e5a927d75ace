// Subscriptions end to end: a real gateway, Redis and worker (ffmpeg), a local origin serving a
// podcast feed the test edits between checks, and a webhook receiver on 127.0.0.1 that checks the
// Standard Webhooks signature. Then: pause and resume, five failed checks make a subscription
// failing, owner isolation, the limits, bad bodies, and the schedule: with nobody asking, two checker
// instances (two replicas) with a restart in between run exactly one check per period, none lost,
// none doubled (SUBSCRIPTION_MIN_EVERY_SECONDS lowered to 5, the real Redis client and its timeout).
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { FsArtifactStore } from '@reelay/artifacts';
import { parseConfig } from '@reelay/config';
import { createLogger } from '@reelay/observability';
import { startOrigin, startRedis, testMedia, testRedisClient, type Origin, type TestMedia } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { GatewayMetrics } from '../src/metrics.js';
import { startSubscriptionChecks } from '../src/services/subscription-check.js';
import { createKey, eventually, expectError, PASSWORD, signUp } from './account-helpers.js';
import { buildGateway, testRedis, type TestGateway } from './helpers.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-subs-'));
const prefix = `test-subs-${randomBytes(4).toString('hex')}`;
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const RSS = 'application/rss+xml';

let origin: Origin;
let media: TestMedia;
let gw: TestGateway;
let worker: RunningWorker;
let receiver: http.Server;
let receiverBase: string;
let key: string;
const sockets = new Set<net.Socket>();
const deliveries: { headers: http.IncomingHttpHeaders; body: string }[] = [];

function feed(episodes: number[]): string {
  const items = episodes
    .map(
      (n) =>
        `<item><title>Episode ${n}</title><guid isPermaLink="false">ep-${n}</guid><enclosure url="${origin.url(`/audio/${n}.m4a`)}" length="1000" type="audio/mp4"/></item>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Tones Weekly</title><link>${origin.url('/')}</link>\n${items}\n</channel></rss>`;
}

/** Serves `route` as a feed of these episodes (each an audio file on the origin). */
function serveFeed(route: string, episodes: number[]): void {
  for (const n of episodes) origin.file(`/audio/${n}.m4a`, media.audioOnlyM4a, 'audio/mp4');
  origin.body(route, feed(episodes), RSS);
}

const api = (method: 'get' | 'post' | 'patch' | 'delete', url: string, apiKey = key) =>
  request(gw.app)[method](url).set('X-API-Key', apiKey);

function verify(headers: http.IncomingHttpHeaders, body: string): boolean {
  const signed = `${String(headers['webhook-id'])}.${String(headers['webhook-timestamp'])}.${body}`;
  const expected = createHmac('sha256', Buffer.from(SECRET.slice('whsec_'.length), 'base64'))
    .update(signed)
    .digest('base64');
  return String(headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
}

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  receiver.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverBase = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}`;
  gw = await buildGateway({
    env: { TRUST_PROXY: 'true', DATA_DIR: dataDir, MAX_SUBSCRIPTIONS_PER_ACCOUNT: '4', MAX_ITEMS_PER_CHECK: '2' },
    deps: { artifacts: new FsArtifactStore(dataDir), queuePrefix: prefix },
  });
  const config = parseConfig({
    REDIS_URL: process.env.REDIS_URL,
    EGRESS_ALLOWLIST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    WORKER_CONCURRENCY: '1',
  });
  worker = await startWorker({
    config,
    logger: createLogger({ name: 'subs-test', level: 'silent' }),
    metricsPort: 0,
    prefix,
    dataDir,
    webhookRetryDelayMs: 300,
    webhookTimeoutMs: 1_500,
  });
  const { agent } = await signUp(gw.app);
  key = (await createKey(agent)).secret;
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await gw?.close();
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => receiver?.close(resolve));
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('a podcast feed, watched', () => {
  test('since now: only a new episode is downloaded, and its signed webhook names the subscription', async () => {
    serveFeed('/tones.xml', [2, 1]);
    const created = await api('post', '/api/v1/subscriptions')
      .send({
        url: origin.url('/tones.xml'),
        every: 600,
        preset: { audio_only: true },
        webhook_url: `${receiverBase}/hook`,
        webhook_secret: SECRET,
      })
      .expect(201);
    const sub = created.body.data;
    expect(sub).toMatchObject({
      name: 'Tones Weekly',
      every: 600,
      since: 'now',
      status: 'active',
      items: { completed: 0, failed: 0 },
      preset: { audio_only: true },
    });
    expect(created.headers.location).toBe(`/api/v1/subscriptions/${sub.id}`);
    expect(Date.parse(sub.next_check_at) - Date.now()).toBeGreaterThan(590_000);
    const seen = (await api('get', `/api/v1/subscriptions/${sub.id}/items`).expect(200)).body.data;
    expect(seen.map((i: { status: string }) => i.status)).toEqual(['seen', 'seen']);

    // Nothing new: a check starts nothing.
    expect((await api('post', `/api/v1/subscriptions/${sub.id}/check`).expect(200)).body.data).toEqual({
      started: 0,
      seen: 2,
    });
    serveFeed('/tones.xml', [3, 2, 1]);
    expect((await api('post', `/api/v1/subscriptions/${sub.id}/check`).expect(200)).body.data).toEqual({
      started: 1,
      seen: 3,
    });
    // A second check finds it in the archive.
    expect((await api('post', `/api/v1/subscriptions/${sub.id}/check`).expect(200)).body.data).toEqual({
      started: 0,
      seen: 3,
    });

    await eventually(async () => expect(deliveries).toHaveLength(1), 20_000);
    const [delivery] = deliveries;
    expect(verify(delivery.headers, delivery.body)).toBe(true);
    const event = JSON.parse(delivery.body);
    expect(event.type).toBe('subscription.item.completed');
    expect(event.data).toMatchObject({ subscription_id: sub.id, status: 'completed' });
    const items = (await api('get', `/api/v1/subscriptions/${sub.id}/items`).expect(200)).body.data;
    const fresh = items.find((i: { job_id?: string }) => i.job_id);
    expect(fresh).toMatchObject({ title: 'Episode 3', status: 'completed', job_id: event.data.id });
    expect((await api('get', `/api/v1/subscriptions/${sub.id}`).expect(200)).body.data.items).toEqual({
      completed: 1,
      failed: 0,
    });
    // The file is there.
    await request(gw.app).get(`/api/v1/jobs/${event.data.id}/artifact`).expect(200);
  }, 40_000);

  test('since all: the first check runs at creation, MAX_ITEMS_PER_CHECK at a time', async () => {
    serveFeed('/all.xml', [13, 12, 11]);
    const sub = (
      await api('post', '/api/v1/subscriptions')
        .send({ url: origin.url('/all.xml'), since: 'all', name: 'All of it' })
        .expect(201)
    ).body.data;
    expect(sub.name).toBe('All of it');
    expect((await api('get', `/api/v1/subscriptions/${sub.id}/items`).expect(200)).body.data).toHaveLength(2);
    expect((await api('post', `/api/v1/subscriptions/${sub.id}/check`).expect(200)).body.data).toEqual({
      started: 1,
      seen: 3,
    });
    await api('delete', `/api/v1/subscriptions/${sub.id}`).expect(204);
  }, 20_000);

  test('a check reads past the first page as far as the archive, and starts the oldest new entries first', async () => {
    const newestFirst = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i);
    serveFeed('/long.xml', newestFirst(150, 1)); // pages of 100: 150..51, then 50..1
    const sub = (
      await api('post', '/api/v1/subscriptions')
        .send({ url: origin.url('/long.xml') })
        .expect(201)
    ).body.data;
    expect((await api('get', `/api/v1/subscriptions/${sub.id}/items`).expect(200)).body.data).toHaveLength(100);
    // Nothing new: the first page holds entries of the archive, so no further page is read.
    expect((await api('post', `/api/v1/subscriptions/${sub.id}/check`).expect(200)).body.data).toEqual({
      started: 0,
      seen: 100,
    });
    // 120 new episodes: the first page is all new, the second reaches the archive (and the listing stops there).
    serveFeed('/long.xml', newestFirst(270, 1));
    const started = async () =>
      (
        (await api('get', `/api/v1/subscriptions/${sub.id}/items`).expect(200)).body.data as {
          title: string;
          job_id?: string;
        }[]
      )
        .filter((i) => i.job_id)
        .map((i) => i.title)
        .sort();
    expect((await api('post', `/api/v1/subscriptions/${sub.id}/check`).expect(200)).body.data).toEqual({
      started: 2,
      seen: 200,
    });
    expect(await started()).toEqual(['Episode 151', 'Episode 152']);
    // The next check goes on from there: what is left is always above the archive.
    expect((await api('post', `/api/v1/subscriptions/${sub.id}/check`).expect(200)).body.data).toEqual({
      started: 2,
      seen: 200,
    });
    expect(await started()).toEqual(['Episode 151', 'Episode 152', 'Episode 153', 'Episode 154']);
    await api('delete', `/api/v1/subscriptions/${sub.id}`).expect(204);
  }, 40_000);
});

test('pause and resume: a paused subscription has no next check and is not checked', async () => {
  serveFeed('/pause.xml', [21]);
  const sub = (
    await api('post', '/api/v1/subscriptions')
      .send({ url: origin.url('/pause.xml') })
      .expect(201)
  ).body.data;
  expect(sub.every).toBe(3600);
  const paused = (
    await api('patch', `/api/v1/subscriptions/${sub.id}`)
      .send({ status: 'paused', every: 900, name: 'Quiet' })
      .expect(200)
  ).body.data;
  expect(paused).toMatchObject({ status: 'paused', every: 900, name: 'Quiet' });
  expect(paused.next_check_at).toBeUndefined();
  expect(await gw.subscriptions.checker.check(sub.id)).toEqual({ started: 0, seen: 0 }); // the schedule's check skips it
  const resumed = (await api('patch', `/api/v1/subscriptions/${sub.id}`).send({ status: 'active' }).expect(200)).body
    .data;
  expect(resumed.status).toBe('active');
  expect(Date.parse(resumed.next_check_at) - Date.now()).toBeGreaterThan(890_000);
  const list = (await api('get', '/api/v1/subscriptions').expect(200)).body.data;
  expect(list.map((s: { id: string }) => s.id)).toContain(sub.id);
  await api('delete', `/api/v1/subscriptions/${sub.id}`).expect(204);
  expectError(await api('get', `/api/v1/subscriptions/${sub.id}`), 404, 'subscription_not_found');
});

test('five failed checks in a row make it failing, checked less often, until one succeeds', async () => {
  serveFeed('/flaky.xml', [31]);
  const sub = (
    await api('post', '/api/v1/subscriptions')
      .send({ url: origin.url('/flaky.xml'), every: 300 })
      .expect(201)
  ).body.data;
  origin.route('/flaky.xml', (_req, res) => void res.writeHead(500).end('down'));
  for (let i = 1; i <= 5; i++) {
    const res = await api('post', `/api/v1/subscriptions/${sub.id}/check`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.body.success).toBe(false);
    const view = (await api('get', `/api/v1/subscriptions/${sub.id}`).expect(200)).body.data;
    expect(view.status).toBe(i < 5 ? 'active' : 'failing');
    expect(view.last_error).toMatch(/upstream_error|content_not_found|no_media_found/);
  }
  const failing = (await api('get', `/api/v1/subscriptions/${sub.id}`).expect(200)).body.data;
  expect(Date.parse(failing.next_check_at) - Date.now()).toBeGreaterThan(590_000); // 2 × 300 s
  serveFeed('/flaky.xml', [31]);
  await api('post', `/api/v1/subscriptions/${sub.id}/check`).expect(200);
  const healed = (await api('get', `/api/v1/subscriptions/${sub.id}`).expect(200)).body.data;
  expect(healed.status).toBe('active');
  expect(healed.last_error).toBeUndefined();
  expect(Date.parse(healed.next_check_at) - Date.now()).toBeLessThanOrEqual(300_000);
  await api('delete', `/api/v1/subscriptions/${sub.id}`).expect(204);
}, 20_000);

test("another owner's subscription is 404 everywhere; no credentials is 401", async () => {
  serveFeed('/mine.xml', [41]);
  const sub = (
    await api('post', '/api/v1/subscriptions')
      .send({ url: origin.url('/mine.xml') })
      .expect(201)
  ).body.data;
  const other = await signUp(gw.app);
  const otherKey = (await createKey(other.agent)).secret;
  for (const [method, url] of [
    ['get', ''],
    ['patch', ''],
    ['delete', ''],
    ['post', '/check'],
    ['get', '/items'],
  ] as const) {
    const req = api(method, `/api/v1/subscriptions/${sub.id}${url}`, otherKey);
    expectError(await (method === 'patch' ? req.send({ name: 'x' }) : req), 404, 'subscription_not_found');
    // The same through the other owner's web session.
    const viaSession = other.agent[method](`/api/v1/subscriptions/${sub.id}${url}`);
    expectError(
      await (method === 'patch' ? viaSession.send({ name: 'x' }) : viaSession),
      404,
      'subscription_not_found',
    );
  }
  expect((await api('get', '/api/v1/subscriptions', otherKey).expect(200)).body.data).toEqual([]);
  expectError(await request(gw.app).get('/api/v1/subscriptions'), 401, 'api_key_required');
  expectError(await request(gw.app).get('/api/v1/subscriptions').set('X-API-Key', 'rly_nope'), 401, 'invalid_api_key');
  // A session write from another site is refused.
  expectError(
    await other.agent
      .post('/api/v1/subscriptions')
      .set('Origin', 'https://evil.example')
      .send({ url: origin.url('/mine.xml') }),
    403,
    'cross_site_request',
  );
  await api('delete', `/api/v1/subscriptions/${sub.id}`).expect(204);
});

test('deleting the account removes its subscriptions and their schedules', async () => {
  serveFeed('/gone.xml', [61]);
  const owner = await signUp(gw.app);
  const ownerKey = (await createKey(owner.agent)).secret;
  const sub = (
    await api('post', '/api/v1/subscriptions', ownerKey)
      .send({ url: origin.url('/gone.xml') })
      .expect(201)
  ).body.data;
  expect(await gw.subscriptions.store.get(sub.id)).toBeDefined();
  await owner.agent.delete('/account').send({ password: PASSWORD }).expect(204);
  expect(await gw.subscriptions.store.get(sub.id)).toBeUndefined();
  // Its key went with the account: the route answers 401, not the subscription.
  expectError(await api('get', `/api/v1/subscriptions/${sub.id}`, ownerKey), 401, 'invalid_api_key');
});

test('limits and bad bodies: each a clear error envelope', async () => {
  serveFeed('/limit.xml', [51]);
  origin.file('/single.m4a', media.audioOnlyM4a, 'audio/mp4');
  const owner = await signUp(gw.app);
  const ownerKey = (await createKey(owner.agent)).secret;
  const post = (body: unknown) => api('post', '/api/v1/subscriptions', ownerKey).send(body as object);
  expectError(await post({ url: origin.url('/single.m4a') }), 400, 'invalid_request');
  expect((await post({ url: origin.url('/single.m4a') })).body.error.message).toMatch(/not a collection/);
  for (const bad of [
    {},
    { url: 42 },
    { url: origin.url('/limit.xml'), every: 10 },
    { url: origin.url('/limit.xml'), every: 604_801 },
    { url: origin.url('/limit.xml'), since: 'yesterday' },
    { url: origin.url('/limit.xml'), extra: 1 },
    { url: origin.url('/limit.xml'), preset: { quality: 'huge' } },
    { url: origin.url('/limit.xml'), webhook_secret: SECRET },
    { url: 'file:///etc/passwd' },
  ]) {
    const res = await post(bad);
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
  }
  expectError(await post({ url: 'http://169.254.169.254/feed.xml' }), 403, 'url_blocked');
  expectError(
    await post({ url: origin.url('/limit.xml'), webhook_url: 'http://10.0.0.1/hook', webhook_secret: SECRET }),
    403,
    'url_blocked',
  );
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push((await post({ url: origin.url('/limit.xml') }).expect(201)).body.data.id);
  expectError(await post({ url: origin.url('/limit.xml') }), 409, 'subscription_limit_reached');
  expectError(
    await api('patch', `/api/v1/subscriptions/${ids[0]}`, ownerKey).send({ status: 'failing' }),
    400,
    'invalid_request',
  );
  expectError(await api('get', `/api/v1/subscriptions/${'x'.repeat(500)}`, ownerKey), 404, 'subscription_not_found');
  // Deleting the account's subscriptions (the account deletion path) leaves none, schedules included.
  const accountId = (await gw.redis.hget(`reelay:sub:${ids[0]}`, 'account_id'))!;
  expect(await gw.subscriptions.store.deleteForAccount(accountId)).toBe(4);
  expect((await api('get', '/api/v1/subscriptions', ownerKey).expect(200)).body.data).toEqual([]);
});

test('the schedule: checked on time with nobody asking, once per period across two replicas and a restart', async () => {
  // The real setting, lowered as a small deployment may, and the gateway's own Redis client with its
  // real command timeout: each checker's blocking fetch waits for the due check (up to 5 s here),
  // longer than REDIS_COMMAND_TIMEOUT_MS. Its own prefix, so nothing else is checked.
  const fast = await buildGateway({ env: { TRUST_PROXY: 'true', SUBSCRIPTION_MIN_EVERY_SECONDS: '5' } });
  expect(fast.config.REDIS_COMMAND_TIMEOUT_MS).toBe(2_000);
  const logger = createLogger({ name: 'subs-sched', level: 'silent' });
  const checks: number[] = [];
  origin.route('/sched.xml', (_req, res) => {
    checks.push(Date.now());
    res.writeHead(200, { 'content-type': RSS }).end(feed([71]));
  });
  origin.file('/audio/71.m4a', media.audioOnlyM4a, 'audio/mp4');
  const startReplica = () =>
    startSubscriptionChecks(fast.subscriptions.checker, {
      redis: fast.redis,
      prefix: fast.queue.opts.prefix,
      logger,
      errors: fast.metrics.queueWorkerErrors,
    });
  const replicaA = startReplica();
  let replicaB = startReplica();
  try {
    const { agent } = await signUp(fast.app);
    const fastKey = (await createKey(agent)).secret;
    const post = (body: object) => request(fast.app).post('/api/v1/subscriptions').set('X-API-Key', fastKey).send(body);
    const sub = (await post({ url: origin.url('/sched.xml'), every: 5 }).expect(201)).body.data;
    checks.length = 0; // the creation's listing
    expect(sub.every).toBe(5);
    // Nobody asks: the schedule alone checks it, one period after its creation.
    await eventually(async () => expect(checks.length).toBeGreaterThanOrEqual(1), 20_000);
    // The listing is the check's start; its record follows once it is done.
    await eventually(async () => {
      const view = await request(fast.app).get(`/api/v1/subscriptions/${sub.id}`).set('X-API-Key', fastKey);
      expect(view.body.data.last_checked_at).toBeDefined();
    }, 10_000);
    // A replica restarts: the schedule lives in Redis, so the next check is neither lost nor doubled.
    await replicaB.close();
    replicaB = startReplica();
    await eventually(async () => expect(checks.length).toBeGreaterThanOrEqual(2), 20_000);
    await Promise.all([replicaA.close(), replicaB.close()]); // both stop: nothing is mid-check while counted
    // Each scheduled check ran once, on one replica: the origin saw exactly as many listings as the
    // schedule's jobs completed, never two in one period, and the schedule outlived the restart (its
    // next check is waiting).
    const done = await fast.subscriptions.store.checkJobs(['completed', 'failed', 'active']);
    const pending = await fast.subscriptions.store.checkJobs(['delayed', 'wait', 'prioritized']);
    expect(done.every((j) => j.state === 'completed')).toBe(true);
    expect(checks.length).toBe(done.length);
    expect(pending).toHaveLength(1);
    const gaps = checks.slice(1).map((t, i) => t - checks[i]);
    for (const gap of gaps) expect(gap).toBeGreaterThan(2_500);
    // No worker problem on the way (a blocking fetch cut by the command timeout was one every 2 s).
    const errors = (await fast.metrics.queueWorkerErrors.get()).values;
    expect(errors).toEqual([expect.objectContaining({ labels: { queue: 'subscription-checks' }, value: 0 })]);
  } finally {
    await replicaA.close().catch(() => undefined);
    await replicaB.close().catch(() => undefined);
    await fast.close();
  }
}, 60_000);

test('the minimum `every` is the setting: refused below it with a message naming it, and stated in the document', async () => {
  const low = await buildGateway({ env: { TRUST_PROXY: 'true', SUBSCRIPTION_MIN_EVERY_SECONDS: '5' } });
  try {
    serveFeed('/min.xml', [81]);
    const { agent } = await signUp(low.app);
    const lowKey = (await createKey(agent)).secret;
    const post = (app: TestGateway['app'], apiKey: string, body: object) =>
      request(app).post('/api/v1/subscriptions').set('X-API-Key', apiKey).send(body);
    const tooOften = await post(low.app, lowKey, { url: origin.url('/min.xml'), every: 4 });
    expectError(tooOften, 400, 'invalid_request');
    expect(tooOften.body.error.message).toBe('every must be from 5 to 604800, not 4.');
    // The default deployment's minimum is 300: 5 is refused there, naming 300.
    const atDefault = await post(gw.app, key, { url: origin.url('/min.xml'), every: 5 });
    expectError(atDefault, 400, 'invalid_request');
    expect(atDefault.body.error.message).toBe('every must be from 300 to 604800, not 5.');
    const sub = (await post(low.app, lowKey, { url: origin.url('/min.xml'), every: 5 }).expect(201)).body.data;
    const patch = (body: object) =>
      request(low.app).patch(`/api/v1/subscriptions/${sub.id}`).set('X-API-Key', lowKey).send(body);
    expectError(await patch({ every: 4 }), 400, 'invalid_request');
    expect((await patch({ every: 6 }).expect(200)).body.data.every).toBe(6);
    // Each document states its own gateway's minimum, for both bodies that take `every`.
    const minimum = async (app: TestGateway['app']) => {
      const { schemas } = (await request(app).get('/api/openapi.json').expect(200)).body.components;
      return [schemas.SubscriptionRequest, schemas.SubscriptionUpdate].map((s) => s.properties.every.minimum);
    };
    expect(await minimum(low.app)).toEqual([5, 5]);
    expect(await minimum(gw.app)).toEqual([300, 300]);
    await request(low.app).delete(`/api/v1/subscriptions/${sub.id}`).set('X-API-Key', lowKey).expect(204);
  } finally {
    await low.close();
  }
});

test('a checker cut off from Redis counts the errors its worker reports in reelay_queue_worker_errors_total', async () => {
  let own = await startRedis();
  const redis = await testRedis(own.url);
  const metrics = new GatewayMetrics();
  const checks = startSubscriptionChecks(gw.subscriptions.checker, {
    redis,
    logger: createLogger({ name: 'subs-outage', level: 'silent' }),
    errors: metrics.queueWorkerErrors,
  });
  const count = async () =>
    (await metrics.queueWorkerErrors.get()).values.find((v) => v.labels.queue === 'subscription-checks')?.value;
  try {
    await new Promise<void>((resolve) => checks.worker.once('ready', () => resolve()));
    expect(await count()).toBe(0);
    await own.stop();
    await eventually(async () => expect(await count()).toBeGreaterThan(0), 10_000);
    // Redis is back where it was: the worker waits for jobs again (its blocking fetch is in), and
    // stops cleanly.
    own = await startRedis({ port: own.port });
    const admin = testRedisClient(own.url);
    try {
      await eventually(async () => expect(await admin.client('LIST')).toMatch(/ cmd=bzpopmin /), 10_000);
    } finally {
      admin.disconnect();
    }
  } finally {
    await checks.close();
    redis.disconnect();
    await own.stop();
  }
});
