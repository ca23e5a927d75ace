// The API reference (/docs, Swagger UI under the app's header) held to the audit (axe-core, 360 px,
// both sizes and themes, with screenshots), with an operation open.
import { afterAll, afterEach, beforeAll, expect, test } from '@jest/globals';
import { auditPage } from './audit.js';
import { describeBrowser, launchBrowser, serveGateway, type ServedGateway, type TestBrowser } from './browser.js';

let served: ServedGateway;
let browser: TestBrowser;

describeBrowser('the API reference passes the audit', () => {
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

  // axe-core over Swagger UI's large page, four times: slow on a loaded 2-core machine, hence 60 s.
  test('the API reference, with an operation open', async () => {
    await browser.fresh();
    const { page } = browser;
    await page.goto(`${served.base}/docs#/Jobs/getApiV1JobsIdEvents`);
    await page.locator('#operations-Jobs-getApiV1JobsIdEvents .opblock-body').waitFor();
    // The screen, not the whole 8,000 px page: a full-page capture of it costs seconds per picture.
    expect(await auditPage(page, 'docs', { fullPage: false })).toEqual([]);
  }, 60_000);
});
