import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import request from 'supertest';
import { buildGateway, type TestGateway } from './helpers.js';
import { createKey, expectError, PASSWORD, signUp, uniqueEmail, uniqueIp } from './account-helpers.js';
import { captureLogs } from './log-capture.js';
import { linkToken, startMailSink, type MailSink } from './mail-sink.js';

const PUBLIC_URL = 'https://reelay.example.org';
let sink: MailSink;
let gw: TestGateway;
let plain: TestGateway;
const logs = captureLogs();
/** Every token mailed in this file: none may ever appear in a log line. */
const mailedTokens: string[] = [];

beforeAll(async () => {
  sink = await startMailSink();
  gw = await buildGateway({
    env: {
      TRUST_PROXY: 'true',
      SMTP_URL: sink.url,
      MAIL_FROM: 'reelay <no-reply@example.org>',
      PUBLIC_URL,
      LOG_LEVEL: 'trace',
    },
    deps: { logger: logs.logger },
  });
  plain = await buildGateway({ env: { TRUST_PROXY: 'true' } });
});
afterAll(async () => {
  await Promise.all([gw.close(), plain.close()]);
  await sink.close();
});

const from = (app: TestGateway, ip = uniqueIp()) => ({
  post: (path: string) => request(app.app).post(path).set('X-Forwarded-For', ip),
});

async function verifyToken(email: string): Promise<string> {
  const mail = await sink.next(email);
  const token = linkToken(mail, 'verify');
  mailedTokens.push(token);
  return token;
}

async function resetToken(email: string): Promise<string> {
  const mail = await sink.next(email);
  expect(mail.subject).toBe('Reset your reelay password');
  const token = linkToken(mail, 'reset');
  mailedTokens.push(token);
  return token;
}

const tokenKey = (kind: string, token: string) =>
  `reelay:token:${kind}:${createHash('sha256').update(token).digest('hex')}`;

describe('verification on sign-up', () => {
  test('mails a readable link built from PUBLIC_URL; keys wait for it; the token works once', async () => {
    const user = await signUp(gw.app);
    const mail = await sink.next(user.email);
    expect(mail.subject).toBe('Confirm your e-mail address for reelay');
    expect(mail.raw).toMatch(/Content-Type: text\/plain/);
    expect(mail.raw).toMatch(/Content-Type: text\/html/);
    expect(mail.raw).toMatch(/^From: reelay <no-reply@example\.org>/m);
    const token = linkToken(mail, 'verify');
    mailedTokens.push(token);
    expect(mail.decoded).toContain(`${PUBLIC_URL}/settings/api-keys#verify=${token}`);
    // 32 random bytes: 256 bits.
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    // Stored only as its hash, for 24 hours.
    expect(await gw.redis.keys(`*${token}*`)).toEqual([]);
    const ttl = await gw.redis.ttl(tokenKey('verify', token));
    expect(ttl).toBeGreaterThan(24 * 3600 - 60);
    expect(ttl).toBeLessThanOrEqual(24 * 3600);

    expectError(await user.agent.post('/account/keys').send({ name: 'early' }), 403, 'email_not_verified');
    expect((await user.agent.get('/account/me').expect(200)).body.data.email_verified).toBe(false);
    // The link may be opened in another browser: no session needed.
    const res = await from(gw).post('/account/verify').send({ token }).expect(200);
    expect(res.body).toEqual({ success: true, data: { email: user.email, email_verified: true } });
    // The first proof of the address signs out every session (account-proof.test.ts says why).
    expectError(await user.agent.get('/account/me'), 401, 'not_signed_in');
    await user.agent.post('/account/login').send({ email: user.email, password: PASSWORD }).expect(200);
    expect((await user.agent.get('/account/me').expect(200)).body.data.email_verified).toBe(true);
    await createKey(user.agent);
    expectError(await from(gw).post('/account/verify').send({ token }), 400, 'invalid_request');
  });

  test('a new link can be asked for; unknown, malformed and tampered tokens are refused', async () => {
    const user = await signUp(gw.app);
    const first = await verifyToken(user.email);
    await user.agent.post('/account/verify/resend').expect(202);
    const second = await verifyToken(user.email);
    expect(second).not.toBe(first);
    const tampered = (second[0] === 'A' ? 'B' : 'A') + second.slice(1);
    for (const token of [tampered, 'short', 'x'.repeat(200), `${second}=`])
      expectError(await from(gw).post('/account/verify').send({ token }), 400, 'invalid_request');
    // A reset token is not a verification token.
    expectError(
      await from(gw).post('/account/password/reset').send({ token: second, password: 'another long password' }),
      400,
      'invalid_request',
    );
    await from(gw).post('/account/verify').send({ token: second }).expect(200);
  });
});

