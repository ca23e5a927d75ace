// The passkey routes at the API level, with an authenticator in software (soft-authenticator.ts) where a
// ceremony must succeed; the ceremonies in a real browser with chromium's virtual authenticator are in
// browser/account.scenario.test.ts.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildGateway, type TestGateway } from './helpers.js';
import { expectError, signUp, uniqueIp } from './account-helpers.js';
import { SoftAuthenticator } from './soft-authenticator.js';

let gw: TestGateway;
let plain: TestGateway;

beforeAll(async () => {
  gw = await buildGateway({ env: { TRUST_PROXY: 'true', PUBLIC_URL: 'https://reelay.example.org' } });
  plain = await buildGateway({ env: { TRUST_PROXY: 'true' } });
});
afterAll(async () => {
  await Promise.all([gw.close(), plain.close()]);
});

const fakeAnswer = (id = 'AAAA') => ({
  id,
  rawId: id,
  type: 'public-key',
  response: {
    clientDataJSON: Buffer.from(
      JSON.stringify({ type: 'webauthn.get', challenge: 'nope', origin: 'https://reelay.example.org' }),
    ).toString('base64url'),
    authenticatorData: 'AAAA',
    signature: 'AAAA',
    attestationObject: 'AAAA',
  },
});

const ORIGIN = 'https://reelay.example.org';

describe('user verification', () => {
  test('the options ask for it, and a passkey is registered and signs in only with it', async () => {
    const user = await signUp(gw.app);
    const verifying = new SoftAuthenticator(ORIGIN);
    const options = (await user.agent.post('/account/passkeys/register/options').expect(200)).body.data;
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
    await user.agent
      .post('/account/passkeys/register')
      .send({ name: 'Phone', response: verifying.create(options) })
      .expect(201);
    const browser = request.agent(gw.app).set('X-Forwarded-For', uniqueIp());
    const login = (await browser.post('/account/passkeys/login/options').expect(200)).body.data;
    expect(login.userVerification).toBe('required');
    await browser
      .post('/account/passkeys/login')
      .send({ response: verifying.get(login) })
      .expect(200);
    expect((await browser.get('/account/me').expect(200)).body.data.email).toBe(user.email);
  });

  test('an authenticator that did not verify its user is refused at registration and at sign-in', async () => {
    const user = await signUp(gw.app);
    const careless = new SoftAuthenticator(ORIGIN, false);
    const options = (await user.agent.post('/account/passkeys/register/options').expect(200)).body.data;
    expectError(
      await user.agent.post('/account/passkeys/register').send({ name: 'Key', response: careless.create(options) }),
      401,
      'invalid_credentials',
    );
    expect((await user.agent.get('/account/passkeys').expect(200)).body.data.passkeys).toEqual([]);
    // A passkey registered with user verification, then used without it (its flag cleared).
    const device = new SoftAuthenticator(ORIGIN);
    await user.agent
      .post('/account/passkeys/register')
      .send({
        response: device.create((await user.agent.post('/account/passkeys/register/options').expect(200)).body.data),
      })
      .expect(201);
    device.userVerified = false;
    const browser = request.agent(gw.app).set('X-Forwarded-For', uniqueIp());
    const login = (await browser.post('/account/passkeys/login/options').expect(200)).body.data;
    expectError(
      await browser.post('/account/passkeys/login').send({ response: device.get(login) }),
      401,
      'invalid_credentials',
    );
    expectError(await browser.get('/account/me'), 401, 'not_signed_in');
  });
});

describe('passkeys', () => {
  test('registration options name PUBLIC_URL as the relying party and ask for a discoverable credential', async () => {
    const user = await signUp(gw.app);
    const res = await user.agent.post('/account/passkeys/register/options').expect(200);
    expect(res.body.data).toMatchObject({
      rp: { id: 'reelay.example.org', name: 'reelay' },
      user: { name: user.email },
      authenticatorSelection: { residentKey: 'required' },
      attestation: 'none',
    });
    expect(Buffer.from(res.body.data.challenge, 'base64url')).toHaveLength(32);
    const login = await request(gw.app)
      .post('/account/passkeys/login/options')
      .set('X-Forwarded-For', uniqueIp())
      .expect(200);
    expect(login.body.data).toMatchObject({ rpId: 'reelay.example.org', allowCredentials: [] });
    expect((await user.agent.get('/account/passkeys').expect(200)).body).toEqual({
      success: true,
      data: { passkeys: [] },
    });
  });

  test('answers that do not check out are 401, malformed ones 400, and state changes are same-origin', async () => {
    const user = await signUp(gw.app);
    expectError(
      await user.agent.post('/account/passkeys/register').send({ name: 'x', response: fakeAnswer() }),
      401,
      'invalid_credentials',
    );
    expectError(
      await request(gw.app)
        .post('/account/passkeys/login')
        .set('X-Forwarded-For', uniqueIp())
        .send({ response: fakeAnswer() }),
      401,
      'invalid_credentials',
    );
    for (const body of [
      {},
      { response: 'x' },
      { response: { ...fakeAnswer(), type: 'password' } },
      { name: 'a\u0000b', response: fakeAnswer() },
    ]) {
      expectError(await user.agent.post('/account/passkeys/register').send(body), 400, 'invalid_request');
    }
    expectError(
      await user.agent.post('/account/passkeys/register/options').set('Origin', 'https://evil.example'),
      403,
      'cross_site_request',
    );
    expectError(
      await request(gw.app)
        .post('/account/passkeys/login')
        .set('Sec-Fetch-Site', 'cross-site')
        .send({ response: fakeAnswer() }),
      403,
      'cross_site_request',
    );
    expectError(await request(gw.app).post('/account/passkeys/register/options'), 401, 'not_signed_in');
    expectError(await user.agent.delete('/account/passkeys/AAAA'), 404, 'not_found');
    expectError(await user.agent.post('/account/passkeys/AAAA/name').send({ name: 'y' }), 404, 'not_found');
  });

  test('sign-in attempts are throttled per client address', async () => {
    const ip = uniqueIp();
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++)
      statuses.push(
        (
          await request(gw.app)
            .post('/account/passkeys/login')
            .set('X-Forwarded-For', ip)
            .send({ response: fakeAnswer() })
        ).status,
      );
    expect(statuses.slice(0, 60).every((s) => s === 401)).toBe(true);
    expect(statuses[60]).toBe(429);
  });

  test('without PUBLIC_URL the passkey routes say so, and /account/features tells clients beforehand', async () => {
    const user = await signUp(plain.app);
    expectError(await user.agent.get('/account/passkeys'), 503, 'service_unavailable');
    expect((await request(plain.app).get('/account/features').expect(200)).body).toEqual({
      success: true,
      data: { mail: false, passkeys: false, providers: [] },
    });
    expect((await request(gw.app).get('/account/features').expect(200)).body).toEqual({
      success: true,
      data: { mail: false, passkeys: true, providers: [] },
    });
  });
});
