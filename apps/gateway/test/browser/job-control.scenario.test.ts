// Only the browser that started a job controls it, after a reload too: the front page keeps each
// job's control token with its queue entry (localStorage) and sends it with Cancel. A client that has
// only the job's id (here: Node's fetch, as a stranger would) can read the job but not cancel it.
import fs from 'node:fs';
import { beforeEach, expect, test } from '@jest/globals';
import type { Page } from 'playwright-core';
import { describeBrowser, usePlaygroundStack } from './browser.js';

let page: Page;

describeBrowser("a job's control stays with the browser that started it", () => {
  const stack = usePlaygroundStack('job-control', (origin, media) => {
    // A merge whose video the origin holds back: the job stays processing until it is cancelled.
    const video = fs.readFileSync(media.videoOnlyMp4);
    origin.route('/media/held.mp4', (_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': video.length });
      res.write(video.subarray(0, Math.floor(video.length / 3)));
    });
    origin.file('/media/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
    origin.body(
      '/held.html',
      `<!doctype html><html><head><title>Kept tracks</title></head><body>
      <video><source src="/media/held.mp4" type='video/mp4; codecs="avc1.64001e"' label="360p"><source src="/media/audio-only.m4a" type='audio/mp4; codecs="mp4a.40.2"'></video>
      </body></html>`,
      'text/html',
    );
  });

  beforeEach(async () => {
    await stack.browser.fresh();
    page = stack.browser.page;
  });

  test('a job started on the front page is cancelled from its queue after a reload; a stranger with its id cannot', async () => {
    await page.goto(`${stack.served.base}/`);
    await page.getByLabel('Link', { exact: true }).fill(stack.origin.url('/held.html'));
    await page.getByRole('button', { name: 'Download', exact: true }).click();
    const row = page.locator('#queue-list li', { hasText: 'Kept tracks' });
    await row.locator('.badge', { hasText: 'Working' }).waitFor({ timeout: 15_000 });
    const id = (await row.getAttribute('data-job-id'))!;
    const jobUrl = `${stack.served.base}/api/v1/jobs/${id}`;

    // Someone who has only the id: reads the job, cannot cancel it.
    const stranger = await fetch(jobUrl, { method: 'DELETE' });
    expect([stranger.status, ((await stranger.json()) as { error: { code: string } }).error.code]).toEqual([
      403,
      'job_control_forbidden',
    ]);
    const running = (await (await fetch(jobUrl)).json()) as { data: { status: string } };
    expect(running.data.status).toBe('processing');

    await page.reload();
    await row.locator('.badge', { hasText: 'Working' }).waitFor();
    await row.getByRole('button', { name: 'Cancel “Kept tracks”' }).click();
    await row.locator('.badge', { hasText: 'Cancelled' }).waitFor({ timeout: 15_000 });
    await expect(row.locator('.job-status').innerText()).resolves.toBe('Cancelled. Nothing was saved.');
    const job = (await (await fetch(jobUrl)).json()) as { data: { status: string } };
    expect(job.data.status).toBe('cancelled');
    // The token never reached the page's text, only its storage.
    const stored = (await page.evaluate("localStorage.getItem('reelay-queue') ?? ''")) as string;
    const token = (JSON.parse(stored) as { id: string; token?: string }[]).find((e) => e.id === id)?.token;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await page.locator('body').innerText()).not.toContain(token);
  });
});
