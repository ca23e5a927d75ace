// The subscriptions API's limit per client address (RATE_LIMIT_SUBSCRIPTIONS_PER_MIN): every route
// under /api/v1/subscriptions counts, answered or refused, with surface B's RateLimit-* headers, in
// buckets of its own; past it, 429 rate_limited with Retry-After.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildGateway, type TestGateway } from './helpers.js';
import { createKey, expectError, signUp, uniqueIp } from './account-helpers.js';

let limited: TestGateway;
let unlimited: TestGateway;

beforeAll(async () => {
  limited = await buildGateway({ env: { TRUST_PROXY: 'true', RATE_LIMIT_SUBSCRIPTIONS_PER_MIN: '3' } });
  unlimited = await buildGateway({ env: { TRUST_PROXY: 'true', RATE_LIMIT_SUBSCRIPTIONS_PER_MIN: '0' } });
});
afterAll(async () => {
  await Promise.all([limited.close(), unlimited.close()]);
});

const headers = (res: request.Response) => ({
  limit: res.headers['ratelimit-limit'],
  remaining: res.headers['ratelimit-remaining'],
});

describe('RATE_LIMIT_SUBSCRIPTIONS_PER_MIN', () => {
  test('every subscriptions route counts per client address, with a key, a session or neither; past it 429 rate_limited with Retry-After', async () => {
    const user = await signUp(limited.app);
    const { secret } = await createKey(user.agent);
    const ip = uniqueIp();
    const list = await request(limited.app)
      .get('/api/v1/subscriptions')
      .set('X-Forwarded-For', ip)
      .set('X-API-Key', secret);
    expect(list.status).toBe(200);
    expect(headers(list)).toEqual({ limit: '3', remaining: '2' });
    expect(Number(list.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(59);
    const unknown = await request(limited.app)
      .get('/api/v1/subscriptions/sub_nope')
      .set('X-Forwarded-For', ip)
      .set('X-API-Key', secret);
    expectError(unknown, 404, 'subscription_not_found');
    expect(headers(unknown)).toEqual({ limit: '3', remaining: '1' });
    // Refused for want of a key: counted all the same (guessing keys costs budget).
    const anonymous = await request(limited.app).get('/api/v1/subscriptions').set('X-Forwarded-For', ip);
    expectError(anonymous, 401, 'api_key_required');
    expect(headers(anonymous)).toEqual({ limit: '3', remaining: '0' });
    const refused = await request(limited.app)
      .post('/api/v1/subscriptions')
      .set('X-Forwarded-For', ip)
      .set('X-API-Key', secret)
      .send({ url: 'https://podcasts.example.com/feed.xml' });
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    // The web app's session from the same address is refused too; another address has its own budget.
    expectError(await user.agent.get('/api/v1/subscriptions').set('X-Forwarded-For', ip), 429, 'rate_limited');
    const elsewhere = await request(limited.app)
      .get('/api/v1/subscriptions')
      .set('X-Forwarded-For', uniqueIp())
      .set('X-API-Key', secret)
      .expect(200);
    expect(headers(elsewhere)).toEqual({ limit: '3', remaining: '2' });
    expect((await request(limited.app).get('/metrics')).text).toMatch(
      /reelay_rate_limited_total\{surface="subscriptions",app="gateway"\} 2/,
    );
  });

  test('its budget is its own: subscriptions requests are not counted in the extract and download bucket', async () => {
    const user = await signUp(limited.app);
    const { secret } = await createKey(user.agent);
    const ip = uniqueIp();
    for (let i = 0; i < 3; i++)
      await request(limited.app)
        .get('/api/v1/subscriptions')
        .set('X-Forwarded-For', ip)
        .set('X-API-Key', secret)
        .expect(200);
    expect(await limited.redis.exists(`reelay:rl:v1:ip:${ip}`)).toBe(0);
  });

  test('0 turns it off: no RateLimit headers, no refusals', async () => {
    const user = await signUp(unlimited.app);
    const { secret } = await createKey(user.agent);
    const ip = uniqueIp();
    for (let i = 0; i < 6; i++) {
      const res = await request(unlimited.app)
        .get('/api/v1/subscriptions')
        .set('X-Forwarded-For', ip)
        .set('X-API-Key', secret)
        .expect(200);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });
});
