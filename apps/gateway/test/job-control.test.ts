// Only a job's creator controls it (DESIGN.md "Trust at the public edge"): a real gateway, Redis and
// worker, an origin that holds its media back so jobs stay queued or processing, clients told apart
// by address (TRUST_PROXY), accounts with keys and sessions. The id reads a job; cancelling and
// stopping need its control token, or the key or session that started it. A repeated request reuses
// a job only for the same client. A collection's token controls its entries; a subscription's jobs
// are their owner's, and count against the owner's MAX_ACTIVE_JOBS_PER_CLIENT. No log line names a
// job id, a token, a session or a key.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Job } from 'bullmq';
import request from 'supertest';
import { FsArtifactStore } from '@reelay/artifacts';
import { logRef } from '@reelay/observability';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { createKey, expectError, PASSWORD, signUp, uniqueEmail, uniqueIp } from './account-helpers.js';
import { buildGateway, testConfig, type TestGateway } from './helpers.js';
import { captureLogs } from './log-capture.js';
import { openEvents } from './sse-client.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-control-'));
const queuePrefix = `test-control-${randomBytes(4).toString('hex')}`;
const env = { DATA_DIR: dataDir, TRUST_PROXY: 'true', MAX_ACTIVE_JOBS_PER_CLIENT: '2', WORKER_CONCURRENCY: '4' };
/** Gateway and worker write here: the last test reads every line. */
const logs = captureLogs();

let origin: Origin;
let media: TestMedia;
let gw: TestGateway;
let server: Server;
let base: string;
let worker: RunningWorker;
/** The origin sends a third of each held file, then nothing until the file's tests are done. */
let holding = true;

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  gw = await buildGateway({ env, deps: { queuePrefix, artifacts: new FsArtifactStore(dataDir), logger: logs.logger } });
  server = gw.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  worker = await startWorker({
    config: testConfig(env),
    logger: logs.logger,
    metricsPort: 0,
    prefix: queuePrefix,
    dataDir,
  });
}, 60_000);

