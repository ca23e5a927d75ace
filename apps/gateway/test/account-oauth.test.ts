import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import { safeReturnTo } from '@reelay/accounts';
import { buildGateway, type TestGateway } from './helpers.js';
import { expectError, PASSWORD, signUp, uniqueEmail, uniqueIp } from './account-helpers.js';
import { startGithub, type GithubStandIn } from './github-standin.js';
import { captureLogs } from './log-capture.js';
import { startIssuer, type Issuer } from './oidc-issuer.js';
import { linkToken, startMailSink, type MailSink } from './mail-sink.js';
import { oidcFlow } from './oidc-flow.js';

const PUBLIC_URL = 'http://localhost:8080';
const CLIENT = { client_id: 'reelay-test', client_secret: randomBytes(16).toString('hex') };
const GITHUB_CLIENT = { id: 'gh-client', secret: randomBytes(16).toString('hex') };
let issuer: Issuer;
let github: GithubStandIn;
let sink: MailSink;
let gw: TestGateway;
const logs = captureLogs();
/** Codes and states seen in callback URLs: none may reach a log line. */
const seen: string[] = [];

beforeAll(async () => {
  issuer = await startIssuer({ ...CLIENT, redirect_uris: [`${PUBLIC_URL}/account/oauth/test/callback`] });
  github = await startGithub(GITHUB_CLIENT);
  sink = await startMailSink();
  gw = await buildGateway({
    env: {
      TRUST_PROXY: 'true',
      PUBLIC_URL,
      SMTP_URL: sink.url,
      MAIL_FROM: 'reelay <no-reply@example.org>',
      OIDC_PROVIDERS: JSON.stringify([{ id: 'test', name: 'Test IdP', issuer: issuer.issuer, ...CLIENT }]),
      GITHUB_CLIENT_ID: GITHUB_CLIENT.id,
      GITHUB_CLIENT_SECRET: GITHUB_CLIENT.secret,
      GITHUB_OAUTH_URL: github.url,
      GITHUB_API_URL: `${github.url}/api`,
      LOG_LEVEL: 'trace',
    },
    deps: { logger: logs.logger },
  });
});
afterAll(async () => {
  await gw.close();
  await Promise.all([issuer.close(), github.close(), sink.close()]);
});

const { browser, idpUser, throughProvider, start, signInWith } = oidcFlow({
  app: () => gw.app,
  issuer: () => issuer,
  publicUrl: PUBLIC_URL,
  seen,
});

const flowKey = (state: string) => `reelay:oauth-flow:${createHash('sha256').update(state).digest('hex')}`;

