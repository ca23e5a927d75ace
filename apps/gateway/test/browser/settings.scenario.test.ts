// The API key settings in a real browser, against the real account routes: sign up, create a key and
// see its secret once, watch its usage, disable, enable and delete it, and check /api agrees each time.
// Each test starts from a fresh browser context and its own client address, and sets up what it needs
// itself, so tests pass alone and in any order; every check waits for the state it expects.
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import { startOrigin, testMedia, type Origin } from '@reelay/testkit';
import { eventually } from '../account-helpers.js';
import {
  describeBrowser,
  launchBrowser,
  screenshot,
  serveGateway,
  type ServedGateway,
  type TestBrowser,
} from './browser.js';

let origin: Origin;
let served: ServedGateway;
let browser: TestBrowser;
let page: Page;
let email = '';
const password = 'correct horse battery';

describeBrowser('the API key settings page', () => {
  beforeAll(async () => {
    const media = await testMedia();
    origin = await startOrigin();
    origin.file('/clip.mp4', media.muxedMp4, 'video/mp4');
    // Behind a "proxy" so each test's context is its own client address (sign-up and sign-in limits).
    // Keyless and unknown-key calls count per address against the public limit, which every test
    // file shares on 127.0.0.1: testConfig keeps it out of reach, so other files' calls never answer 429 here.
    served = await serveGateway({ env: { TRUST_PROXY: 'true' } });
    browser = await launchBrowser();
  });

  beforeEach(async () => {
    email = `web-${randomBytes(6).toString('hex')}@example.com`;
    await browser.fresh({
      headers: { 'X-Forwarded-For': `10.${[...randomBytes(3)].join('.')}` },
      permissions: { names: ['clipboard-read', 'clipboard-write'], origin: served.base },
    });
    page = browser.page;
  });

  afterEach(() => {
    expect(browser.errors.splice(0)).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await origin?.close();
  });

  /** Signs this context up through the API (its cookie jar keeps the session) and opens the page. */
  async function signedIn(): Promise<void> {
    const res = await browser.context.request.post(`${served.base}/account/signup`, { data: { email, password } });
    expect(res.status()).toBe(201);
    await page.goto(`${served.base}/settings/api-keys`);
    await page.locator('#account-email', { hasText: email }).waitFor();
  }

  /** Creates a key through the API for the signed-in context and returns its secret. */
  async function createKey(name: string): Promise<string> {
    const res = await browser.context.request.post(`${served.base}/account/keys`, { data: { name } });
    expect(res.status()).toBe(201);
    return ((await res.json()) as { data: { secret: string } }).data.secret;
  }

  /** POST /api with a key, as an application would call it. */
  async function callApi(key: string, url: string): Promise<{ status: number; code?: string }> {
    const res = await fetch(`${served.base}/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ url }),
    });
    const body = (await res.json()) as { error?: { code: string } };
    return { status: res.status, code: body.error?.code };
  }

  const keyRow = (name: string): Locator =>
    page.locator('#keys-body tr', { has: page.getByRole('rowheader', { name, exact: true }) });
  const cells = async (row: Locator): Promise<string[]> =>
    (await row.locator('td').allInnerTexts()).map((t) => t.trim());

  test('signed out, the page offers sign-up and sign-in; a short password is refused before sending', async () => {
    await page.goto(`${served.base}/settings/api-keys`);
    const signup = page.getByRole('form', { name: 'Create an account' });
    await signup.waitFor();
    await page.getByRole('form', { name: 'Sign in' }).waitFor({ state: 'visible' });
    await screenshot(page, 'settings-signed-out');
    await signup.getByLabel('E-mail').fill(email);
    await signup.getByLabel('Password').fill('short');
    await signup.getByRole('button', { name: 'Sign up' }).click();
    await signup.getByRole('alert').filter({ hasText: 'at least 10 characters' }).waitFor();
    await expect(signup.getByLabel('Password').getAttribute('aria-invalid')).resolves.toBe('true');
  });

  test('signing up shows the account and an empty key list', async () => {
    await page.goto(`${served.base}/settings/api-keys`);
    const signup = page.getByRole('form', { name: 'Create an account' });
    await signup.getByLabel('E-mail').fill(email);
    await signup.getByLabel('Password').fill(password);
    await signup.getByLabel('Password').press('Enter');
    await page.locator('#account-email', { hasText: email }).waitFor();
    await page.getByText('You have no keys yet.').waitFor({ state: 'visible' });
    // This deployment mails nothing (no SMTP_URL): no "confirm your address" notice for a link never sent.
    await page.locator('#sign-in-methods').waitFor();
    expect(await page.locator('#verify-notice').count()).toBe(0);
    expect(await page.locator('#account-panel').innerText()).not.toMatch(/\b(null|undefined|false)\b/);
  });

  test("a new key's secret is shown once with a copy button, and is gone after a reload", async () => {
    await signedIn();
    await page.getByLabel('New key name').fill('ci-bot');
    await page.getByRole('button', { name: 'Create key' }).click();
    const panel = page.getByRole('region', { name: /Your new key/ });
    await panel.waitFor();
    await panel.getByText('It will not be shown again').waitFor();
    const secret = await panel.getByLabel('API key secret').inputValue();
    expect(secret).toMatch(/^rly_[A-Za-z0-9_-]{43,}$/);
    await panel.getByRole('button', { name: 'Copy' }).click();
    await panel.getByText(/Copied to the clipboard|press Ctrl\+C/).waitFor();
    await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(secret);
    await keyRow('ci-bot').waitFor();
    const [prefix, state, , lastUsed, total] = await cells(keyRow('ci-bot'));
    expect(prefix).toBe(`${secret.slice(0, 8)}…`);
    expect(state).toBe('Enabled');
    expect(lastUsed).toBe('Never');
    expect(total).toBe('0');
    await screenshot(page, 'settings-new-key');

    await page.reload();
    await keyRow('ci-bot').waitFor();
    await page.locator('#secret-panel').waitFor({ state: 'hidden' });
    expect(await page.content()).not.toContain(secret);
  });

  test('calls to /api with the key show up as usage after a reload', async () => {
    await signedIn();
    const secret = await createKey('ci-bot');
    await expect(callApi(secret, origin.url('/clip.mp4'))).resolves.toEqual({ status: 200, code: undefined });
    await expect(callApi(secret, 'not a url')).resolves.toEqual({ status: 400, code: 'invalid_url' });
    // Usage is counted just after each response: reload until the page shows both calls.
    await eventually(async () => {
      await page.reload();
      await keyRow('ci-bot').waitFor();
      const [, , , , total, successful, rate] = await cells(keyRow('ci-bot'));
      expect({ total, successful, rate }).toEqual({ total: '2', successful: '1', rate: '50%' });
    }, 5000);
    const [, , , lastUsed] = await cells(keyRow('ci-bot'));
    expect(lastUsed).not.toBe('Never');
    await screenshot(page, 'settings-usage');
  });

  test('a disabled key is refused by /api with 403, and works again once enabled', async () => {
    await signedIn();
    const secret = await createKey('ci-bot');
    await page.reload();
    await keyRow('ci-bot').getByRole('button', { name: 'Disable key ci-bot' }).click();
    await keyRow('ci-bot').getByText('Disabled', { exact: true }).waitFor();
    await expect(callApi(secret, origin.url('/clip.mp4'))).resolves.toEqual({ status: 403, code: 'api_key_disabled' });
    await keyRow('ci-bot').getByRole('button', { name: 'Enable key ci-bot' }).click();
    await keyRow('ci-bot').getByText('Enabled', { exact: true }).waitFor();
    await expect(callApi(secret, origin.url('/clip.mp4'))).resolves.toEqual({ status: 200, code: undefined });
  });

  test('deleting asks for confirmation; once confirmed the key is gone and /api answers 401', async () => {
    await signedIn();
    const secret = await createKey('ci-bot');
    await page.reload();
    await keyRow('ci-bot').getByRole('button', { name: 'Delete key ci-bot' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this key?' });
    await dialog.waitFor();
    await screenshot(page, 'settings-delete-dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect(keyRow('ci-bot').count()).resolves.toBe(1);

    await keyRow('ci-bot').getByRole('button', { name: 'Delete key ci-bot' }).click();
    await dialog.getByRole('button', { name: 'Delete key' }).click();
    await keyRow('ci-bot').waitFor({ state: 'detached' });
    await page.getByText('You have no keys yet.').waitFor({ state: 'visible' });
    await expect(callApi(secret, origin.url('/clip.mp4'))).resolves.toEqual({ status: 401, code: 'invalid_api_key' });
  });

  test('signing out shows the forms; a wrong password is refused readably; signing in again works', async () => {
    await signedIn();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    const login = page.getByRole('form', { name: 'Sign in' });
    await login.waitFor();
    await login.getByLabel('E-mail').fill(email);
    await login.getByLabel('Password').fill('not the password');
    await login.getByRole('button', { name: 'Sign in' }).click();
    await login.getByRole('alert').filter({ hasText: /./ }).waitFor();
    await login.getByLabel('Password').fill(password);
    await login.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#account-email', { hasText: email }).waitFor();
  });
});
