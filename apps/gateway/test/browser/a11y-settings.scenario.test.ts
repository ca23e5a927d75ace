// The API keys page held to the audit (axe-core, 360 px, both sizes and themes, with screenshots):
// signed out, signed in with keys, and with the delete dialog open.
import { afterAll, afterEach, beforeAll, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { auditPage } from './audit.js';
import { describeBrowser, launchBrowser, serveGateway, type ServedGateway, type TestBrowser } from './browser.js';

let served: ServedGateway;
let browser: TestBrowser;

describeBrowser('the API keys page passes the audit', () => {
  beforeAll(async () => {
    served = await serveGateway();
    browser = await launchBrowser();
  });

  afterEach(() => {
    expect(browser.errors.splice(0)).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  test('signed out, signed in with keys, and with the delete dialog open', async () => {
    await browser.fresh();
    const { page, context } = browser;
    await page.goto(`${served.base}/settings/api-keys`);
    await page.getByRole('form', { name: 'Sign in' }).waitFor();
    const problems = await auditPage(page, 'settings-signed-out');

    const email = `a11y-${randomBytes(6).toString('hex')}@example.com`;
    expect((await context.request.post(`${served.base}/account/signup`, { data: { email, password: 'correct horse battery' } })).status()).toBe(201);
    for (const name of ['production server with a rather long name', 'ci-bot']) {
      expect((await context.request.post(`${served.base}/account/keys`, { data: { name } })).status()).toBe(201);
    }
    await page.reload();
    await page.getByRole('rowheader', { name: 'ci-bot' }).waitFor();
    problems.push(...(await auditPage(page, 'settings-keys')));

    await page.getByRole('row', { name: /ci-bot/ }).getByRole('button', { name: /^Delete/ }).click();
    await page.getByRole('dialog', { name: 'Delete this key?' }).waitFor();
    problems.push(...(await auditPage(page, 'settings-delete-dialog')));
    expect(problems).toEqual([]);
  });
});
