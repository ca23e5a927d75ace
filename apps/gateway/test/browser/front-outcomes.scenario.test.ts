// What the front page says and does at each outcome a newcomer meets, in a real browser: a download
// the server had made before (by the CLI or another browser) is saved at once, with its size; a link
// with no media gets plain words and a next step; a direct download is told in one place, not two;
// and after Cancel nothing still says the file is being made.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { beforeEach, expect, test } from '@jest/globals';
import type { Download, Page } from 'playwright-core';
import { auditPage } from './audit.js';
import { describeBrowser, usePlaygroundStack } from './browser.js';

let page: Page;

const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');
const bytesOf = async (download: Download) => fs.readFileSync((await download.path())!);

describeBrowser('the front page at each outcome', () => {
  const stack = usePlaygroundStack('front-outcomes', (origin, media) => {
    // Its own clip URL, so no other test's job is the one made before.
    origin.file('/media/made.mp4', media.muxedMp4, 'video/mp4');
    origin.body(
      '/made.html',
      `<!doctype html><html><head><title>Made before</title></head><body>
      <video><source src="/media/made.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"' label="240p"></video></body></html>`,
      'text/html',
    );
    origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
    origin.body(
      '/watch.html',
      `<!doctype html><html><head><title>Test card</title></head><body>
      <video><source src="/media/clip.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"' label="240p"></video></body></html>`,
      'text/html',
    );
    origin.body(
      '/empty.html',
      '<!doctype html><html><head><title>Nothing here</title></head><body><p>Only words.</p></body></html>',
      'text/html',
    );
    // A merge whose video the origin holds back: the job stays processing until it is cancelled.
    const video = fs.readFileSync(media.videoOnlyMp4);
    origin.route('/media/held.mp4', (_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': video.length });
      res.write(video.subarray(0, Math.floor(video.length / 3)));
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

  const queueRow = (title: string) => page.locator('#queue-list li', { hasText: title });
  const status = () => page.locator('#status');

  async function submit(url: string): Promise<void> {
    await page.getByLabel('Link', { exact: true }).fill(url);
    await page.getByRole('button', { name: 'Download', exact: true }).click();
  }

  /** The page's lines a sighted visitor sees (a visually hidden status line is not one). */
  const shownTexts = () =>
    page.evaluate<string[]>(`[...document.querySelectorAll('main p')]
      .filter((el) => el.checkVisibility() && el.getBoundingClientRect().width > 1 && el.getBoundingClientRect().height > 1)
      .map((el) => el.textContent)`);

  test('a download the server made before is saved at once with its size, and offered again after a reload', async () => {
    const link = stack.origin.url('/made.html');
    // The same download made before, as the CLI or another browser would have asked for it.
    const made = await fetch(`${stack.served.base}/api/v1/download`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ page_url: link, audio_only: true, format: 'mp3' }),
    });
    expect(made.status).toBe(202);
    const id = ((await made.json()) as { data: { job_id: string } }).data.job_id;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const job = (await (await fetch(`${stack.served.base}/api/v1/jobs/${id}`)).json()) as {
        data: { status: string };
      };
      if (job.data.status === 'completed') break;
      if (Date.now() > deadline) throw new Error(`the job made before is still ${job.data.status}`);
      await new Promise((r) => setTimeout(r, 100));
    }

    await page.goto(`${stack.served.base}/`);
    await page.getByText('Preferences', { exact: true }).click();
    await page.getByLabel('Sound only').check();
    await page.getByLabel('File type').selectOption('mp3');
    const download = page.waitForEvent('download', { timeout: 15_000 });
    await submit(link);
    const saved = await download;
    expect(saved.suggestedFilename()).toBe('Made before.mp3');
    const artifact = Buffer.from(await (await fetch(`${stack.served.base}/api/v1/jobs/${id}/artifact`)).arrayBuffer());
    expect(sha(await bytesOf(saved))).toBe(sha(artifact));

    const row = queueRow('Made before');
    await expect(row.getAttribute('data-job-id')).resolves.toBe(id);
    await row.locator('.badge', { hasText: 'Ready' }).waitFor();
    await expect(row.locator('.job-status').innerText()).resolves.toMatch(/^Ready \(\d+(\.\d)? KB\)\.$/);
    await row.getByRole('link', { name: 'Save Made before.mp3' }).waitFor();
    await expect(status().innerText()).resolves.toBe('“Made before” was made before: it is going to your downloads.');
    expect((await shownTexts()).join('\n')).not.toContain('is being made');
    const problems = await auditPage(page, 'front-made-before');

    // A row stored without its file (as an earlier version of the page left it): a reload fetches it.
    let again = false;
    page.on('download', () => (again = true));
    const stored = [{ id, title: 'Made before', kind: 'job', status: 'completed', created: 1 }];
    await page.evaluate(`localStorage.setItem('reelay-queue', ${JSON.stringify(JSON.stringify(stored))})`);
    await page.reload();
    await queueRow('Made before').getByRole('link', { name: 'Save Made before.mp3' }).waitFor();
    expect(again).toBe(false);
    expect(problems).toEqual([]);
  }, 60_000);

  test('a link with no media gets plain words and a next step, in English and in German', async () => {
    await page.goto(`${stack.served.base}/`);
    await submit(stack.origin.url('/empty.html'));
    const error = status().and(page.locator('[data-kind="error"]'));
    await error.waitFor();
    const words = await error.innerText();
    expect(words).toMatch(/^No video or sound was found at this link\. Check that it opens the page that plays it/);
    expect(words).toContain('More options');
    expect(words).not.toMatch(/OpenGraph|Twitter|JSON-LD|yt-dlp|HLS|DASH/);
    const problems = await auditPage(page, 'front-no-media');
    await page.evaluate(`import('/assets/i18n.js').then((m) => m.setLanguage('de'))`);
    await expect(error.innerText()).resolves.toMatch(/^Unter diesem Link wurde kein Video und kein Ton gefunden\./);
    expect(problems).toEqual([]);
  });

  test('a direct download is told in one place: its row, not the status line as well', async () => {
    await page.goto(`${stack.served.base}/`);
    const download = page.waitForEvent('download');
    await submit(stack.origin.url('/watch.html'));
    expect((await download).suggestedFilename()).toBe('Test card.mp4');
    await queueRow('Test card').locator('.job-status', { hasText: 'Test card.mp4' }).waitFor();
    expect((await shownTexts()).filter((text) => text?.includes('Test card.mp4'))).toEqual([
      'Sent to your browser’s downloads as Test card.mp4.',
    ]);
    // Screen readers still hear it: the status line says it, visually hidden.
    await expect(status().innerText()).resolves.toBe('Test card.mp4 is going to your downloads.');
  });

  test('after Cancel nothing still says the file is being made', async () => {
    await page.goto(`${stack.served.base}/`);
    await submit(stack.origin.url('/held.html'));
    const row = queueRow('Held tracks');
    await row.locator('.badge', { hasText: 'Working' }).waitFor({ timeout: 15_000 });
    expect((await shownTexts()).join('\n')).toContain('“Held tracks” is being made into a file.');
    await row.getByRole('button', { name: 'Cancel “Held tracks”' }).click();
    await row.locator('.badge', { hasText: 'Cancelled' }).waitFor({ timeout: 15_000 });
    await expect(status().innerText()).resolves.toBe('“Held tracks” was cancelled.');
    expect((await shownTexts()).join('\n')).not.toContain('being made');
  });
});
