import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Writable } from 'node:stream';
import request from 'supertest';
import { createLogger } from '@reelay/observability';
import { startOrigin, startRedis, testMedia, type Origin } from '@reelay/testkit';
import type { GatewayDeps } from '../src/index.js';
import { buildGateway, testRedis, type TestGateway } from './helpers.js';
import { createKey, eventually, expectError, PASSWORD, signUp, uniqueEmail, uniqueIp } from './account-helpers.js';

let origin: Origin;
let gw: TestGateway;
const open: TestGateway[] = [];

/**
 * A gateway that trusts X-Forwarded-For, so every test can be a client address of its own, with the
 * playground's limit at its production default (15; testConfig raises it for other test files).
 */
async function gateway(env: Record<string, string> = {}, deps: Partial<GatewayDeps> = {}): Promise<TestGateway> {
  const built = await buildGateway({ env: { TRUST_PROXY: 'true', RATE_LIMIT_PUBLIC_PER_MIN: '15', ...env }, deps });
  open.push(built);
  return built;
}

beforeAll(async () => {
  const media = await testMedia();
  origin = await startOrigin();
  origin.file('/clip.mp4', media.muxedMp4, 'video/mp4');
  origin.status('/missing', 404);
  gw = await gateway();
});

afterAll(async () => {
  await Promise.all(open.map((g) => g.close()));
  await origin.close();
});

const api = (app: TestGateway, ip: string, key?: string) => {
  const req = request(app.app).post('/api').set('X-Forwarded-For', ip);
  return key === undefined ? req : req.set('X-API-Key', key);
};
const playground = (app: TestGateway, ip: string) =>
  request(app.app).post('/api/playground').set('X-Forwarded-For', ip);

function limitHeaders(res: request.Response) {
  return {
    limit: Number(res.headers['ratelimit-limit']),
    remaining: Number(res.headers['ratelimit-remaining']),
    reset: Number(res.headers['ratelimit-reset']),
  };
}

describe('POST /api and POST /api/playground', () => {
  test('the playground answers exactly what /api/v1/extract answers, with the public limit headers', async () => {
    const url = origin.url('/clip.mp4');
    const res = await playground(gw, uniqueIp()).send({ url }).expect(200);
    const surfaceB = await request(gw.app).post('/api/v1/extract').send({ url }).expect(200);
    // Each extract has its own extraction_id; everything else is the same answer.
    expect({ ...res.body, data: { ...res.body.data, extraction_id: 'id' } }).toEqual({
      ...surfaceB.body,
      data: { ...surfaceB.body.data, extraction_id: 'id' },
    });
    expect(res.body).toMatchObject({ success: true, data: { url, extract_profile: 'direct_file' } });
    const headers = limitHeaders(res);
    expect(headers).toMatchObject({ limit: 15, remaining: 14 });
    expect(headers.reset).toBeGreaterThanOrEqual(59);
    expect(headers.reset).toBeLessThanOrEqual(60);
  });

  test('/api without a key is api_key_required, and an unknown key is invalid_api_key, both with limit headers', async () => {
    const ip = uniqueIp();
    const missing = await api(gw, ip).send({ url: origin.url('/clip.mp4') });
    expectError(missing, 401, 'api_key_required');
    expect(limitHeaders(missing)).toMatchObject({ limit: 15, remaining: 14 });
    const unknown = await api(gw, ip, `rly_${'x'.repeat(43)}`).send({ url: origin.url('/clip.mp4') });
    expectError(unknown, 401, 'invalid_api_key');
    expect(limitHeaders(unknown)).toMatchObject({ limit: 15, remaining: 13 });
    expectError(await api(gw, ip, '').send({ url: origin.url('/clip.mp4') }), 401, 'api_key_required');
  });

  test('extract errors and bad bodies pass through the gate and carry its headers', async () => {
    const { agent } = await signUp(gw.app);
    const key = await createKey(agent);
    const ip = uniqueIp();
    const notFound = await api(gw, ip, key.secret).send({ url: origin.url('/missing') });
    expectError(notFound, 404, 'content_not_found');
    expect(limitHeaders(notFound)).toMatchObject({ limit: 100, remaining: 99 });
    const malformed = await api(gw, ip, key.secret).set('Content-Type', 'application/json').send('{"url":');
    expectError(malformed, 400, 'invalid_request');
    expect(limitHeaders(malformed)).toMatchObject({ remaining: 98 });
    expectError(await playground(gw, ip).send({ url: 'ftp://nope' }), 400, 'invalid_url');
  });
});

