import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  ApiKeyEnvelopeSchema,
  ApiKeyListEnvelopeSchema,
  CreatedApiKeyEnvelopeSchema,
  MAX_KEYS_PER_ACCOUNT,
} from '@reelay/accounts';
import request from 'supertest';
import { buildGateway, type TestGateway } from './helpers.js';
import { createKey, expectError, PASSWORD, signUp, uniqueEmail, uniqueIp } from './account-helpers.js';

let gw: TestGateway;

beforeAll(async () => {
  gw = await buildGateway({ env: { TRUST_PROXY: 'true' } });
});
afterAll(() => gw.close());

/** A request from a client address of its own, so login slowing never spills between tests. */
const from = (ip = uniqueIp()) => ({
  post: (path: string) => request(gw.app).post(path).set('X-Forwarded-For', ip),
  get: (path: string) => request(gw.app).get(path).set('X-Forwarded-For', ip),
});

function sessionCookie(res: request.Response): string {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const cookie = cookies.find((c) => c.startsWith('reelay_session='));
  if (!cookie) throw new Error(`no session cookie in ${JSON.stringify(cookies)}`);
  return cookie;
}

describe('sign-up', () => {
  test('creates the account, signs in with an HttpOnly, SameSite=Lax cookie, and normalises the e-mail', async () => {
    const email = uniqueEmail();
    const res = await from()
      .post('/account/signup')
      .send({ email: `  ${email.toUpperCase()} `, password: PASSWORD })
      .expect(201);
    expect(res.body).toEqual({ success: true, data: { email } });
    expect(res.headers['cache-control']).toBe('no-store');
    const cookie = sessionCookie(res);
    expect(cookie).toMatch(/^reelay_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Secure/);
    const me = await request(gw.app).get('/account/me').set('Cookie', cookie.split(';')[0]).expect(200);
    expect(me.body).toEqual({
      success: true,
      data: { email, email_verified: false, has_password: true, identities: [] },
    });
  });

  test('the cookie is Secure when the request came over https', async () => {
    const res = await from()
      .post('/account/signup')
      .set('X-Forwarded-Proto', 'https')
      .send({ email: uniqueEmail(), password: PASSWORD })
      .expect(201);
    expect(sessionCookie(res)).toMatch(/; Secure/);
  });

  test('an address that has an account is email_taken, whatever its case', async () => {
    const email = uniqueEmail();
    await from().post('/account/signup').send({ email, password: PASSWORD }).expect(201);
    expectError(
      await from().post('/account/signup').send({ email: email.toUpperCase(), password: 'another password' }),
      409,
      'email_taken',
    );
  });

  test.each([
    ['a password under 10 characters', { email: 'short@example.com', password: '123456789' }],
    ['an address that is not one', { email: 'not-an-address', password: PASSWORD }],
    ['no password', { email: 'nopass@example.com' }],
    ['no e-mail', { password: PASSWORD }],
    ['a number as password', { email: 'num@example.com', password: 12345678901 }],
    ['a domain label ending in a hyphen', { email: 'ann@exa-.com', password: PASSWORD }],
    ['a domain label starting with a hyphen', { email: 'ann@-exa.com', password: PASSWORD }],
    ['two dots in a row', { email: 'ann..lee@example.com', password: PASSWORD }],
  ])('%s is invalid_request', async (_name, body) => {
    expectError(await from().post('/account/signup').send(body), 400, 'invalid_request');
  });

  test('a hyphen inside a domain label is an address like any other', async () => {
    const email = `user-${Date.now()}@mail.ex-ample.co.uk`;
    await from().post('/account/signup').send({ email, password: PASSWORD }).expect(201);
  });

  test('sign-up and sign-in refuse fields they do not take, naming them, and create no account', async () => {
    const email = uniqueEmail();
    const refused = await from().post('/account/signup').send({ email, password: PASSWORD, admin: true });
    expectError(refused, 400, 'invalid_request');
    expect(refused.body.error.message).toContain('"admin"');
    expectError(await from().post('/account/login').send({ email, password: PASSWORD }), 401, 'invalid_credentials');
    await from().post('/account/signup').send({ email, password: PASSWORD }).expect(201);
    const login = await from()
      .post('/account/login')
      .send({ email, password: PASSWORD, remember: true, role: 'admin' });
    expectError(login, 400, 'invalid_request');
    expect(login.body.error.message).toContain('"remember", "role"');
  });

  test('one address signing up over and over is rate_limited with Retry-After; other addresses are not', async () => {
    const ip = uniqueIp();
    for (let i = 0; i < 10; i++)
      await from(ip).post('/account/signup').send({ email: uniqueEmail(), password: PASSWORD }).expect(201);
    const refused = await from(ip).post('/account/signup').send({ email: uniqueEmail(), password: PASSWORD });
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3000);
    await from().post('/account/signup').send({ email: uniqueEmail(), password: PASSWORD }).expect(201);
    expect((await request(gw.app).get('/metrics')).text).toMatch(
      /reelay_rate_limited_total\{surface="signup",app="gateway"\} [1-9]/,
    );
  });

  test('a body that is not JSON is 415', async () => {
    expectError(
      await from()
        .post('/account/signup')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send('email=a@b.c&password=1234567890'),
      415,
      'unsupported_media_type',
    );
  });
});

