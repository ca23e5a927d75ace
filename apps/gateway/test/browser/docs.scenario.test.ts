// The API reference (/docs) in a real browser: Swagger UI from the gateway's own files renders the
// OpenAPI document under the web app's Content-Security-Policy (a violation is a console error, which
// fails the test), in the sections a user would look for, with examples; no request leaves the gateway.
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from '@jest/globals';
import type { Page } from 'playwright-core';
import { describeBrowser, launchBrowser, screenshot, serveGateway, type ServedGateway, type TestBrowser } from './browser.js';

let served: ServedGateway;
let browser: TestBrowser;
let page: Page;
const outside: string[] = [];

describeBrowser('the API reference page', () => {
  beforeAll(async () => {
    served = await serveGateway();
    browser = await launchBrowser();
  });

  beforeEach(async () => {
    await browser.fresh();
    page = browser.page;
    page.on('request', (req) => {
      if (!req.url().startsWith(served.base) && !req.url().startsWith('data:')) outside.push(req.url());
    });
  });

  afterEach(() => {
    expect(browser.errors.splice(0)).toEqual([]);
    expect(outside.splice(0)).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  test('lists the sections by the names a user would look for, and shows the extract operation with an example', async () => {
    await page.goto(`${served.base}/docs`);
    const sections = page.locator('.opblock-tag-section h3');
    await sections.first().waitFor();
    expect(await sections.allInnerTexts()).toEqual(['Extract and download', 'Jobs', 'API with a key', 'Account', 'Subscriptions', 'Operations'].map((name) => expect.stringContaining(name)));
    const extract = page.locator('#operations-Extract_and_download-postApiV1Extract');
    await extract.locator('.opblock-summary').click();
    await expect(extract.locator('.opblock-summary-path').innerText()).resolves.toContain('/api/v1/extract');
    // The request example and the answer's example are shown, not only the schemas.
    await extract.locator('.body-param__example, .highlight-code').first().waitFor();
    const text = await extract.innerText();
    expect(text).toContain('https://example.com/watch/clip');
    expect(text).toContain('"extract_profile"');
    await screenshot(page, 'docs-extract');
  });

  test('documents the event stream with its media type and Last-Event-ID', async () => {
    await page.goto(`${served.base}/docs#/Jobs/getApiV1JobsIdEvents`);
    const events = page.locator('#operations-Jobs-getApiV1JobsIdEvents');
    await events.locator('.opblock-body').waitFor();
    const text = await events.innerText();
    expect(text).toContain('Last-Event-ID');
    expect(text).toContain('text/event-stream');
    expect(text).toContain('event: job');
    await screenshot(page, 'docs-events');
  });
});