describe('a key through its life', () => {
  test('create, use, count, disable (403), enable, delete (401)', async () => {
    const { agent } = await signUp(gw.app);
    const key = await createKey(agent, 'lifecycle');
    const ip = uniqueIp();
    const url = origin.url('/clip.mp4');

    const ok = await api(gw, ip, key.secret).send({ url }).expect(200);
    expect(ok.body).toMatchObject({ success: true, data: { url } });
    expect(limitHeaders(ok)).toMatchObject({ limit: 100, remaining: 99 });
    expectError(await api(gw, ip, key.secret).send({ url: origin.url('/missing') }), 404, 'content_not_found');
    await eventually(async () => {
      const [listed] = (await agent.get('/account/keys').expect(200)).body.data.keys;
      expect(listed.usage).toEqual({ total_requests: 2, successful_requests: 1, success_rate: 0.5 });
      expect(Date.now() - Date.parse(listed.last_used_at)).toBeLessThan(10_000);
    });

    await agent.post(`/account/keys/${key.id}/disable`).expect(200);
    const disabled = await api(gw, ip, key.secret).send({ url });
    expectError(disabled, 403, 'api_key_disabled');
    expect(limitHeaders(disabled)).toMatchObject({ limit: 100, remaining: 97 });

    await agent.post(`/account/keys/${key.id}/enable`).expect(200);
    await api(gw, ip, key.secret).send({ url }).expect(200);
    await eventually(async () => {
      const [listed] = (await agent.get('/account/keys').expect(200)).body.data.keys;
      // The refused request counts too: the owner sees that something still uses the key.
      expect(listed.usage).toEqual({ total_requests: 4, successful_requests: 2, success_rate: 0.5 });
    });

    await agent.delete(`/account/keys/${key.id}`).expect(204);
    const deleted = await api(gw, ip, key.secret).send({ url });
    expectError(deleted, 401, 'invalid_api_key');
    expect(limitHeaders(deleted)).toMatchObject({ limit: 15 });
  });
});