describe('sign-in and sign-out', () => {
  test('the right password signs in; the session shows in /account/me', async () => {
    const email = uniqueEmail();
    await from().post('/account/signup').send({ email, password: PASSWORD }).expect(201);
    const res = await from()
      .post('/account/login')
      .send({ email: ` ${email.toUpperCase()}`, password: PASSWORD })
      .expect(200);
    expect(res.body).toEqual({ success: true, data: { email } });
    const me = await request(gw.app).get('/account/me').set('Cookie', sessionCookie(res).split(';')[0]).expect(200);
    expect(me.body).toEqual({
      success: true,
      data: { email, email_verified: false, has_password: true, identities: [] },
    });
  });

  test('an unknown e-mail and a wrong password get the same answer in similar time', async () => {
    const email = uniqueEmail();
    await from().post('/account/signup').send({ email, password: PASSWORD }).expect(201);
    const time = async (body: object) => {
      const started = process.hrtime.bigint();
      const res = await from().post('/account/login').send(body);
      return { res, ms: Number(process.hrtime.bigint() - started) / 1e6 };
    };
    const wrong: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 3; i++) {
      const a = await time({ email, password: `wrong password ${i}` });
      const b = await time({ email: uniqueEmail(), password: PASSWORD });
      expectError(a.res, 401, 'invalid_credentials');
      expect(b.res.status).toBe(401);
      expect(b.res.body).toEqual(a.res.body);
      expect(b.res.headers['set-cookie']).toBeUndefined();
      wrong.push(a.ms);
      unknown.push(b.ms);
    }
    // Both run scrypt; without the dummy hash an unknown address would answer in a fraction of the time.
    expect(Math.min(...unknown)).toBeGreaterThan(Math.min(...wrong) * 0.4);
  });

  test('5 wrong passwords from another address slow the owner by a second, not lock them out; that address is blocked', async () => {
    const email = uniqueEmail();
    await from().post('/account/signup').send({ email, password: PASSWORD }).expect(201);
    const attacker = uniqueIp();
    for (let i = 0; i < 5; i++)
      expectError(
        await from(attacker)
          .post('/account/login')
          .send({ email, password: `guess ${i} guess` }),
        401,
        'invalid_credentials',
      );
    const owner = uniqueIp();
    const delayed = await from(owner).post('/account/login').send({ email, password: PASSWORD });
    expectError(delayed, 429, 'rate_limited');
    expect(delayed.headers['retry-after']).toBe('1');
    await new Promise((r) => setTimeout(r, 1100));
    await from(owner).post('/account/login').send({ email, password: PASSWORD }).expect(200);
    // The attacker's address stays blocked for this account for the window, the right password included.
    const blocked = await from(attacker).post('/account/login').send({ email, password: PASSWORD });
    expectError(blocked, 429, 'rate_limited');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(60);
    expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(900);
    const metrics = (await request(gw.app).get('/metrics')).text;
    expect(metrics).toMatch(/reelay_rate_limited_total\{surface="login",app="gateway"\} [1-9]/);
  });

  test('50 parallel wrong passwords get 5 tries at most; the others are 429 at once', async () => {
    const email = uniqueEmail();
    await from().post('/account/signup').send({ email, password: PASSWORD }).expect(201);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        from()
          .post('/account/login')
          .send({ email, password: `guess ${i} guess` }),
      ),
    );
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(45);
    for (const res of answers)
      expect(res.body).toEqual({ success: false, error: { code: expect.any(String), message: expect.any(String) } });
  });

  test('one address failing against many accounts is slowed too', async () => {
    const ip = uniqueIp();
    for (let i = 0; i < 20; i++)
      expectError(
        await from(ip).post('/account/login').send({ email: uniqueEmail(), password: PASSWORD }),
        401,
        'invalid_credentials',
      );
    expectError(
      await from(ip).post('/account/login').send({ email: uniqueEmail(), password: PASSWORD }),
      429,
      'rate_limited',
    );
    expectError(
      await from().post('/account/login').send({ email: uniqueEmail(), password: PASSWORD }),
      401,
      'invalid_credentials',
    );
  });

  test('logout ends the session for good and clears the cookie', async () => {
    const { agent } = await signUp(gw.app);
    await agent.get('/account/me').expect(200);
    const me = await agent.get('/account/me');
    const cookie = sessionCookie(me).split(';')[0];
    const out = await agent.post('/account/logout').expect(204);
    expect(sessionCookie(out)).toMatch(/^reelay_session=;.*Expires=Thu, 01 Jan 1970/);
    expectError(await request(gw.app).get('/account/me').set('Cookie', cookie), 401, 'not_signed_in');
    await request(gw.app).post('/account/logout').expect(204);
  });

  test('signing in again replaces the old session', async () => {
    const { agent, email } = await signUp(gw.app);
    const old = sessionCookie(await agent.get('/account/me')).split(';')[0];
    await agent.post('/account/login').send({ email, password: PASSWORD }).expect(200);
    expectError(await request(gw.app).get('/account/me').set('Cookie', old), 401, 'not_signed_in');
    await agent.get('/account/me').expect(200);
  });
});

