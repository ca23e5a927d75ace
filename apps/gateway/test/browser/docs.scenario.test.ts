// The API reference (/docs) in a real browser: Swagger UI from the gateway's own files renders the
// OpenAPI document under the web app's Content-Security-Policy (a violation is a console error, which
// fails the test), in the sections a user would look for, with examples; no request leaves the gateway.
import { afterEach, beforeEach, expect, test } from '@jest/globals';
import type { Page } from 'playwright-core';
import { describeBrowser, screenshot, useServedBrowser } from './browser.js';

let page: Page;
const outside: string[] = [];

describeBrowser('the API reference page', () => {
  const stack = useServedBrowser();

  beforeEach(async () => {
    await stack.browser.fresh();
    page = stack.browser.page;
    page.on('request', (req) => {
      if (!req.url().startsWith(stack.served.base) && !req.url().startsWith('data:')) outside.push(req.url());
    });
  });

  afterEach(() => {
    expect(outside.splice(0)).toEqual([]);
  });

  test('lists the sections by the names a user would look for, and shows the extract operation with an example', async () => {
    await page.goto(`${stack.served.base}/docs`);
    const sections = page.locator('.opblock-tag-section h3');
    await sections.first().waitFor();
    expect(await sections.allInnerTexts()).toEqual(
      ['Extract and download', 'Jobs', 'API with a key', 'Account', 'Subscriptions', 'Operations'].map((name) =>
        expect.stringContaining(name),
      ),
    );
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

  test('opens with what the API is for; the extract operation, opened, reads in a few screens, its error answers folded', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${stack.served.base}/docs`);
    const intro = page.locator('.information-container .renderedMarkdown p').first();
    await expect(intro.innerText()).resolves.toMatch(/^reelay finds the media of a public web page/);
    await expect(intro.boundingBox().then((box) => box!.y)).resolves.toBeLessThan(400);
    await page.getByText('A download in three steps').waitFor();

    const extract = page.locator('#operations-Extract_and_download-postApiV1Extract');
    await extract.locator('.opblock-summary').click();
    await extract.locator('.highlight-code').first().waitFor();
    const tall = async () => (await extract.boundingBox())!.height;
    // It was about 6,500 px here (7,900 on a phone): ten error answers, each with its example and headers.
    await expect(tall()).resolves.toBeLessThan(2_600);
    const notFound = extract.locator('tr.response[data-code="404"]');
    await expect(notFound.locator('.model-example').isVisible()).resolves.toBe(false);
    const details = notFound.getByRole('button', { name: 'Example and headers' });
    await expect(details.getAttribute('aria-expanded')).resolves.toBe('false');
    // The answer a caller wants stays open.
    await expect(extract.locator('tr.response[data-code="200"] .model-example').isVisible()).resolves.toBe(true);
    await details.click();
    await expect(details.getAttribute('aria-expanded')).resolves.toBe('true');
    await expect(notFound.locator('.model-example').innerText()).resolves.toContain('"error"');
    await screenshot(page, 'docs-extract-folded');

    await page.setViewportSize({ width: 390, height: 844 });
    await details.click();
    await expect(tall()).resolves.toBeLessThan(4_500);
  });

  test('documents the event stream with its media type and Last-Event-ID', async () => {
    await page.goto(`${stack.served.base}/docs#/Jobs/getApiV1JobsIdEvents`);
    const events = page.locator('#operations-Jobs-getApiV1JobsIdEvents');
    await events.locator('.opblock-body').waitFor();
    const text = await events.innerText();
    expect(text).toContain('Last-Event-ID');
    expect(text).toContain('text/event-stream');
    expect(text).toContain('event: job');
    await screenshot(page, 'docs-events');
  });
});