describe('rate limits held in Redis across gateway replicas', () => {
  test('15 playground requests split across two gateways use up one budget; the 16th is 429 with Retry-After', async () => {
    const other = await gateway();
    const ip = uniqueIp();
    const url = origin.url('/clip.mp4');
    const remaining: number[] = [];
    for (let i = 0; i < 15; i++) {
      const res = await playground(i % 2 ? other : gw, ip)
        .send({ url })
        .expect(200);
      remaining.push(limitHeaders(res).remaining);
    }
    expect(remaining).toEqual([14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    const refused = await playground(other, ip).send({ url });
    expectError(refused, 429, 'rate_limited');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limitHeaders(refused)).toEqual({ limit: 15, remaining: 0, reset: retryAfter });
    expectError(await playground(gw, ip).send({ url }), 429, 'rate_limited');
    await playground(gw, uniqueIp()).send({ url }).expect(200);
    const metrics = (await request(other.app).get('/metrics')).text;
    expect(metrics).toMatch(/reelay_rate_limited_total\{surface="playground",app="gateway"\} 1\n/);
  });

  test('a key has its own budget across gateways, apart from its address', async () => {
    const a = await gateway({ RATE_LIMIT_KEY_PER_MIN: '3' });
    const b = await gateway({ RATE_LIMIT_KEY_PER_MIN: '3' });
    const { agent } = await signUp(a.app);
    const key = await createKey(agent);
    const ip = uniqueIp();
    const url = origin.url('/clip.mp4');
    expect(limitHeaders(await api(a, ip, key.secret).send({ url }).expect(200))).toMatchObject({
      limit: 3,
      remaining: 2,
    });
    expect(limitHeaders(await api(b, ip, key.secret).send({ url }).expect(200))).toMatchObject({ remaining: 1 });
    expect(limitHeaders(await api(a, ip, key.secret).send({ url }).expect(200))).toMatchObject({ remaining: 0 });
    const refused = await api(b, ip, key.secret).send({ url });
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    await playground(a, ip).send({ url }).expect(200);
    const another = await createKey(agent, 'second');
    await api(b, ip, another.secret).send({ url }).expect(200);
  });

  test('unknown keys are charged to the address: guessing keys stops at the public limit', async () => {
    const app = await gateway({ RATE_LIMIT_PUBLIC_PER_MIN: '3' });
    const { agent } = await signUp(app.app);
    const key = await createKey(agent);
    const ip = uniqueIp();
    for (let i = 0; i < 3; i++)
      expectError(await api(app, ip, `rly_guess_${i}`).send({ url: origin.url('/clip.mp4') }), 401, 'invalid_api_key');
    expectError(await api(app, ip, 'rly_guess_4').send({ url: origin.url('/clip.mp4') }), 429, 'rate_limited');
    expectError(await playground(app, ip).send({ url: origin.url('/clip.mp4') }), 429, 'rate_limited');
    // A real key from the same address is not held back by the guesses.
    await api(app, ip, key.secret)
      .send({ url: origin.url('/clip.mp4') })
      .expect(200);
  });

  test('when Redis is down, /api and the playground answer 503, never unlimited', async () => {
    const server = await startRedis();
    const down = await buildGateway({ redis: await testRedis(server.url), env: { TRUST_PROXY: 'true' } });
    try {
      await playground(down, uniqueIp())
        .send({ url: origin.url('/clip.mp4') })
        .expect(200);
      await server.stop();
      expectError(
        await api(down, uniqueIp(), `rly_${'y'.repeat(43)}`).send({ url: origin.url('/clip.mp4') }),
        503,
        'service_unavailable',
      );
      expectError(await api(down, uniqueIp()).send({ url: origin.url('/clip.mp4') }), 503, 'service_unavailable');
      expectError(
        await playground(down, uniqueIp()).send({ url: origin.url('/clip.mp4') }),
        503,
        'service_unavailable',
      );
      expectError(
        await request(down.app).post('/account/login').send({ email: uniqueEmail(), password: PASSWORD }),
        503,
        'service_unavailable',
      );
    } finally {
      down.redis.disconnect();
      await down.close();
    }
  });
});

describe('observability', () => {
  test('surface requests are counted by surface and key check', async () => {
    const app = await gateway();
    const { agent } = await signUp(app.app);
    const key = await createKey(agent);
    const ip = uniqueIp();
    const url = origin.url('/clip.mp4');
    await api(app, ip, key.secret).send({ url }).expect(200);
    await api(app, ip).send({ url }).expect(401);
    await api(app, ip, 'rly_nope').send({ url }).expect(401);
    await agent.post(`/account/keys/${key.id}/disable`).expect(200);
    await api(app, ip, key.secret).send({ url }).expect(403);
    await playground(app, ip).send({ url }).expect(200);
    const text = (await request(app.app).get('/metrics')).text;
    for (const [surface, auth] of [
      ['api', 'ok'],
      ['api', 'missing'],
      ['api', 'invalid'],
      ['api', 'disabled'],
      ['playground', 'none'],
    ]) {
      expect(text).toContain(`reelay_surface_requests_total{surface="${surface}",auth="${auth}",app="gateway"} 1\n`);
    }
    expect(text).not.toContain(key.secret);
  });

  test('no password, key, session id or cookie reaches a log line', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ name: 'gateway-test', level: 'trace', destination: sink });
    const app = await gateway({ LOG_LEVEL: 'trace' }, { logger });
    const email = uniqueEmail();
    const ip = uniqueIp();
    const signup = await request(app.app)
      .post('/account/signup')
      .set('X-Forwarded-For', ip)
      .send({ email, password: PASSWORD })
      .expect(201);
    const cookie = String(signup.headers['set-cookie']).split(';')[0];
    await request(app.app)
      .post('/account/login')
      .set('X-Forwarded-For', ip)
      .send({ email, password: `${PASSWORD} wrong` })
      .expect(401);
    const key = (
      await request(app.app).post('/account/keys').set('Cookie', cookie).send({ name: 'logged' }).expect(201)
    ).body.data as { secret: string };
    await api(app, ip, key.secret)
      .send({ url: origin.url('/clip.mp4') })
      .expect(200);
    await api(app, ip, key.secret)
      .send({ url: origin.url('/missing') })
      .expect(404);
    await request(app.app).get('/account/keys').set('Cookie', cookie).expect(200);
    await request(app.app).post('/account/logout').set('Cookie', cookie).expect(204);
    const log = lines.join('');
    expect(log).toContain('/account/login');
    expect(log).toContain('"url":"/api"');
    for (const secret of [PASSWORD, key.secret, key.secret.slice(4), cookie, cookie.split('=')[1]])
      expect(log).not.toContain(secret);
  });
});

describe('the OpenAPI document', () => {
  test('describes /api with its key, limit headers and refusals, and the playground without a key', async () => {
    const doc = (await request(gw.app).get('/api/openapi.json').expect(200)).body;
    const apiOp = doc.paths['/api'].post;
    expect(apiOp.security).toEqual([{ apiKey: [] }]);
    expect(doc.components.securitySchemes.apiKey).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    );
    expect(apiOp.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ExtractRequest',
    });
    expect(apiOp.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ExtractEnvelope',
    });
    expect(Object.keys(apiOp.responses['200'].headers)).toEqual([
      'Age',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
    ]);
    expect(Object.keys(apiOp.responses)).toEqual(expect.arrayContaining(['401', '403', '429']));
    expect(apiOp.responses['429'].headers).toHaveProperty('Retry-After');
    const playgroundOp = doc.paths['/api/playground'].post;
    expect(playgroundOp.security).toEqual([]);
    expect(Object.keys(playgroundOp.responses)).not.toContain('401');
  });
});