describe('API keys', () => {
  test('create shows the secret once; the list never does', async () => {
    const { agent } = await signUp(gw.app);
    const res = await agent.post('/account/keys').send({ name: '  my app  ' }).expect(201);
    const created = CreatedApiKeyEnvelopeSchema.parse(res.body).data;
    expect(created).toMatchObject({
      name: 'my app',
      enabled: true,
      last_used_at: null,
      usage: { total_requests: 0, successful_requests: 0, success_rate: null },
    });
    expect(created.secret).toMatch(/^rly_[A-Za-z0-9_-]{43}$/);
    expect(created.prefix).toBe(created.secret.slice(0, 8));
    const list = await agent.get('/account/keys').expect(200);
    expect(ApiKeyListEnvelopeSchema.parse(list.body).data.keys.map((k) => k.id)).toEqual([created.id]);
    expect(list.text).not.toContain(created.secret);
    expect(list.headers['cache-control']).toBe('no-store');
  });

  test.each([
    ['an empty name', { name: '   ' }],
    ['a name over 100 characters', { name: 'x'.repeat(101) }],
    ['no name', {}],
    ['a control character', { name: 'bad\u0007name' }],
    ['a field it does not take', { name: 'x', admin: true }],
  ])('a key with %s is invalid_request', async (_name, body) => {
    const { agent } = await signUp(gw.app);
    expectError(await agent.post('/account/keys').send(body), 400, 'invalid_request');
    expect((await agent.get('/account/keys').expect(200)).body.data.keys).toEqual([]);
  });

  test(`the key after ${MAX_KEYS_PER_ACCOUNT} is 409 key_limit_reached, and deleting one makes room`, async () => {
    const { agent } = await signUp(gw.app);
    let last = { id: '' };
    for (let i = 0; i < MAX_KEYS_PER_ACCOUNT; i++) last = await createKey(agent, `k${i}`);
    const refused = await agent.post('/account/keys').send({ name: 'one too many' });
    expectError(refused, 409, 'key_limit_reached');
    expect(refused.body.error.message).toContain(`at most ${MAX_KEYS_PER_ACCOUNT} keys`);
    await agent.delete(`/account/keys/${last.id}`).expect(204);
    await createKey(agent, 'room again');
  });

  test('disable and enable answer the key; another account gets not_found', async () => {
    const owner = await signUp(gw.app);
    const other = await signUp(gw.app);
    const key = await createKey(owner.agent);
    expect(
      ApiKeyEnvelopeSchema.parse((await owner.agent.post(`/account/keys/${key.id}/disable`).expect(200)).body).data
        .enabled,
    ).toBe(false);
    expect(
      ApiKeyEnvelopeSchema.parse((await owner.agent.post(`/account/keys/${key.id}/enable`).expect(200)).body).data
        .enabled,
    ).toBe(true);
    expectError(await other.agent.post(`/account/keys/${key.id}/disable`), 404, 'not_found');
    expectError(await other.agent.post(`/account/keys/${key.id}/enable`), 404, 'not_found');
    expectError(await other.agent.delete(`/account/keys/${key.id}`), 404, 'not_found');
    expect((await other.agent.get('/account/keys').expect(200)).body).toEqual({ success: true, data: { keys: [] } });
    expect((await owner.agent.get('/account/keys').expect(200)).body.data.keys[0]).toMatchObject({
      id: key.id,
      enabled: true,
    });
  });

  test('delete is 204 and permanent; the id is then not_found', async () => {
    const { agent } = await signUp(gw.app);
    const key = await createKey(agent);
    await agent.delete(`/account/keys/${key.id}`).expect(204);
    expect((await agent.get('/account/keys').expect(200)).body).toEqual({ success: true, data: { keys: [] } });
    expectError(await agent.delete(`/account/keys/${key.id}`), 404, 'not_found');
    expectError(await agent.post('/account/keys/no-such-key/enable'), 404, 'not_found');
  });

  test.each([
    ['get', '/account/me'],
    ['get', '/account/keys'],
    ['post', '/account/keys'],
    ['post', '/account/keys/abc/disable'],
    ['post', '/account/keys/abc/enable'],
    ['delete', '/account/keys/abc'],
  ] as const)('%s %s without a session is not_signed_in', async (method, path) => {
    expectError(await request(gw.app)[method](path).send({ name: 'x' }), 401, 'not_signed_in');
    const client = request(gw.app);
    expectError(
      await client[method](path)
        .set('Cookie', `reelay_session=${'A'.repeat(43)}`)
        .send({ name: 'x' }),
      401,
      'not_signed_in',
    );
  });
});