describe('forgotten password', () => {
  test('the answer is the same for an address with and without an account', async () => {
    const user = await signUp(gw.app);
    await verifyToken(user.email);
    const stranger = uniqueEmail();
    const known = await from(gw).post('/account/password/forgot').send({ email: user.email });
    const unknown = await from(gw).post('/account/password/forgot').send({ email: stranger });
    expect({ status: unknown.status, body: unknown.body, text: unknown.text }).toEqual({
      status: known.status,
      body: known.body,
      text: known.text,
    });
    expect(known.status).toBe(202);
    await resetToken(user.email);
    expect(sink.delivered.some((d) => d.to.includes(stranger))).toBe(false);
  });

  test('reset sets the password, confirms the address, ends every session, works once, and mails a notice', async () => {
    const user = await signUp(gw.app);
    await verifyToken(user.email);
    const other = request.agent(gw.app).set('X-Forwarded-For', uniqueIp());
    await other.post('/account/login').send({ email: user.email, password: PASSWORD }).expect(200);
    await from(gw).post('/account/password/forgot').send({ email: user.email.toUpperCase() }).expect(202);
    const token = await resetToken(user.email);
    const ttl = await gw.redis.ttl(tokenKey('reset', token));
    expect(ttl).toBeGreaterThan(3600 - 60);
    expect(ttl).toBeLessThanOrEqual(3600);
    expectError(
      await from(gw).post('/account/password/reset').send({ token, password: 'short' }),
      400,
      'invalid_request',
    );
    await from(gw).post('/account/password/reset').send({ token, password: 'a brand new passphrase' }).expect(204);
    expectError(await user.agent.get('/account/me'), 401, 'not_signed_in');
    expectError(await other.get('/account/me'), 401, 'not_signed_in');
    expectError(
      await from(gw).post('/account/login').send({ email: user.email, password: PASSWORD }),
      401,
      'invalid_credentials',
    );
    await from(gw).post('/account/login').send({ email: user.email, password: 'a brand new passphrase' }).expect(200);
    expectError(
      await from(gw).post('/account/password/reset').send({ token, password: 'yet another passphrase' }),
      400,
      'invalid_request',
    );
    const notice = await sink.next(user.email);
    expect(notice.subject).toBe('Your reelay password was changed');
  });

  test('an expired reset token is refused', async () => {
    const user = await signUp(gw.app);
    await verifyToken(user.email);
    await from(gw).post('/account/password/forgot').send({ email: user.email }).expect(202);
    const token = await resetToken(user.email);
    await gw.redis.pexpire(tokenKey('reset', token), 1);
    for (let i = 0; i < 100 && (await gw.redis.exists(tokenKey('reset', token))); i++)
      await new Promise((r) => setTimeout(r, 5));
    expectError(
      await from(gw).post('/account/password/reset').send({ token, password: 'a brand new passphrase' }),
      400,
      'invalid_request',
    );
  });

  test('token guessing is throttled per client address', async () => {
    const ip = uniqueIp();
    const guesses: number[] = [];
    for (let i = 0; i < 32; i++)
      guesses.push(
        (
          await from(gw, ip)
            .post('/account/password/reset')
            .send({ token: 'A'.repeat(43), password: 'a brand new passphrase' })
        ).status,
      );
    expect(guesses.slice(0, 30).every((s) => s === 400)).toBe(true);
    expect(guesses.slice(30)).toEqual([429, 429]);
  });

  test('one requester can make an address receive 3 mails an hour; a stranger using them up leaves the owner theirs', async () => {
    const user = await signUp(gw.app);
    await verifyToken(user.email);
    const stranger = uniqueIp();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await from(gw, stranger).post('/account/password/forgot').send({ email: user.email })).status);
    expect(statuses).toEqual([202, 202, 202, 429]);
    const refused = await from(gw, stranger).post('/account/password/forgot').send({ email: user.email });
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3000);
    for (let i = 0; i < 3; i++) await resetToken(user.email);
    // The owner, from an address of their own, still gets a reset mail, and a new confirmation link.
    await from(gw, user.ip).post('/account/password/forgot').send({ email: user.email }).expect(202);
    await resetToken(user.email);
    await user.agent.post('/account/verify/resend').expect(202);
    expect((await sink.next(user.email)).subject).toBe('Confirm your e-mail address for reelay');
  });

  test('many strangers together make an address receive at most 10 mails an hour; a browser that signed in to the account before is recognised as its owner and still gets its mail', async () => {
    const user = await signUp(gw.app);
    await from(gw)
      .post('/account/verify')
      .send({ token: await verifyToken(user.email) })
      .expect(200);
    // The owner signed in on this browser once since (it keeps a device cookie), then signed out.
    const owner = request.agent(gw.app).set('X-Forwarded-For', uniqueIp());
    await owner.post('/account/login').send({ email: user.email, password: PASSWORD }).expect(200);
    await owner.post('/account/logout').expect(204);
    const statuses: number[] = [];
    const ips = Array.from({ length: 5 }, () => uniqueIp());
    for (let i = 0; i < 5; i++)
      for (let j = 0; j < 3; j++)
        statuses.push((await from(gw, ips[i]).post('/account/password/forgot').send({ email: user.email })).status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(10);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    for (let i = 0; i < 10; i++) await resetToken(user.email);
    // A requester the address never saw is refused for the hour …
    expectError(await from(gw).post('/account/password/forgot').send({ email: user.email }), 429, 'rate_limited');
    // … the owner's browser is not.
    await owner.post('/account/password/forgot').send({ email: user.email }).expect(202);
    await resetToken(user.email);
  });

  test('a browser signed in before the address was proven is not recognised as the owner’s', async () => {
    const maker = await signUp(gw.app); // whoever typed the address: their browser keeps a device cookie
    await from(gw)
      .post('/account/verify')
      .send({ token: await verifyToken(maker.email) })
      .expect(200);
    for (const ip of Array.from({ length: 4 }, () => uniqueIp()))
      for (let j = 0; j < 3; j++) await from(gw, ip).post('/account/password/forgot').send({ email: maker.email });
    for (let i = 0; i < 10; i++) await resetToken(maker.email);
    expectError(await maker.agent.post('/account/password/forgot').send({ email: maker.email }), 429, 'rate_limited');
  });

  test('is refused cross-site and with bad bodies', async () => {
    expectError(
      await from(gw)
        .post('/account/password/forgot')
        .set('Origin', 'https://evil.example')
        .send({ email: uniqueEmail() }),
      403,
      'cross_site_request',
    );
    expectError(
      await from(gw)
        .post('/account/password/reset')
        .set('Sec-Fetch-Site', 'cross-site')
        .send({ token: 'A'.repeat(43), password: 'long enough pass' }),
      403,
      'cross_site_request',
    );
    for (const body of [{}, { email: 5 }, { email: ['a'] }, { email: 'x'.repeat(300) }])
      expectError(await from(gw).post('/account/password/forgot').send(body), 400, 'invalid_request');
    for (const body of [{}, { token: 'A'.repeat(43) }, { token: 1, password: 'long enough pass' }])
      expectError(await from(gw).post('/account/password/reset').send(body), 400, 'invalid_request');
  });
});

