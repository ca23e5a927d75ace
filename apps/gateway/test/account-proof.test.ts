// "An address is proven before it is trusted" (DESIGN.md "Trust at the public edge"): pre-hijacked
// accounts (Sudhodanan and Paverd, USENIX Security 2022) tried against the real gateway, the in-process
// OpenID provider, the GitHub stand-in, the SMTP sink and passkeys made by a WebAuthn authenticator in
// software. Someone makes an account with another person's address; when that person later signs in
// with a provider that vouches for the address, or proves it by mail, the maker keeps no way in.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { buildGateway, type TestGateway } from './helpers.js';
import { expectError, PASSWORD, signUp, uniqueEmail, uniqueIp } from './account-helpers.js';
import { startGithub, type GithubStandIn } from './github-standin.js';
import { startIssuer, type Issuer } from './oidc-issuer.js';
import { oidcFlow, type Agent } from './oidc-flow.js';
import { linkToken, startMailSink, type Delivered, type MailSink } from './mail-sink.js';
import { SoftAuthenticator } from './soft-authenticator.js';

const PUBLIC_URL = 'http://localhost:8080';
const CLIENT = { client_id: 'reelay-proof', client_secret: randomBytes(16).toString('hex') };
const GITHUB_CLIENT = { id: 'gh-proof', secret: randomBytes(16).toString('hex') };
const NEW_PASSWORD = 'the owner’s own passphrase';
let issuer: Issuer;
let github: GithubStandIn;
let sink: MailSink;
let gw: TestGateway;

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
    },
  });
});
afterAll(async () => {
  await gw.close();
  await Promise.all([issuer.close(), github.close(), sink.close()]);
});

const { browser, idpUser, throughProvider, signInWith } = oidcFlow({
  app: () => gw.app,
  issuer: () => issuer,
  publicUrl: PUBLIC_URL,
});

/** A GitHub user whose primary address is `email`, verified by GitHub or not. */
function githubUser(email: string, verified: boolean): string {
  const login = `gh-${randomBytes(5).toString('hex')}`;
  github.users.set(login, { id: randomBytes(3).readUIntBE(0, 3), login, emails: [{ email, primary: true, verified }] });
  return login;
}

/** The next mail to `email` with this subject (others to it are passed over). */
async function mailTo(email: string, subject: RegExp): Promise<Delivered> {
  for (;;) {
    const mail = await sink.next(email);
    if (subject.test(mail.subject)) return mail;
  }
}

async function resetPassword(email: string): Promise<void> {
  const from = request(gw.app);
  await from.post('/account/password/forgot').set('X-Forwarded-For', uniqueIp()).send({ email }).expect(202);
  const token = linkToken(await mailTo(email, /^Reset your reelay password$/), 'reset');
  await request(gw.app)
    .post('/account/password/reset')
    .set('X-Forwarded-For', uniqueIp())
    .send({ token, password: NEW_PASSWORD })
    .expect(204);
}

async function confirmAddress(email: string): Promise<void> {
  const token = linkToken(await mailTo(email, /^Confirm your e-mail address/), 'verify');
  await request(gw.app).post('/account/verify').set('X-Forwarded-For', uniqueIp()).send({ token }).expect(200);
}

/** Registers a passkey of a new software authenticator on the signed-in agent's account. */
async function addPasskey(agent: Agent): Promise<SoftAuthenticator> {
  const device = new SoftAuthenticator(PUBLIC_URL);
  const options = (await agent.post('/account/passkeys/register/options').expect(200)).body.data;
  await agent
    .post('/account/passkeys/register')
    .send({ name: 'Theirs', response: device.create(options) })
    .expect(201);
  return device;
}

/** Tries to sign in with the device's passkey; the status. */
async function passkeySignIn(device: SoftAuthenticator): Promise<number> {
  const agent = browser();
  const options = (await agent.post('/account/passkeys/login/options').expect(200)).body.data;
  return (await agent.post('/account/passkeys/login').send({ response: device.get(options) })).status;
}

