// The playground's Cancel button in a real browser: a merge whose video the origin holds back stays
// processing; Cancel sends DELETE /api/v1/jobs/{id}, the job shows "Cancelled" and the button goes.
import fs from 'node:fs';
import { beforeEach, expect, test } from '@jest/globals';
import type { Page } from 'playwright-core';
import { describeBrowser, usePlaygroundStack, screenshot } from './browser.js';

let page: Page;

describeBrowser('cancelling a job in the playground', () => {
  const stack = usePlaygroundStack('cancel', (origin, media) => {
    const video = fs.readFileSync(media.videoOnlyMp4);
    origin.route('/media/held.mp4', (_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': video.length });
      res.write(video.subarray(0, Math.floor(video.length / 3))); // and nothing more: the job stays processing
    });
    origin.file('/media/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
    origin.body(
      '/held.html',
      `<!doctype html><html><head><title>Held tracks</title></head><body>
      <video><source src="/media/held.mp4" type='video/mp4; codecs="avc1.64001e"' label="360p"><source src="/media/audio-only.m4a" type='audio/mp4; codecs="mp4a.40.2"'></video>
      </body></html>`,
      'text/html',
    );
  });

  beforeEach(async () => {
    await stack.browser.fresh();
    page = stack.browser.page;
  });

  test('a running job has a Cancel button; it cancels the job, which then shows Cancelled', async () => {
    await page.goto(`${stack.served.base}/advanced`);
    await page.getByLabel('Page or media URL').fill(stack.origin.url('/held.html'));
    await page.getByLabel('Page or media URL').press('Enter');
    const merge = page.getByRole('group', { name: 'Merge video and audio' });
    await merge.getByRole('button', { name: 'Merge' }).click();

    const job = page.locator('#job-list li').first();
    await job.locator('.badge', { hasText: 'processing' }).waitFor({ timeout: 15_000 });
    const cancel = job.getByRole('button', { name: /^Cancel / });
    await cancel.click();
    await job.locator('.badge', { hasText: 'cancelled' }).waitFor({ timeout: 15_000 });
    await expect(job.locator('.job-status').innerText()).resolves.toBe('Cancelled.');
    await expect(cancel.count()).resolves.toBe(0);
    await screenshot(page, 'playground-cancelled');
    const id = await job.getAttribute('data-job-id');
    const shown = (await (await fetch(`${stack.served.base}/api/v1/jobs/${id}`)).json()) as {
      data: { status: string };
    };
    expect(shown.data.status).toBe('cancelled');
  });
});