describe('providers and the start of a flow', () => {
  test('lists each configured provider', async () => {
    const res = await request(gw.app).get('/account/providers').expect(200);
    expect(res.body).toEqual({
      success: true,
      data: [
        { id: 'test', name: 'Test IdP' },
        { id: 'github', name: 'GitHub' },
      ],
    });
  });

  test('start sends the browser to the provider with PKCE S256, state, nonce and the PUBLIC_URL redirect URI, bound by an HttpOnly cookie', async () => {
    const agent = browser();
    const res = await agent.get('/account/oauth/test/start').expect(302);
    const url = new URL(res.headers.location);
    expect(url.origin).toBe(issuer.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('redirect_uri')).toBe(`${PUBLIC_URL}/account/oauth/test/callback`);
    const cookie = ([] as string[]).concat(res.headers['set-cookie']).find((c) => c.startsWith('reelay_oauth='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\/account\/oauth/);
    expect(cookie).toContain(`reelay_oauth=${url.searchParams.get('state')}`);
    // The verifier and nonce stay on the server, under the state's hash, for 10 minutes.
    expect(await gw.redis.ttl(flowKey(url.searchParams.get('state')!))).toBeGreaterThan(590);
    expect(await gw.redis.keys(`*${url.searchParams.get('state')}*`)).toEqual([]);
  });

  test('an unknown provider is 404', async () => {
    expectError(await browser().get('/account/oauth/nope/start'), 404, 'not_found');
    expectError(await browser().get('/account/oauth/nope/callback?code=x&state=y'), 404, 'not_found');
  });
});

describe('OpenID Connect sign-in', () => {
  test('the first sign-in makes the account (verified address, no password); the next signs in to it', async () => {
    const email = uniqueEmail();
    const sub = idpUser(email, true);
    const agent = browser();
    const res = await signInWith(agent, sub);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/settings/api-keys');
    const me = await agent.get('/account/me').expect(200);
    expect(me.body.data).toEqual({
      email,
      email_verified: true,
      has_password: false,
      identities: [{ provider: 'test', name: 'Test IdP', email }],
    });
    // Verified by the provider: keys need no mailed link.
    await agent.post('/account/keys').send({ name: 'social' }).expect(201);
    const again = browser();
    expect((await signInWith(again, sub)).status).toBe(302);
    expect((await again.get('/account/keys').expect(200)).body.data.keys).toHaveLength(1);
  });

  test('an existing e-mail account is linked when the provider says the address is verified and the account has proven it, with a notice mail', async () => {
    const owner = await signUp(gw.app);
    const sub = idpUser(owner.email, true);
    // Unproven, the address could be anyone's typing: the password that came with it is not trusted.
    expectError(await signInWith(browser(), sub), 409, 'email_taken');
    const confirm = await sink.next(owner.email);
    expect(confirm.subject).toBe('Confirm your e-mail address for reelay');
    await request(gw.app)
      .post('/account/verify')
      .set('X-Forwarded-For', uniqueIp())
      .send({ token: linkToken(confirm, 'verify') })
      .expect(200);
    const agent = browser();
    expect((await signInWith(agent, sub)).status).toBe(302);
    expect((await agent.get('/account/me').expect(200)).body.data).toMatchObject({
      email: owner.email,
      has_password: true,
      identities: [{ provider: 'test' }],
    });
    expect((await sink.next(owner.email)).subject).toBe('Test IdP sign-in was linked to your reelay account');
  });

  test('account-linking takeover: an unverified provider address matching an account is 409 email_taken, no session, nothing linked', async () => {
    const victim = await signUp(gw.app);
    const attacker = idpUser(victim.email, false);
    const agent = browser();
    const res = await signInWith(agent, attacker);
    expectError(res, 409, 'email_taken');
    expect(res.body.error.message).toMatch(/sign in with your password first, then link Test IdP from the settings/i);
    expect(
      ([] as string[])
        .concat(res.headers['set-cookie'] ?? [])
        .some((c) => c.startsWith('reelay_session=') && !c.startsWith('reelay_session=;')),
    ).toBe(false);
    expectError(await agent.get('/account/me'), 401, 'not_signed_in');
    expect((await victim.agent.get('/account/me').expect(200)).body.data.identities).toEqual([]);
    // Still refused on a second try: nothing was half-linked.
    expectError(await signInWith(browser(), attacker), 409, 'email_taken');
  });

  test('a new account from an unverified address must confirm it by mail before making keys', async () => {
    const email = uniqueEmail();
    const agent = browser();
    expect((await signInWith(agent, idpUser(email, false))).status).toBe(302);
    expect((await agent.get('/account/me').expect(200)).body.data.email_verified).toBe(false);
    expectError(await agent.post('/account/keys').send({ name: 'x' }), 403, 'email_not_verified');
    expect((await sink.next(email)).subject).toBe('Confirm your e-mail address for reelay');
  });
});

describe('attacks on the flow', () => {
  test('a tampered state, or a callback without this browser’s flow cookie (login CSRF), is refused', async () => {
    const sub = idpUser(uniqueEmail(), true);
    const agent = browser();
    const callback = await throughProvider((await start(agent)).href, sub);
    const url = new URL(callback, PUBLIC_URL);
    const state = url.searchParams.get('state')!;
    url.searchParams.set('state', (state[0] === 'A' ? 'B' : 'A') + state.slice(1));
    expectError(await agent.get(url.pathname + url.search), 400, 'invalid_request');
    // The attacker's own callback URL opened in a victim's browser: no flow cookie there.
    const attacker = browser();
    const planted = await throughProvider((await start(attacker)).href, sub);
    const victim = browser();
    expectError(await victim.get(planted), 400, 'invalid_request');
    expectError(await victim.get('/account/me'), 401, 'not_signed_in');
    expectError(await agent.get(`/account/oauth/test/callback?code=x`), 400, 'invalid_request');
  });

  test('a browser whose sign-in fails lands back on the settings page with the reason, not on JSON', async () => {
    const agent = browser();
    const res = await agent
      .get('/account/oauth/test/callback?code=x')
      .set('Accept', 'text/html,application/xhtml+xml,*/*;q=0.8');
    expect(res.status).toBe(303);
    const location = new URL(res.headers.location, PUBLIC_URL);
    expect(location.pathname).toBe('/settings/api-keys');
    const reason = new URLSearchParams(location.hash.slice(1));
    expect(reason.get('sign-in-error')).toBe('invalid_request');
    expect(reason.get('message')).toMatch(/./);
    // Not signed in by it; an API client asking for JSON still gets the envelope.
    expectError(await agent.get('/account/me'), 401, 'not_signed_in');
    expectError(
      await agent.get('/account/oauth/test/callback?code=x').set('Accept', 'application/json'),
      400,
      'invalid_request',
    );
  });

  test('an authorization code cannot be replayed, neither with its flow nor with a fresh one', async () => {
    const sub = idpUser(uniqueEmail(), true);
    const agent = browser();
    const startUrl = await start(agent);
    const callback = await throughProvider(startUrl.href, sub);
    const cookie = `reelay_oauth=${startUrl.searchParams.get('state')}`;
    expect((await agent.get(callback)).status).toBe(302);
    // The same callback again, cookie and all: the flow was taken.
    expectError(await request(gw.app).get(callback).set('Cookie', cookie), 400, 'invalid_request');
    // The stolen code under a fresh flow of the thief's: the provider refuses the used code.
    const thief = browser();
    const fresh = await start(thief);
    const code = new URL(callback, PUBLIC_URL).searchParams.get('code')!;
    const replay = `/account/oauth/test/callback?code=${code}&state=${fresh.searchParams.get('state')}&iss=${encodeURIComponent(issuer.issuer)}`;
    expectError(await thief.get(replay), 401, 'invalid_credentials');
    expectError(await thief.get('/account/me'), 401, 'not_signed_in');
  });

  test.each([
    ['nonce', 'the ID token does not carry the flow’s nonce', /nonce/],
    ['verifier', 'the PKCE verifier does not match the challenge', /invalid_grant|PKCE|code_verifier/i],
  ])('a flow whose %s was changed is refused (%s)', async (field, _why, reason) => {
    const sub = idpUser(uniqueEmail(), true);
    const agent = browser();
    const startUrl = await start(agent);
    const callback = await throughProvider(startUrl.href, sub);
    const key = flowKey(startUrl.searchParams.get('state')!);
    const flow = JSON.parse((await gw.redis.get(key))!);
    await gw.redis.set(key, JSON.stringify({ ...flow, [field]: randomBytes(32).toString('base64url') }), 'KEEPTTL');
    const before = logs.text().length;
    expectError(await agent.get(callback), 401, 'invalid_credentials');
    expectError(await agent.get('/account/me'), 401, 'not_signed_in');
    // Refused for the reason tried, as the log says.
    const refusal = logs
      .text()
      .slice(before)
      .split('\n')
      .find((l) => l.includes('social sign-in refused'));
    expect(refusal).toMatch(reason);
  });

  test('the provider saying no is 401 with its reason', async () => {
    const agent = browser();
    const state = (await start(agent)).searchParams.get('state')!;
    expectError(
      await agent.get(
        `/account/oauth/test/callback?error=access_denied&state=${state}&iss=${encodeURIComponent(issuer.issuer)}`,
      ),
      401,
      'invalid_credentials',
    );
  });

  test('open redirect: return_to only takes paths of this app', async () => {
    for (const hostile of [
      'https://evil.example/',
      '//evil.example/x',
      '/\\evil.example',
      'javascript:alert(1)',
      '/\r\nSet-Cookie: x=1',
      'settings',
    ]) {
      expect(safeReturnTo(hostile, PUBLIC_URL)).toBe('/settings/api-keys');
    }
    expect(safeReturnTo('/?u=https://example.com/v', PUBLIC_URL)).toBe('/?u=https://example.com/v');
    expect(safeReturnTo(['/a', '/b'], PUBLIC_URL)).toBe('/settings/api-keys');
    const sub = idpUser(uniqueEmail(), true);
    expect(
      (await signInWith(browser(), sub, 'test', `?return_to=${encodeURIComponent('//evil.example/')}`)).headers
        .location,
    ).toBe('/settings/api-keys');
    expect(
      (await signInWith(browser(), sub, 'test', `?return_to=${encodeURIComponent('/?u=x')}`)).headers.location,
    ).toBe('/?u=x');
  });

  test.each([
    '/.//evil.example/x',
    '/a/..//evil.example/',
    '/%2e//evil.example/',
    '/%2F%2Fevil.example/',
    '/%5C%5Cevil.example',
    '/\\evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    'https://evil.example/',
    'javascript:alert(1)',
  ])(
    'open redirect: the callback of a flow started with return_to=%j sends the browser to the default path',
    async (hostile) => {
      const res = await signInWith(
        browser(),
        idpUser(uniqueEmail(), true),
        'test',
        `?return_to=${encodeURIComponent(hostile)}`,
      );
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe('/settings/api-keys');
      // However a browser reads it, the Location stays on this origin.
      expect(new URL(res.headers.location, PUBLIC_URL).origin).toBe(PUBLIC_URL);
    },
  );
});

describe('linking and unlinking in the settings', () => {
  test('a signed-in account links a provider (same-origin only), can then sign in with it, and unlinks it', async () => {
    const user = await signUp(gw.app);
    const sub = idpUser(uniqueEmail(), false); // the provider's address need not match or be verified to link
    expectError(
      await user.agent.post('/account/oauth/test/link').set('Origin', 'https://evil.example'),
      403,
      'cross_site_request',
    );
    const res = await user.agent.post('/account/oauth/test/link').expect(200);
    const callback = await throughProvider(res.body.data.url, sub);
    expect((await user.agent.get(callback)).headers.location).toBe('/settings/api-keys');
    expect((await user.agent.get('/account/me').expect(200)).body.data.identities).toMatchObject([
      { provider: 'test' },
    ]);
    const other = browser();
    expect((await signInWith(other, sub)).status).toBe(302);
    expect((await other.get('/account/me').expect(200)).body.data.email).toBe(user.email);
    expectError(
      await user.agent.delete('/account/oauth/test').set('Sec-Fetch-Site', 'cross-site'),
      403,
      'cross_site_request',
    );
    await user.agent.delete('/account/oauth/test').expect(204);
    expect((await user.agent.get('/account/me').expect(200)).body.data.identities).toEqual([]);
  });

  test('an identity linked to one account cannot be linked to another', async () => {
    const sub = idpUser(uniqueEmail(), true);
    expect((await signInWith(browser(), sub)).status).toBe(302);
    const user = await signUp(gw.app);
    const res = await user.agent.post('/account/oauth/test/link').expect(200);
    expectError(await user.agent.get(await throughProvider(res.body.data.url, sub)), 409, 'email_taken');
  });

  test('the last way to sign in cannot be unlinked; with a password set it can', async () => {
    const agent = browser();
    expect((await signInWith(agent, idpUser(uniqueEmail(), true))).status).toBe(302);
    expectError(await agent.delete('/account/oauth/test'), 400, 'invalid_request');
    await agent.post('/account/password').send({ password: 'a password of my own' }).expect(200);
    await agent.delete('/account/oauth/test').expect(204);
  });

  test('deleting the account frees its identity', async () => {
    const sub = idpUser(uniqueEmail(), true);
    const agent = browser();
    expect((await signInWith(agent, sub)).status).toBe(302);
    await agent.delete('/account').expect(204);
    const again = browser();
    expect((await signInWith(again, sub)).status).toBe(302);
    expect((await again.get('/account/me').expect(200)).body.data.has_password).toBe(false);
  });
});

describe('GitHub', () => {
  test('signs in with the primary verified address from /user/emails, by the numeric user id', async () => {
    const email = uniqueEmail();
    github.users.set('octo', {
      id: 4242,
      login: 'octo',
      emails: [
        { email: `other-${email}`, primary: false, verified: true },
        { email, primary: true, verified: true },
      ],
    });
    const agent = browser();
    const startUrl = await start(agent, 'github');
    expect(startUrl.origin).toBe(github.url);
    expect(startUrl.pathname).toBe('/login/oauth/authorize');
    expect(startUrl.searchParams.get('code_challenge_method')).toBe('S256');
    const res = await agent.get(await throughProvider(startUrl.href, 'octo'));
    expect(res.status).toBe(302);
    expect((await agent.get('/account/me').expect(200)).body.data).toEqual({
      email,
      email_verified: true,
      has_password: false,
      identities: [{ provider: 'github', name: 'GitHub', email }],
    });
  });

  test('an unverified primary address does not take over an existing account', async () => {
    const victim = await signUp(gw.app);
    github.users.set('mallory', {
      id: 666,
      login: 'mallory',
      emails: [{ email: victim.email, primary: true, verified: false }],
    });
    expectError(await signInWith(browser(), 'mallory', 'github'), 409, 'email_taken');
    expect((await victim.agent.get('/account/me').expect(200)).body.data.identities).toEqual([]);
  });

  test('a changed PKCE verifier is refused at the code exchange', async () => {
    github.users.set('pkce', {
      id: 777,
      login: 'pkce',
      emails: [{ email: uniqueEmail(), primary: true, verified: true }],
    });
    const agent = browser();
    const startUrl = await start(agent, 'github');
    const callback = await throughProvider(startUrl.href, 'pkce');
    const key = flowKey(startUrl.searchParams.get('state')!);
    await gw.redis.set(
      key,
      JSON.stringify({ ...JSON.parse((await gw.redis.get(key))!), verifier: randomBytes(32).toString('base64url') }),
      'KEEPTTL',
    );
    expectError(await agent.get(callback), 401, 'invalid_credentials');
  });
});

test('sign-in starts are throttled per client address', async () => {
  const ip = uniqueIp();
  const statuses: number[] = [];
  for (let i = 0; i < 62; i++)
    statuses.push((await request(gw.app).get('/account/oauth/test/start').set('X-Forwarded-For', ip)).status);
  expect(statuses.slice(0, 60).every((s) => s === 302)).toBe(true);
  expect(statuses.slice(60)).toEqual([429, 429]);
});

test('no code, state, access token or client secret appears in the logs, even at trace level', () => {
  const text = logs.text();
  expect(text).toContain('request completed');
  expect(text).toContain('[redacted]');
  expect(seen.length).toBeGreaterThan(10);
  for (const secret of [...seen, ...github.secrets, CLIENT.client_secret, GITHUB_CLIENT.secret, PASSWORD])
    expect(text).not.toContain(secret);
});
