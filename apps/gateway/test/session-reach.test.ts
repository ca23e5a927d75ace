// Sessions end when they are ended (DESIGN.md "Trust at the public edge"): a session used only on routes
// outside /account (the subscriptions API) stays on its account's list for as long as it lives, so
// signing out everywhere, a password reset and the account's deletion end it; and a session of a
// deleted account is refused on every route even if something kept it alive.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import request from 'supertest';
import { buildGateway, type TestGateway } from './helpers.js';
import { expectError, PASSWORD, signUp, uniqueIp } from './account-helpers.js';
import { linkToken, startMailSink, type MailSink } from './mail-sink.js';

let sink: MailSink;
let gw: TestGateway;

beforeAll(async () => {
  sink = await startMailSink();
  gw = await buildGateway({
    env: {
      TRUST_PROXY: 'true',
      SMTP_URL: sink.url,
      MAIL_FROM: 'reelay <no-reply@example.org>',
      PUBLIC_URL: 'https://reelay.example.org',
    },
  });
});
afterAll(async () => {
  await gw.close();
  await sink.close();
});

type Agent = ReturnType<typeof request.agent>;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** A second device of the account, signed in with the password, and where its session lives in Redis. */
async function device(email: string): Promise<{ agent: Agent; sessionKey: string; indexKey: string }> {
  const agent = request.agent(gw.app).set('X-Forwarded-For', uniqueIp());
  const res = await agent.post('/account/login').send({ email, password: PASSWORD }).expect(200);
  const cookie = ([] as string[]).concat(res.headers['set-cookie']).find((c) => c.startsWith('reelay_session='))!;
  const sessionKey = `reelay:session:${sha256(cookie.slice('reelay_session='.length, cookie.indexOf(';')))}`;
  const { account_id: accountId } = JSON.parse((await gw.redis.get(sessionKey))!) as { account_id: string };
  return { agent, sessionKey, indexKey: `reelay:account-sessions:${accountId}` };
}

/**
 * The device uses only the subscriptions API while the account's session list runs out of time: the
 * seven days without an account route pass at once (the list's expiry is brought forward, as the
 * clock would bring it), then the device goes on with the subscriptions API.
 */
async function usedOnlyOnSubscriptions(email: string): Promise<Agent> {
  const phone = await device(email);
  await phone.agent.get('/api/v1/subscriptions').expect(200);
  await gw.redis.pexpire(phone.indexKey, 1);
  for (let i = 0; i < 200 && (await gw.redis.exists(phone.indexKey)); i++) await new Promise((r) => setTimeout(r, 5));
  await phone.agent.get('/api/v1/subscriptions').expect(200);
  // Reachable for ending for its whole life: the list lives at least as long as the session.
  expect(await gw.redis.pttl(phone.indexKey)).toBeGreaterThanOrEqual(await gw.redis.pttl(phone.sessionKey));
  return phone.agent;
}

async function confirmAddress(email: string): Promise<void> {
  const token = linkToken(await sink.next(email), 'verify');
  await request(gw.app).post('/account/verify').set('X-Forwarded-For', uniqueIp()).send({ token }).expect(200);
}

describe('a session used only on the subscriptions API', () => {
  test('is ended by signing out everywhere', async () => {
    const user = await signUp(gw.app);
    await confirmAddress(user.email);
    await user.agent.post('/account/login').send({ email: user.email, password: PASSWORD }).expect(200);
    const phone = await usedOnlyOnSubscriptions(user.email);
    expect((await user.agent.get('/account/sessions').expect(200)).body.data.sessions).toHaveLength(2);
    expect((await user.agent.delete('/account/sessions').expect(200)).body.data).toEqual({ ended: 1 });
    expectError(await phone.get('/api/v1/subscriptions'), 401, 'api_key_required');
  });

  test('is ended by a password reset', async () => {
    const user = await signUp(gw.app);
    await confirmAddress(user.email);
    const phone = await usedOnlyOnSubscriptions(user.email);
    await request(gw.app)
      .post('/account/password/forgot')
      .set('X-Forwarded-For', uniqueIp())
      .send({ email: user.email })
      .expect(202);
    const token = linkToken(await sink.next(user.email), 'reset');
    await request(gw.app)
      .post('/account/password/reset')
      .set('X-Forwarded-For', uniqueIp())
      .send({ token, password: 'a brand new passphrase' })
      .expect(204);
    expectError(await phone.get('/api/v1/subscriptions'), 401, 'api_key_required');
    expectError(await phone.get('/account/me'), 401, 'not_signed_in');
  });

  test("is ended by the account's deletion", async () => {
    const user = await signUp(gw.app);
    const phone = await usedOnlyOnSubscriptions(user.email);
    await user.agent.delete('/account').send({ password: PASSWORD }).expect(204);
    expectError(await phone.get('/api/v1/subscriptions'), 401, 'api_key_required');
  });
});

describe('a session of a deleted account', () => {
  test('is refused on every route, even one that nothing ended, also once the address has a new account', async () => {
    const user = await signUp(gw.app);
    // Sessions that slipped past the deletion (signed in while it ran): off the account's list.
    const stray = await device(user.email);
    const later = await device(user.email);
    for (const s of [stray, later]) await gw.redis.hdel(s.indexKey, s.sessionKey.slice('reelay:session:'.length));
    await user.agent.delete('/account').send({ password: PASSWORD }).expect(204);
    expect(await gw.redis.exists(stray.sessionKey)).toBe(1);
    expectError(await stray.agent.get('/api/v1/subscriptions'), 401, 'api_key_required');
    expectError(await stray.agent.get('/account/sessions'), 401, 'not_signed_in');
    expectError(await stray.agent.get('/account/keys'), 401, 'not_signed_in');
    expectError(await stray.agent.delete('/account/sessions'), 401, 'not_signed_in');
    // The address signs up again: a session of the old account is not the new account's.
    await request(gw.app)
      .post('/account/signup')
      .set('X-Forwarded-For', uniqueIp())
      .send({ email: user.email, password: PASSWORD })
      .expect(201);
    expectError(await later.agent.get('/api/v1/subscriptions'), 401, 'api_key_required');
    expectError(await later.agent.get('/account/sessions'), 401, 'not_signed_in');
  });
});
