import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import request from 'supertest';
import { startOrigin, testMedia, type Origin } from '@reelay/testkit';
import { buildGateway, type TestGateway } from './helpers.js';
import { createKey, eventually, expectError, PASSWORD, signUp, uniqueIp } from './account-helpers.js';

let gw: TestGateway;
let other: TestGateway;
let origin: Origin;

beforeAll(async () => {
  const media = await testMedia();
  origin = await startOrigin();
  origin.file('/clip.mp4', media.muxedMp4, 'video/mp4');
  gw = await buildGateway({ env: { TRUST_PROXY: 'true' } });
  // A second replica on the same Redis: what one gateway changes, the other must see at once.
  other = await buildGateway({ env: { TRUST_PROXY: 'true' } });
});
afterAll(async () => {
  await Promise.all([gw.close(), other.close()]);
  await origin.close();
});

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

async function secondSession(email: string, userAgent = IPHONE) {
  const ip = uniqueIp();
  const agent = request.agent(gw.app).set('X-Forwarded-For', ip).set('User-Agent', userAgent);
  await agent.post('/account/login').send({ email, password: PASSWORD }).expect(200);
  return { agent, ip };
}

describe('sessions', () => {
  test('lists each signed-in device with its address and marks the current one', async () => {
    const first = await signUp(gw.app);
    await first.agent.get('/account/me').set('User-Agent', FIREFOX).expect(200);
    const phone = await secondSession(first.email);
    const res = await first.agent.get('/account/sessions').expect(200);
    const sessions = res.body.data.sessions as {
      current: boolean;
      device: string;
      ip: string;
      id: string;
      created_at: string;
      last_seen_at: string;
    }[];
    expect(sessions).toHaveLength(2);
    expect(sessions.find((s) => s.current)).toMatchObject({ ip: first.ip });
    expect(sessions.find((s) => !s.current)).toMatchObject({ ip: phone.ip, device: 'Safari on iOS' });
    for (const s of sessions) {
      expect(s.id).toMatch(/^[0-9a-f]{16}$/);
      expect(Date.parse(s.last_seen_at)).toBeGreaterThanOrEqual(Date.parse(s.created_at));
    }
    // The list never holds the cookie's secret.
    expect(JSON.stringify(res.body)).not.toContain(
      (
        await first.agent.jar.getCookie('reelay_session', {
          domain: '127.0.0.1',
          path: '/',
          secure: false,
          script: false,
        })
      )?.value ?? 'none',
    );
  });

  test('ending the others signs out every other device, on every gateway, and keeps this one', async () => {
    const first = await signUp(gw.app);
    const a = await secondSession(first.email);
    const b = await secondSession(first.email, FIREFOX);
    const res = await first.agent.delete('/account/sessions').expect(200);
    expect(res.body).toEqual({ success: true, data: { ended: 2 } });
    expectError(await a.agent.get('/account/me'), 401, 'not_signed_in');
    expectError(await b.agent.get('/account/me'), 401, 'not_signed_in');
    await first.agent.get('/account/me').expect(200);
    expect((await first.agent.get('/account/sessions').expect(200)).body.data.sessions).toHaveLength(1);
  });

  test('ending the others is refused cross-site', async () => {
    const first = await signUp(gw.app);
    expectError(
      await first.agent.delete('/account/sessions').set('Origin', 'https://evil.example'),
      403,
      'cross_site_request',
    );
  });
});