/** Links a provider from the settings of the signed-in agent. */
async function linkFromSettings(agent: Agent, provider: 'test' | 'github', user: string): Promise<void> {
  const res = await agent.post(`/account/oauth/${provider}/link`).expect(200);
  expect((await agent.get(await throughProvider(res.body.data.url, user))).status).toBe(302);
}

const passwordWorks = async (email: string, password: string) =>
  (await request(gw.app).post('/account/login').set('X-Forwarded-For', uniqueIp()).send({ email, password })).status ===
  200;

describe('pre-account hijacking', () => {
  test('a provider that vouches for the address is refused (409 email_taken) while the address is unproven; after the owner resets the password the maker keeps no way in and the provider links', async () => {
    // Mallory signs up with Ada's address and a password of hers, and adds a passkey.
    const mallory = await signUp(gw.app);
    const ada = mallory.email;
    const mallorysKey = await addPasskey(mallory.agent);
    // Ada signs in with a provider that vouches for her address: not into Mallory's account.
    const adaAtIdp = idpUser(ada, true);
    const refused = await signInWith(browser(), adaAtIdp);
    expectError(refused, 409, 'email_taken');
    expect(refused.body.error.message).toMatch(
      /not confirmed.*Sign in with its password and link Test IdP from the settings/,
    );
    expect(refused.body.error.message).toMatch(/Forgot your password/);
    expect((await mallory.agent.get('/account/me').expect(200)).body.data.identities).toEqual([]);

    // Ada resets the password by mail: every way Mallory had is gone.
    await resetPassword(ada);
    expectError(await mallory.agent.get('/account/me'), 401, 'not_signed_in');
    expect(await passwordWorks(ada, PASSWORD)).toBe(false);
    expect(await passkeySignIn(mallorysKey)).toBe(401);
    // Now the provider signs Ada in to her account.
    const adaBrowser = browser();
    expect((await signInWith(adaBrowser, adaAtIdp)).status).toBe(302);
    expect((await adaBrowser.get('/account/me').expect(200)).body.data).toMatchObject({
      email: ada,
      email_verified: true,
      has_password: true,
      identities: [{ provider: 'test', email: ada }],
    });
    expect((await adaBrowser.get('/account/passkeys').expect(200)).body.data.passkeys).toEqual([]);
    expect(await passwordWorks(ada, NEW_PASSWORD)).toBe(true);
  });

  test('an account made through a provider that did not verify the address loses that identity when the owner resets the password', async () => {
    const ada = uniqueEmail();
    const mallorysIdp = idpUser(ada, false); // Mallory typed Ada's address at a provider that checks nothing
    const mallory = browser();
    expect((await signInWith(mallory, mallorysIdp)).status).toBe(302);
    expect((await mallory.get('/account/me').expect(200)).body.data).toMatchObject({
      email: ada,
      email_verified: false,
    });

    await resetPassword(ada);
    expectError(await mallory.get('/account/me'), 401, 'not_signed_in');
    // Her provider no longer signs in to Ada's account (it never vouched for the address).
    expectError(await signInWith(browser(), mallorysIdp), 409, 'email_taken');
    const adaBrowser = browser();
    await adaBrowser.post('/account/login').send({ email: ada, password: NEW_PASSWORD }).expect(200);
    expect((await adaBrowser.get('/account/me').expect(200)).body.data).toMatchObject({
      email_verified: true,
      identities: [],
    });
  });

  test('the first confirmation by mail ends every session and removes the passkeys and the providers whose e-mail was not verified; a provider that verified its e-mail stays', async () => {
    const maker = await signUp(gw.app);
    const phone = request.agent(gw.app).set('X-Forwarded-For', uniqueIp());
    await phone.post('/account/login').send({ email: maker.email, password: PASSWORD }).expect(200);
    const key = await addPasskey(maker.agent);
    const unverified = idpUser(uniqueEmail(), false);
    await linkFromSettings(maker.agent, 'test', unverified);
    await linkFromSettings(maker.agent, 'github', githubUser(uniqueEmail(), true));
    expect((await maker.agent.get('/account/me').expect(200)).body.data.identities).toHaveLength(2);

    await confirmAddress(maker.email);
    expectError(await maker.agent.get('/account/me'), 401, 'not_signed_in');
    expectError(await phone.get('/account/me'), 401, 'not_signed_in');
    expect(await passkeySignIn(key)).toBe(401);
    // The password stays: a confirmed sign-up keeps working.
    const again = request.agent(gw.app).set('X-Forwarded-For', uniqueIp());
    await again.post('/account/login').send({ email: maker.email, password: PASSWORD }).expect(200);
    const me = (await again.get('/account/me').expect(200)).body.data;
    expect(me).toMatchObject({ email_verified: true, identities: [{ provider: 'github' }] });
    expect((await again.get('/account/passkeys').expect(200)).body.data.passkeys).toEqual([]);
    // The unlinked identity signs in to this account no more (it makes an account of its own address).
    const other = browser();
    expect((await signInWith(other, unverified)).status).toBe(302);
    expect((await other.get('/account/me').expect(200)).body.data.email).not.toBe(maker.email);
  });

  test('a reset of a proven account ends every session and unlinks the providers that never vouched for this address; one that did stays', async () => {
    const user = await signUp(gw.app);
    await confirmAddress(user.email);
    await user.agent.post('/account/login').send({ email: user.email, password: PASSWORD }).expect(200);
    await linkFromSettings(user.agent, 'test', idpUser(user.email, true)); // vouches for this very address
    await linkFromSettings(user.agent, 'github', githubUser(uniqueEmail(), true)); // verified, another address
    const key = await addPasskey(user.agent);

    await resetPassword(user.email);
    expectError(await user.agent.get('/account/me'), 401, 'not_signed_in');
    const again = request.agent(gw.app).set('X-Forwarded-For', uniqueIp());
    await again.post('/account/login').send({ email: user.email, password: NEW_PASSWORD }).expect(200);
    expect((await again.get('/account/me').expect(200)).body.data.identities).toEqual([
      { provider: 'test', name: 'Test IdP', email: user.email },
    ]);
    // Not the first proof: the owner's passkey stays.
    expect(await passkeySignIn(key)).toBe(200);
  });

  test('a second identity of the same provider replaces the first, which then signs in no more', async () => {
    const user = await signUp(gw.app);
    const first = idpUser(uniqueEmail(), false);
    await linkFromSettings(user.agent, 'test', first);
    await linkFromSettings(user.agent, 'test', idpUser(uniqueEmail(), false));
    const old = browser();
    expect((await signInWith(old, first)).status).toBe(302);
    expect((await old.get('/account/me').expect(200)).body.data.email).not.toBe(user.email);
  });
});

describe('without mail', () => {
  test('no address is ever proven by mail, so a provider never links into a password account', async () => {
    const plain = await buildGateway({
      env: {
        TRUST_PROXY: 'true',
        PUBLIC_URL,
        OIDC_PROVIDERS: JSON.stringify([{ id: 'test', name: 'Test IdP', issuer: issuer.issuer, ...CLIENT }]),
      },
    });
    try {
      const owner = await signUp(plain.app);
      const agent = request.agent(plain.app).set('X-Forwarded-For', uniqueIp());
      const refused = await agent.get(
        await throughProvider(
          new URL((await agent.get('/account/oauth/test/start').expect(302)).headers.location).href,
          idpUser(owner.email, true),
        ),
      );
      expectError(refused, 409, 'email_taken');
      expect(refused.body.error.message).not.toMatch(/Forgot/);
    } finally {
      await plain.close();
    }
  });
});
