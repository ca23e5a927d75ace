// Passkeys and the account card in a real browser: Debian's chromium with a CDP virtual authenticator
// (resident keys, user verification) registers two passkeys, renames and removes one, and signs in
// with the other (a discoverable credential: no e-mail typed). The relying party is PUBLIC_URL,
// http://localhost:<port>, which browsers treat as a secure context. The same page shows a button per
// configured provider, a key's usage chart, the sessions, and deletes the account.
import { afterAll, beforeAll, beforeEach, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CDPSession, Page } from 'playwright-core';
import { buildGateway, type TestGateway } from '../helpers.js';
import { describeBrowser, launchBrowser, type TestBrowser } from './browser.js';

let server: http.Server;
let gateway: TestGateway;
let base: string;
let browser: TestBrowser;
let page: Page;
let cdp: CDPSession;
/** The virtual authenticator added last. */
let lastDevice = '';
const password = 'correct horse battery';

describeBrowser('passkeys and the account card', () => {
  beforeAll(async () => {
    // The port first, so PUBLIC_URL (the passkeys' origin) can name it.
    server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://localhost:${(server.address() as AddressInfo).port}`;
    // GitHub is configured only to show its button; no test follows it (port 9 answers nothing).
    gateway = await buildGateway({
      env: {
        TRUST_PROXY: 'true',
        PUBLIC_URL: base,
        GITHUB_CLIENT_ID: 'gh',
        GITHUB_CLIENT_SECRET: 'gh-secret',
        GITHUB_OAUTH_URL: 'http://127.0.0.1:9',
        GITHUB_API_URL: 'http://127.0.0.1:9',
      },
    });
    server.on('request', gateway.app);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await gateway?.close();
  });

  beforeEach(async () => {
    await browser.fresh({ headers: { 'X-Forwarded-For': `10.${[...randomBytes(3)].join('.')}` } });
    page = browser.page;
    // A step that cannot happen fails with its own message instead of the test's timeout.
    page.setDefaultTimeout(10_000);
    cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await device();
  });

  /** A virtual platform authenticator (another device), holding `credentials` if given. */
  async function device(credentials: object[] = [], verifiesUser = true): Promise<string> {
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: verifiesUser,
        isUserVerified: verifiesUser,
        automaticPresenceSimulation: true,
      },
    });
    for (const credential of credentials)
      await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: credential as never });
    lastDevice = authenticatorId;
    return authenticatorId;
  }

  async function signUp(): Promise<string> {
    const email = `web-${randomBytes(6).toString('hex')}@example.com`;
    await page.goto(`${base}/settings/api-keys`);
    const signup = page.getByRole('form', { name: 'Create an account' });
    await signup.getByLabel('E-mail').fill(email);
    await signup.getByLabel('Password').fill(password);
    await signup.getByLabel('Password').press('Enter');
    await page.locator('#account-email', { hasText: email }).waitFor();
    return email;
  }

  test('registers two passkeys, renames and removes one, and signs in with the other', async () => {
    const email = await signUp();
    const addPasskey = async (name: string) => {
      await page.locator('#passkey-name').fill(name);
      await page.locator('#add-passkey').click();
      await page.locator('#passkey-list li', { hasText: name }).waitFor();
    };
    // One passkey per device and account (the authenticator refuses a second): the laptop's, then the
    // phone's on another virtual device; the laptop's credential is kept to come back to.
    const laptopDevice = lastDevice;
    await addPasskey('Laptop');
    const laptop = (await cdp.send('WebAuthn.getCredentials', { authenticatorId: laptopDevice })).credentials;
    expect(laptop).toHaveLength(1);
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: laptopDevice });
    const phoneDevice = await device();
    await addPasskey('Phone');
    expect(await page.locator('#passkey-list li').count()).toBe(2);
    page.once('dialog', (dialog) => void dialog.accept('Work laptop'));
    await page.locator('#passkey-list li', { hasText: 'Laptop' }).getByRole('button', { name: 'Rename' }).click();
    await page.locator('#passkey-list li', { hasText: 'Work laptop' }).waitFor();
    await page.getByRole('button', { name: 'Remove passkey Phone' }).click();
    await page.locator('#passkey-list li', { hasText: 'Phone' }).waitFor({ state: 'detached' });
    const listed = await page.evaluate(async () =>
      (
        (await (await fetch('/account/passkeys')).json()) as { data: { passkeys: { name: string }[] } }
      ).data.passkeys.map((p) => p.name),
    );
    expect(listed).toEqual(['Work laptop']);

    // Back on the laptop: its passkey signs in, with no e-mail typed.
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: phoneDevice });
    await device(laptop);
    await page.locator('#logout-button').click();
    await page.locator('#passkey-signin').click();
    await page.locator('#account-email', { hasText: email }).waitFor();
    expect(browser.errors).toEqual([]);
  });

  test('a passkey answer replayed, or sent for another challenge, is refused; a deleted account’s passkey signs in no more', async () => {
    await signUp();
    // Capture one real sign-in answer from the authenticator, use it, then send it again.
    await page.locator('#passkey-name').fill('Key');
    await page.locator('#add-passkey').click();
    await page.locator('#passkey-list li', { hasText: 'Key' }).waitFor();
    const statuses = await page.evaluate(async () => {
      // Browser globals, typed loosely: this file is compiled without the DOM library.
      const web = globalThis as unknown as {
        PublicKeyCredential: { parseRequestOptionsFromJSON(o: unknown): unknown };
        navigator: { credentials: { get(o: unknown): Promise<{ toJSON(): unknown }> } };
      };
      const post = (path: string, body?: unknown) =>
        fetch(path, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const options = ((await (await post('/account/passkeys/login/options')).json()) as { data: unknown }).data;
      const credential = await web.navigator.credentials.get({
        publicKey: web.PublicKeyCredential.parseRequestOptionsFromJSON(options),
      });
      const answer = credential.toJSON();
      const first = (await post('/account/passkeys/login', { response: answer })).status;
      const replay = (await post('/account/passkeys/login', { response: answer })).status;
      await post('/account/passkeys/login/options'); // a fresh challenge does not revive the old answer
      const stale = (await post('/account/passkeys/login', { response: answer })).status;
      // Deleting the account (just signed in: no password needed) takes its passkeys along.
      const deleted = (await fetch('/account', { method: 'DELETE' })).status;
      const again = ((await (await post('/account/passkeys/login/options')).json()) as { data: unknown }).data;
      const orphan = await web.navigator.credentials.get({
        publicKey: web.PublicKeyCredential.parseRequestOptionsFromJSON(again),
      });
      const afterDeletion = (await post('/account/passkeys/login', { response: orphan.toJSON() })).status;
      return [first, replay, stale, deleted, afterDeletion];
    });
    expect(statuses).toEqual([200, 401, 401, 204, 401]);
  });

  test('a passkey answer made without user verification is refused, at registration and at sign-in, even when the page asked for none', async () => {
    await signUp();
    // The served options require user verification; a hostile (or old) page lowers that to
    // "discouraged", and an authenticator that cannot verify its user (a security key without a PIN)
    // then answers without the UV flag.
    const ask = async (step: 'register' | 'login', credentialId?: string) =>
      page.evaluate(
        async ([what, id]) => {
          const web = globalThis as unknown as {
            PublicKeyCredential: {
              parseCreationOptionsFromJSON(o: unknown): unknown;
              parseRequestOptionsFromJSON(o: unknown): unknown;
            };
            navigator: {
              credentials: {
                create(o: unknown): Promise<{ toJSON(): unknown }>;
                get(o: unknown): Promise<{ toJSON(): unknown }>;
              };
            };
          };
          const post = (path: string, body?: unknown) =>
            fetch(path, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json' },
              body: body === undefined ? undefined : JSON.stringify(body),
            });
          type Options = {
            userVerification?: string;
            authenticatorSelection: { userVerification?: string };
            allowCredentials?: { id: string; type: string }[];
          };
          const options = ((await (await post(`/account/passkeys/${what}/options`)).json()) as { data: Options }).data;
          const asked =
            what === 'register' ? options.authenticatorSelection.userVerification : options.userVerification;
          if (what === 'register') options.authenticatorSelection.userVerification = 'discouraged';
          else options.userVerification = 'discouraged';
          // Named, as a page may: chromium protects a discoverable passkey made with user verification
          // (credProtect), so that only a request naming it may go without.
          if (id) options.allowCredentials = [{ id, type: 'public-key' }];
          const credential =
            what === 'register'
              ? await web.navigator.credentials.create({
                  publicKey: web.PublicKeyCredential.parseCreationOptionsFromJSON(options),
                })
              : await web.navigator.credentials.get({
                  publicKey: web.PublicKeyCredential.parseRequestOptionsFromJSON(options),
                });
          const answer = await post(`/account/passkeys/${what}`, {
            ...(what === 'register' ? { name: 'Unverified' } : {}),
            response: credential.toJSON(),
          });
          return {
            asked,
            status: answer.status,
            code: ((await answer.json()) as { error?: { code: string } }).error?.code,
          };
        },
        [step, credentialId] as const,
      );
    const phone = lastDevice;
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: phone });
    const securityKey = await device([], false);
    expect(await ask('register')).toEqual({ asked: 'required', status: 401, code: 'invalid_credentials' });
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId: securityKey })).credentials).toHaveLength(1);
    expect((await page.request.get(`${base}/account/passkeys`)).ok()).toBe(true);
    expect(
      ((await (await page.request.get(`${base}/account/passkeys`)).json()) as { data: { passkeys: [] } }).data.passkeys,
    ).toEqual([]);
    // A passkey registered properly on the phone, then its credential used by a device that does not
    // verify its user.
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: securityKey });
    const verified = await device();
    await page.locator('#passkey-name').fill('Phone');
    await page.locator('#add-passkey').click();
    await page.locator('#passkey-list li', { hasText: 'Phone' }).waitFor();
    const credentials = (await cdp.send('WebAuthn.getCredentials', { authenticatorId: verified })).credentials;
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: verified });
    await device(credentials, false);
    await page.locator('#logout-button').click();
    await page.locator('#passkey-signin').waitFor();
    const id = Buffer.from(credentials[0].credentialId, 'base64').toString('base64url');
    expect(await ask('login', id)).toEqual({ asked: 'required', status: 401, code: 'invalid_credentials' });
    expect((await page.request.get(`${base}/account/me`)).status()).toBe(401);
  });

  test('the sign-in page offers each provider; a key’s usage is charted; sessions are listed; the account can be deleted', async () => {
    await page.goto(`${base}/settings/api-keys`);
    await page.getByRole('link', { name: 'Sign in with GitHub' }).waitFor();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
    await signUp();
    await page.locator('#key-name').fill('chart');
    await page.getByRole('button', { name: 'Create key' }).click();
    // The secret is filled in once the key is made: read it only then (read at once it was sometimes
    // still empty, and the three requests went out without a key).
    await page.waitForFunction("(document.querySelector('#secret-value')?.value ?? '') !== ''");
    const secret = await page.locator('#secret-value').inputValue();
    for (let i = 0; i < 3; i++) {
      const answer = await page.request.post(`${base}/api`, {
        headers: { 'X-API-Key': secret },
        data: { url: 'not a url' },
      });
      expect(answer.status()).toBe(400); // the key let it through; the body is what is wrong
    }
    await page.getByRole('button', { name: 'I have stored it' }).click();
    // Usage is counted just after each answer: chart it until the day shows all three, one drawing at
    // a time (the panel is emptied before each click and its heading awaited), so that no earlier
    // click's answer, drawn late, can stand for the last one.
    for (let i = 0; i < 50; i++) {
      await page.evaluate("document.querySelector('#usage-panel')?.replaceChildren()");
      await page.getByRole('button', { name: 'Usage: chart' }).click();
      await page.locator('#usage-panel h3').waitFor();
      if ((await page.locator('#usage-panel svg g[data-requests="3"]').count()) === 1) break;
      await page.waitForTimeout(100);
    }
    await page.locator('#usage-panel svg g[data-requests="3"]').waitFor();
    expect(await page.locator('#usage-panel svg g').count()).toBe(30);
    await page.locator('#session-list li[data-current="true"]').waitFor();

    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator('#delete-account-form-password').fill(password);
    await page.getByRole('button', { name: 'Delete my account' }).click();
    await page.getByRole('form', { name: 'Create an account' }).waitFor();
    const key = await page.request.post(`${base}/api`, {
      headers: { 'X-API-Key': secret },
      data: { url: 'not a url' },
    });
    expect(key.status()).toBe(401);
  });
});