afterAll(async () => {
  holding = false;
  await worker?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await gw?.close();
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A file the origin holds back (its first third, then nothing while `holding`). */
function held(route: string, file: string, type: string): void {
  const data = fs.readFileSync(file);
  origin.route(route, (_req, res) => {
    res.writeHead(200, { 'content-type': type, 'content-length': data.length });
    let sent = 0;
    const timer = setInterval(() => {
      const until = holding ? Math.floor(data.length / 3) : data.length;
      if (sent < until) res.write(data.subarray(sent, until));
      sent = Math.max(sent, until);
      if (sent < data.length) return;
      clearInterval(timer);
      res.end();
    }, 50);
    res.on('close', () => clearInterval(timer));
  });
}

/** A page of its own with one held video: a one-step download of it (as mkv) is a job. */
function heldPage(): string {
  const name = randomBytes(4).toString('hex');
  held(`/media/${name}.mp4`, media.muxedMp4, 'video/mp4');
  origin.body(
    `/${name}.html`,
    `<!doctype html><html><head><title>Held ${name}</title></head><body><video><source src="/media/${name}.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"'></video></body></html>`,
    'text/html',
  );
  return origin.url(`/${name}.html`);
}

/** A podcast feed of its own whose episodes the origin holds back. */
function heldFeed(count: number): string {
  const name = randomBytes(4).toString('hex');
  const items = Array.from({ length: count }, (_, i) => {
    held(`/audio/${name}-${i + 1}.m4a`, media.audioOnlyM4a, 'audio/mp4');
    return `<item><title>Episode ${i + 1}</title><guid isPermaLink="false">${name}-${i + 1}</guid><enclosure url="${origin.url(`/audio/${name}-${i + 1}.m4a`)}" length="1000" type="audio/mp4"/></item>`;
  });
  origin.body(
    `/${name}.xml`,
    `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Feed ${name}</title><link>${origin.url('/')}</link>${items.join('')}</channel></rss>`,
    'application/rss+xml',
  );
  return origin.url(`/${name}.xml`);
}

const download = (ip: string, body: object) =>
  request(gw.app).post('/api/v1/download').set('X-Forwarded-For', ip).send(body);
const cancel = (id: string, ip = uniqueIp()) => request(gw.app).delete(`/api/v1/jobs/${id}`).set('X-Forwarded-For', ip);
const stop = (id: string, ip = uniqueIp()) =>
  request(gw.app).post(`/api/v1/jobs/${id}/stop`).set('X-Forwarded-For', ip);
const bearer = (token: string) => `Bearer ${token}`;
const view = async (id: string) => (await request(gw.app).get(`/api/v1/jobs/${id}`).expect(200)).body.data;

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await fn();
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the token stays with its client', () => {
  test('Redis keeps its hash only; no job view, event or job data shows it', async () => {
    const started = await download(uniqueIp(), { page_url: heldPage(), format: 'mkv' }).expect(202);
    const { job_id: id, control_token: token } = started.body.data as { job_id: string; control_token: string };
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 bits
    const record = await gw.redis.hgetall(`reelay:job-control:${id}`);
    const hash = createHash('sha256').update(token).digest('base64url');
    expect(Object.keys(record)).toEqual([`t:${hash}`]);
    expect(JSON.stringify(record)).not.toContain(token);

    const shown = JSON.stringify((await request(gw.app).get(`/api/v1/jobs/${id}`).expect(200)).body);
    const events = await openEvents(base, `/api/v1/jobs/${id}/events`);
    await events.waitFor(1);
    events.close();
    const data = JSON.stringify((await Job.fromId(gw.queue, id))?.data);
    for (const text of [shown, events.text, data]) expect(text).not.toContain(token);
    await cancel(id).set('Authorization', bearer(token)).expect(204);
  }, 30_000);

  test('no log line names a job id, control token, session or API key: the access log shows route templates', async () => {
    // A signed-in client with a key, downloading, reading, following and cancelling.
    const email = uniqueEmail();
    const signup = await request(gw.app)
      .post('/account/signup')
      .set('X-Forwarded-For', uniqueIp())
      .send({ email, password: PASSWORD });
    const session = /reelay_session=([^;]+)/.exec(String(signup.headers['set-cookie']))![1];
    const cookie = `reelay_session=${session}`;
    const key = (await request(gw.app).post('/account/keys').set('Cookie', cookie).send({ name: 'logs' }).expect(201))
      .body.data.secret as string;
    const started = await download(uniqueIp(), { page_url: heldPage(), format: 'mkv' })
      .set('Cookie', cookie)
      .expect(202);
    const { job_id: id, control_token: token } = started.body.data as { job_id: string; control_token: string };
    await until('the worker to take the job', async () => (await view(id)).status === 'processing');
    await request(gw.app).get(`/api/v1/jobs/${id}/artifact`).expect(409);
    await request(gw.app).get(`/api/v1/jobs/${id}/nothing-here`).expect(404);
    await request(gw.app).delete(`/api/v1/jobs/${id}`).set('X-API-Key', key).expect(204);
    const other = await download(uniqueIp(), { page_url: heldPage(), format: 'mkv' }).set('X-API-Key', key).expect(202);
    await cancel(other.body.data.job_id).set('Authorization', bearer(other.body.data.control_token)).expect(204);

    const text = logs.text();
    // The lines are there: the access log's, by template, and the worker's, by reference.
    expect(text).toContain('"url":"/api/v1/jobs/:id"');
    expect(text).toContain('"url":"/api/v1/jobs/:id/artifact"');
    expect(text).toContain('"url":"/api/v1/jobs/:redacted/nothing-here"');
    expect(text).toContain(`"job":"${logRef(id)}"`);
    for (const secret of [id, token, other.body.data.job_id, other.body.data.control_token, session, key])
      expect(text.includes(secret) ? secret : 'not logged').toBe('not logged');
  }, 30_000);
});