describe('deleting the account', () => {
  test('with the password: keys answer 401 at once on every gateway, sessions end, sign-in fails, usage is gone', async () => {
    const user = await signUp(gw.app);
    const key = await createKey(user.agent);
    const elsewhere = await secondSession(user.email);
    await request(other.app)
      .post('/api')
      .set('X-API-Key', key.secret)
      .set('X-Forwarded-For', user.ip)
      .send({ url: 'not a url' })
      .expect(400);
    await eventually(async () =>
      expect((await user.agent.get(`/account/keys/${key.id}/usage?days=1`).expect(200)).body.data[0].requests).toBe(1),
    );
    const usagePattern = `reelay:key-usage:${createHash('sha256').update(key.secret).digest('hex')}:*`;
    expect(await gw.redis.keys(usagePattern)).toHaveLength(1);

    expectError(await user.agent.delete('/account').send({ password: 'not the password' }), 401, 'invalid_credentials');
    await user.agent.delete('/account').send({ password: PASSWORD }).expect(204);

    expectError(
      await request(other.app)
        .post('/api')
        .set('X-API-Key', key.secret)
        .send({ url: origin.url('/clip.mp4') }),
      401,
      'invalid_api_key',
    );
    expectError(await user.agent.get('/account/me'), 401, 'not_signed_in');
    expectError(await elsewhere.agent.get('/account/me'), 401, 'not_signed_in');
    expectError(
      await request(gw.app)
        .post('/account/login')
        .set('X-Forwarded-For', uniqueIp())
        .send({ email: user.email, password: PASSWORD }),
      401,
      'invalid_credentials',
    );
    expect(await gw.redis.keys(usagePattern)).toHaveLength(0);
    // The address is free again.
    await request(gw.app)
      .post('/account/signup')
      .set('X-Forwarded-For', uniqueIp())
      .send({ email: user.email, password: PASSWORD })
      .expect(201);
  });

  test('without the password only within 10 minutes of signing in', async () => {
    const fresh = await signUp(gw.app);
    await fresh.agent.delete('/account').expect(204);
    expectError(await fresh.agent.get('/account/me'), 401, 'not_signed_in');

    const stale = await signUp(gw.app);
    // Age the session's sign-in time by 11 minutes, as the clock would.
    for (const k of await gw.redis.keys('reelay:session:*')) {
      const raw = await gw.redis.get(k);
      if (raw && JSON.parse(raw).email === stale.email)
        await gw.redis.set(k, JSON.stringify({ ...JSON.parse(raw), created_at: Date.now() - 11 * 60_000 }), 'KEEPTTL');
    }
    expectError(await stale.agent.delete('/account'), 401, 'invalid_credentials');
    expectError(await stale.agent.delete('/account').send({}), 401, 'invalid_credentials');
    await stale.agent.get('/account/me').expect(200);
    await stale.agent.delete('/account').send({ password: PASSWORD }).expect(204);
  });

  test('is refused cross-site, without a session, and with a bad body', async () => {
    const user = await signUp(gw.app);
    expectError(await user.agent.delete('/account').set('Origin', 'https://evil.example'), 403, 'cross_site_request');
    expectError(await request(gw.app).delete('/account'), 401, 'not_signed_in');
    expectError(await user.agent.delete('/account').send({ password: 12 }), 400, 'invalid_request');
    expectError(
      await user.agent.delete('/account').set('Content-Type', 'application/json').send('[1]'),
      400,
      'invalid_request',
    );
    await user.agent.get('/account/me').expect(200);
  });

  test('wrong passwords are throttled like sign-ins', async () => {
    const user = await signUp(gw.app);
    const codes: number[] = [];
    for (let i = 0; i < 7; i++)
      codes.push((await user.agent.delete('/account').send({ password: `wrong ${i}` })).status);
    expect(codes).toContain(429);
    await user.agent.get('/account/me').expect(200);
  });
});

describe('usage over time', () => {
  test('counts every request of the day across two gateways, successful ones apart', async () => {
    const user = await signUp(gw.app);
    const key = await createKey(user.agent);
    const send = (app: TestGateway, url: string) =>
      request(app.app).post('/api').set('X-API-Key', key.secret).set('X-Forwarded-For', user.ip).send({ url });
    const good = origin.url('/clip.mp4');
    const results = await Promise.all([
      send(gw, good),
      send(other, good),
      send(other, good),
      send(gw, 'not a url'),
      send(other, 'ftp://x'),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 400, 400]);
    await eventually(async () => {
      const res = await user.agent.get(`/account/keys/${key.id}/usage?days=7`).expect(200);
      expect(res.body.data).toHaveLength(7);
      const today = new Date().toISOString().slice(0, 10);
      expect(res.body.data[6]).toEqual({ date: today, requests: 5, successful: 3 });
      expect(res.body.data.slice(0, 6).every((d: { requests: number }) => d.requests === 0)).toBe(true);
      // Days in order, one apart.
      const dates = res.body.data.map((d: { date: string }) => Date.parse(d.date));
      dates.slice(1).forEach((d: number, i: number) => expect(d - dates[i]).toBe(86_400_000));
    });
    // The key's list agrees with its history.
    const listed = (await user.agent.get('/account/keys').expect(200)).body.data.keys[0];
    expect(listed.usage).toMatchObject({ total_requests: 5, successful_requests: 3 });
  });

  test('a day is kept at most 92 days in Redis', async () => {
    const user = await signUp(gw.app);
    const key = await createKey(user.agent);
    await request(gw.app)
      .post('/api')
      .set('X-API-Key', key.secret)
      .set('X-Forwarded-For', user.ip)
      .send({ url: 'nope' })
      .expect(400);
    await eventually(async () =>
      expect((await user.agent.get(`/account/keys/${key.id}/usage?days=1`).expect(200)).body.data[0].requests).toBe(1),
    );
    const ttls = await Promise.all((await gw.redis.keys('reelay:key-usage:*')).map((k) => gw.redis.ttl(k)));
    for (const ttl of ttls) {
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(92 * 86_400);
    }
  });

  test('defaults to 30 days, allows 90, and refuses anything else', async () => {
    const user = await signUp(gw.app);
    const key = await createKey(user.agent);
    expect((await user.agent.get(`/account/keys/${key.id}/usage`).expect(200)).body.data).toHaveLength(30);
    expect((await user.agent.get(`/account/keys/${key.id}/usage?days=90`).expect(200)).body.data).toHaveLength(90);
    for (const days of ['0', '91', '-1', '1.5', 'abc', '99999999999', '']) {
      expectError(await user.agent.get(`/account/keys/${key.id}/usage?days=${days}`), 400, 'invalid_request');
    }
    expectError(await user.agent.get(`/account/keys/${key.id}/usage?days=1&days=2`), 400, 'invalid_request');
    expectError(await user.agent.get('/account/keys/nope/usage'), 404, 'not_found');
    const stranger = await signUp(gw.app);
    expectError(await stranger.agent.get(`/account/keys/${key.id}/usage`), 404, 'not_found');
    expectError(await request(gw.app).get(`/account/keys/${key.id}/usage`), 401, 'not_signed_in');
  });
});