describe('changing the password while signed in', () => {
  test('needs the current one, signs out the other sessions and mails a notice', async () => {
    const user = await signUp(gw.app);
    await verifyToken(user.email);
    const other = request.agent(gw.app).set('X-Forwarded-For', uniqueIp());
    await other.post('/account/login').send({ email: user.email, password: PASSWORD }).expect(200);
    expectError(
      await user.agent.post('/account/password').send({ password: 'a brand new passphrase' }),
      401,
      'invalid_credentials',
    );
    expectError(
      await user.agent
        .post('/account/password')
        .send({ current_password: 'wrong', password: 'a brand new passphrase' }),
      401,
      'invalid_credentials',
    );
    const res = await user.agent
      .post('/account/password')
      .send({ current_password: PASSWORD, password: 'a brand new passphrase' })
      .expect(200);
    expect(res.body.data).toMatchObject({ email: user.email, has_password: true });
    await user.agent.get('/account/me').expect(200);
    expectError(await other.get('/account/me'), 401, 'not_signed_in');
    expect((await sink.next(user.email)).subject).toBe('Your reelay password was changed');
  });
});

describe('without SMTP', () => {
  test('the mail routes answer 503 mail_not_configured and keys need no confirmed address', async () => {
    expectError(
      await from(plain).post('/account/password/forgot').send({ email: uniqueEmail() }),
      503,
      'mail_not_configured',
    );
    expectError(
      await from(plain)
        .post('/account/password/reset')
        .send({ token: 'A'.repeat(43), password: 'a brand new passphrase' }),
      503,
      'mail_not_configured',
    );
    expectError(
      await from(plain)
        .post('/account/verify')
        .send({ token: 'A'.repeat(43) }),
      503,
      'mail_not_configured',
    );
    const user = await signUp(plain.app);
    expectError(await user.agent.post('/account/verify/resend'), 503, 'mail_not_configured');
    await createKey(user.agent);
  });
});

test('no mailed token or password appears in the logs, even at trace level', () => {
  expect(mailedTokens.length).toBeGreaterThan(5);
  const text = logs.text();
  expect(text).toContain('request completed');
  for (const token of mailedTokens) expect(text).not.toContain(token);
  expect(text).not.toContain(PASSWORD);
  expect(text).not.toContain('a brand new passphrase');
});