describe('a job is controlled by its creator', () => {
  test('two clients asking for the same one-step download get a job each; a third with only the id cannot cancel it, its creator can', async () => {
    const page = heldPage();
    const [alice, bob, mallory] = [uniqueIp(), uniqueIp(), uniqueIp()];
    const first = await download(alice, { page_url: page, format: 'mkv' }).expect(202);
    const second = await download(bob, { page_url: page, format: 'mkv' }).expect(202);
    const a = first.body.data as { job_id: string; control_token: string };
    const b = second.body.data as { job_id: string; control_token: string };
    // The same request from another client is another job with another capability.
    expect(b.job_id).not.toBe(a.job_id);
    expect(b.control_token).not.toBe(a.control_token);

    // Only the id: anyone may read the job, nobody may cancel or stop it.
    await view(a.job_id);
    expectError(await cancel(a.job_id, mallory), 403, 'job_control_forbidden');
    expectError(await stop(a.job_id, mallory), 403, 'job_control_forbidden');
    // Another client's token, and anything that is not a bearer token, are nobody's either.
    expectError(
      await cancel(a.job_id, bob).set('Authorization', bearer(b.control_token)),
      403,
      'job_control_forbidden',
    );
    for (const wrong of [`Basic ${a.control_token}`, a.control_token, bearer(`${a.control_token}x`), 'Bearer '])
      expectError(await cancel(a.job_id, alice).set('Authorization', wrong), 403, 'job_control_forbidden');
    // Alice's own address is not her capability either.
    expectError(await cancel(a.job_id, alice), 403, 'job_control_forbidden');
    expect((await view(a.job_id)).status).not.toBe('cancelled');

    await cancel(a.job_id, mallory).set('Authorization', bearer(a.control_token)).expect(204);
    expect((await view(a.job_id)).status).toBe('cancelled');
    expect((await view(b.job_id)).status).not.toBe('cancelled');
    await cancel(b.job_id).set('Authorization', bearer(b.control_token)).expect(204);
  }, 30_000);

  test('an unknown or malformed id is 404 for anyone, before any check of who asks', async () => {
    for (const id of [randomBytes(16).toString('base64url'), 'nope']) {
      expectError(await cancel(id), 404, 'job_not_found');
      expectError(
        await stop(id).set('Authorization', bearer(randomBytes(32).toString('base64url'))),
        404,
        'job_not_found',
      );
    }
  });

  test('the same client asking again gets the same job and another token; every token it was given controls it', async () => {
    const page = heldPage();
    const ip = uniqueIp();
    const tokens: string[] = [];
    let id: string | undefined;
    for (let i = 0; i < 3; i++) {
      const res = await download(ip, { page_url: page, format: 'mkv' }).expect(202);
      id ??= res.body.data.job_id;
      expect(res.body.data.job_id).toBe(id);
      tokens.push(res.body.data.control_token);
    }
    expect(new Set(tokens).size).toBe(3);
    // Each token passes the check: stop then says what it would for the creator (not a recording).
    for (const token of tokens) expectError(await stop(id!).set('Authorization', bearer(token)), 409, 'not_recording');
    await cancel(id!).set('Authorization', bearer(tokens[0])).expect(204);
    expectError(await cancel(id!).set('Authorization', bearer(tokens[2])), 409, 'job_finished');
  }, 30_000);

  test('the API key or session that started a job controls it without a token; another account, another site and an unknown key do not', async () => {
    const owner = await signUp(gw.app);
    const key = (await createKey(owner.agent)).secret;
    const other = await signUp(gw.app);
    const otherKey = (await createKey(other.agent)).secret;

    const byKey = await download(uniqueIp(), { page_url: heldPage(), format: 'mkv' }).set('X-API-Key', key).expect(202);
    const keyJob = byKey.body.data.job_id as string;
    expectError(await cancel(keyJob).set('X-API-Key', otherKey), 403, 'job_control_forbidden');
    expectError(
      await cancel(keyJob).set('X-API-Key', `rly_${randomBytes(32).toString('base64url')}`),
      401,
      'invalid_api_key',
    );
    // The account, not only the one key: its session controls the job too (as a stop shows).
    expectError(await owner.agent.post(`/api/v1/jobs/${keyJob}/stop`), 409, 'not_recording');
    await cancel(keyJob).set('X-API-Key', key).expect(204);

    const bySession = await owner.agent
      .post('/api/v1/download')
      .send({ page_url: heldPage(), format: 'mkv' })
      .expect(202);
    const sessionJob = bySession.body.data.job_id as string;
    expectError(await other.agent.delete(`/api/v1/jobs/${sessionJob}`), 403, 'job_control_forbidden');
    // The cookie a page of another site makes the browser send proves nothing.
    expectError(
      await owner.agent.delete(`/api/v1/jobs/${sessionJob}`).set('Origin', 'https://elsewhere.example'),
      403,
      'job_control_forbidden',
    );
    await owner.agent.delete(`/api/v1/jobs/${sessionJob}`).expect(204);

    // Reuse is per account: the same request with the key is the account's job, not the address's.
    const page = heldPage();
    const ip = uniqueIp();
    const anonymous = await download(ip, { page_url: page, format: 'mkv' }).expect(202);
    const withKey = await download(ip, { page_url: page, format: 'mkv' }).set('X-API-Key', key).expect(202);
    expect(withKey.body.data.job_id).not.toBe(anonymous.body.data.job_id);
    expectError(await cancel(anonymous.body.data.job_id).set('X-API-Key', key), 403, 'job_control_forbidden');
    await cancel(anonymous.body.data.job_id)
      .set('Authorization', bearer(anonymous.body.data.control_token))
      .expect(204);
    await cancel(withKey.body.data.job_id).set('X-API-Key', key).expect(204);
  }, 40_000);

  test("a collection's token cancels its entries' jobs and the collection; a stranger's cancel of an entry is 403", async () => {
    const started = await download(uniqueIp(), { collection_url: heldFeed(3), bundle: 'none' }).expect(202);
    const { job_id: id, control_token: token } = started.body.data as { job_id: string; control_token: string };
    const children = (await request(gw.app).get(`/api/v1/jobs/${id}/children`).expect(200)).body.data.children as {
      job_id: string;
    }[];
    expect(children).toHaveLength(3);
    const [one, two] = children.map((c) => c.job_id);
    expectError(await cancel(one), 403, 'job_control_forbidden');
    expectError(await cancel(id), 403, 'job_control_forbidden');
    await cancel(one).set('Authorization', bearer(token)).expect(204);
    expect((await view(one)).status).toBe('cancelled');
    expect((await view(two)).status).not.toBe('cancelled');
    await cancel(id).set('Authorization', bearer(token)).expect(204);
    const parent = await until('the collection to end', async () => {
      const v = await view(id);
      return v.status === 'cancelled' && v;
    });
    expect(parent.status).toBe('cancelled');
    expect((await view(two)).status).toBe('cancelled');
  }, 40_000);

  test("a subscription's jobs count against their owner as one client, wait for a free slot, and only the owner controls them", async () => {
    const first = await signUp(gw.app);
    const firstKey = (await createKey(first.agent)).secret;
    const second = await signUp(gw.app);
    const secondKey = (await createKey(second.agent)).secret;
    const subscribe = (apiKey: string, url: string) =>
      request(gw.app)
        .post('/api/v1/subscriptions')
        .set('X-API-Key', apiKey)
        .send({ url, since: 'all', preset: { audio_only: true } })
        .expect(201);
    const items = async (apiKey: string, sub: string) =>
      (await request(gw.app).get(`/api/v1/subscriptions/${sub}/items`).set('X-API-Key', apiKey).expect(200)).body
        .data as { job_id?: string; status: string }[];

    // Three new entries, two slots (MAX_ACTIVE_JOBS_PER_CLIENT): two start, the third waits unfailed.
    const sub = (await subscribe(firstKey, heldFeed(3))).body.data.id as string;
    let seen = await items(firstKey, sub);
    expect(seen.filter((i) => i.job_id)).toHaveLength(2);
    expect(seen.filter((i) => i.status === 'failed')).toEqual([]);
    // Another account's subscription has slots of its own.
    const other = (await subscribe(secondKey, heldFeed(2))).body.data.id as string;
    expect((await items(secondKey, other)).filter((i) => i.job_id)).toHaveLength(2);

    // The owner's key (or session) controls its subscription's jobs; nobody else does, token or not.
    const [job] = seen.filter((i) => i.job_id).map((i) => i.job_id!);
    expectError(await cancel(job), 403, 'job_control_forbidden');
    expectError(await cancel(job).set('X-API-Key', secondKey), 403, 'job_control_forbidden');
    await cancel(job).set('X-API-Key', firstKey).expect(204);
    // A slot is free: the next check starts the entry that waited.
    await request(gw.app).post(`/api/v1/subscriptions/${sub}/check`).set('X-API-Key', firstKey).expect(200);
    seen = await items(firstKey, sub);
    expect(seen.filter((i) => i.job_id)).toHaveLength(3);
    for (const i of seen.filter((s) => s.job_id && s.status !== 'cancelled'))
      await cancel(i.job_id!).set('X-API-Key', firstKey).expect(204);
    for (const i of (await items(secondKey, other)).filter((s) => s.job_id)) {
      expectError(await first.agent.delete(`/api/v1/jobs/${i.job_id}`), 403, 'job_control_forbidden');
      await second.agent.delete(`/api/v1/jobs/${i.job_id}`).expect(204);
    }
  }, 40_000);
});
