// The API reference (/docs, Swagger UI under the app's header) held to the audit (axe-core, 360 px,
// both sizes and themes, with screenshots), with an operation open.
import { expect, test } from '@jest/globals';
import { auditPage } from './audit.js';
import { describeBrowser, useServedBrowser } from './browser.js';

describeBrowser('the API reference passes the audit', () => {
  const stack = useServedBrowser();

  // axe-core over Swagger UI's large page, four times: slow on a loaded 2-core machine, hence 60 s.
  test('the API reference, with an operation open', async () => {
    await stack.browser.fresh();
    const { page } = stack.browser;
    await page.goto(`${stack.served.base}/docs#/Jobs/getApiV1JobsIdEvents`);
    await page.locator('#operations-Jobs-getApiV1JobsIdEvents .opblock-body').waitFor();
    // The screen, not the whole 8,000 px page: a full-page capture of it costs seconds per picture.
    expect(await auditPage(page, 'docs', { fullPage: false })).toEqual([]);
  }, 60_000);
});
