// More options (the playground, /advanced) and the 404 page held to the audit (axe-core, 360 px, both
// sizes and themes, with screenshots) in each state a visitor sees: idle, after an extract, with a
// finished job, and lost. The front page's own states are audited in front.scenario.test.ts.
import { beforeEach, expect, test } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { auditPage } from './audit.js';
import { describeBrowser, usePlaygroundStack } from './browser.js';

let page: Page;

describeBrowser('More options and the 404 page pass the audit', () => {
  const stack = usePlaygroundStack('a11y-front', (origin, media) => {
    origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
    origin.file('/media/poster.png', media.png, 'image/png');
    origin.body(
      '/watch.html',
      `<!doctype html><html><head><title>Lavfi test card</title></head><body>
      <video poster="/media/poster.png" controls><source src="/media/clip.mp4" type="video/mp4" label="240p"></video>
      </body></html>`,
      'text/html',
    );
    for (const name of fs.readdirSync(media.hlsDir)) {
      origin.file(
        `/hls/${name}`,
        path.join(media.hlsDir, name),
        name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t',
      );
    }
  });

  beforeEach(async () => {
    await stack.browser.fresh();
    page = stack.browser.page;
  });

  async function extract(url: string): Promise<void> {
    await page.goto(`${stack.served.base}/advanced`);
    const field = page.getByLabel('Page or media URL');
    await field.fill(url);
    await field.press('Enter');
    await page.getByRole('heading', { level: 2 }).first().waitFor();
    // Enter in the field extracts and leaves the focus where it was.
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('url');
  }

  test('idle, after an extract, and with a finished job', async () => {
    await page.goto(`${stack.served.base}/advanced`);
    const problems = await auditPage(page, 'advanced-idle');

    await extract(stack.origin.url('/watch.html'));
    problems.push(...(await auditPage(page, 'advanced-extracted')));

    await extract(stack.origin.url('/hls/index.m3u8'));
    await page
      .getByRole('button', { name: /^Download / })
      .first()
      .click();
    await page.locator('#job-list li .job-status', { hasText: 'Completed' }).waitFor({ timeout: 20_000 });
    problems.push(...(await auditPage(page, 'advanced-job')));
    expect(problems).toEqual([]);
  });

  test('the 404 page', async () => {
    const answer = await page.goto(`${stack.served.base}/no/such/page`);
    expect(answer?.status()).toBe(404);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    expect(await auditPage(page, 'not-found')).toEqual([]);
  });
});
