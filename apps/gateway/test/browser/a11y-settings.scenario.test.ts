// The API keys page held to the audit (axe-core, 360 px, both sizes and themes, with screenshots):
// signed out, signed in with keys, and with the delete dialog open.
import { expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { auditPage } from './audit.js';
import { describeBrowser, useServedBrowser } from './browser.js';

describeBrowser('the API keys page passes the audit', () => {
  const stack = useServedBrowser();

  test('signed out, signed in with keys, and with the delete dialog open', async () => {
    await stack.browser.fresh();
    const { page, context } = stack.browser;
    await page.goto(`${stack.served.base}/settings/api-keys`);
    await page.getByRole('form', { name: 'Sign in' }).waitFor();
    const problems = await auditPage(page, 'settings-signed-out');

    const email = `a11y-${randomBytes(6).toString('hex')}@example.com`;
    expect(
      (
        await context.request.post(`${stack.served.base}/account/signup`, {
          data: { email, password: 'correct horse battery' },
        })
      ).status(),
    ).toBe(201);
    for (const name of ['production server with a rather long name', 'ci-bot']) {
      expect((await context.request.post(`${stack.served.base}/account/keys`, { data: { name } })).status()).toBe(201);
    }
    await page.reload();
    await page.getByRole('rowheader', { name: 'ci-bot' }).waitFor();
    problems.push(...(await auditPage(page, 'settings-keys')));

    await page
      .getByRole('row', { name: /ci-bot/ })
      .getByRole('button', { name: /^Delete/ })
      .click();
    await page.getByRole('dialog', { name: 'Delete this key?' }).waitFor();
    problems.push(...(await auditPage(page, 'settings-delete-dialog')));
    expect(problems).toEqual([]);
  });
});