describe('cross-site requests', () => {
  test('a cross-site Origin cannot disable a key, and nothing changes', async () => {
    const { agent } = await signUp(gw.app);
    const key = await createKey(agent);
    expectError(
      await agent.post(`/account/keys/${key.id}/disable`).set('Origin', 'https://evil.example'),
      403,
      'cross_site_request',
    );
    expectError(await agent.post(`/account/keys/${key.id}/disable`).set('Origin', 'null'), 403, 'cross_site_request');
    expectError(
      await agent.post(`/account/keys/${key.id}/disable`).set('Sec-Fetch-Site', 'cross-site'),
      403,
      'cross_site_request',
    );
    expectError(
      await agent.delete(`/account/keys/${key.id}`).set('Sec-Fetch-Site', 'same-site'),
      403,
      'cross_site_request',
    );
    expect((await agent.get('/account/keys')).body.data.keys[0].enabled).toBe(true);
  });

  test('cross-site sign-up, sign-in, sign-out and key creation are refused before anything happens', async () => {
    const { agent, email } = await signUp(gw.app);
    const evil = { Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' };
    const fresh = uniqueEmail();
    expectError(
      await from().post('/account/signup').set(evil).send({ email: fresh, password: PASSWORD }),
      403,
      'cross_site_request',
    );
    expectError(
      await from().post('/account/login').set(evil).send({ email, password: PASSWORD }),
      403,
      'cross_site_request',
    );
    expectError(await agent.post('/account/keys').set(evil).send({ name: 'planted' }), 403, 'cross_site_request');
    expectError(await agent.post('/account/logout').set(evil), 403, 'cross_site_request');
    // A cross-site form post is refused as such, not for its content type.
    expectError(
      await agent.post('/account/keys').set('Origin', 'http://evil.example').type('form').send('name=planted'),
      403,
      'cross_site_request',
    );
    expect((await agent.get('/account/keys').expect(200)).body).toEqual({ success: true, data: { keys: [] } });
    await from().post('/account/signup').send({ email: fresh, password: PASSWORD }).expect(201);
  });

  test('the same origin passes, as seen through the proxy', async () => {
    const { agent } = await signUp(gw.app);
    await agent
      .post('/account/keys')
      .set('Host', 'reelay.test')
      .set('Origin', 'http://reelay.test')
      .set('Sec-Fetch-Site', 'same-origin')
      .send({ name: 'same' })
      .expect(201);
    await agent
      .post('/account/keys')
      .set('X-Forwarded-Host', 'reelay.example')
      .set('X-Forwarded-Proto', 'https')
      .set('Origin', 'https://reelay.example')
      .send({ name: 'proxied' })
      .expect(201);
    expectError(
      await agent
        .post('/account/keys')
        .set('Host', 'reelay.test')
        .set('Origin', 'https://reelay.test')
        .send({ name: 'scheme differs' }),
      403,
      'cross_site_request',
    );
  });
});

describe('the OpenAPI document', () => {
  test('describes the account routes with their schemas and the session cookie', async () => {
    const doc = (await request(gw.app).get('/api/openapi.json').expect(200)).body;
    expect(doc.paths['/account/signup'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/SignupRequest',
    });
    expect(doc.paths['/account/keys'].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ApiKeyListEnvelope',
    });
    expect(doc.paths['/account/keys'].post.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/CreatedApiKeyEnvelope',
    });
    expect(doc.paths['/account/keys/{id}'].delete.security).toEqual([{ session: [] }]);
    expect(doc.components.securitySchemes.session).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'reelay_session',
    });
    expect(doc.components.schemas.ApiKey.properties).not.toHaveProperty('secret');
  });
});
