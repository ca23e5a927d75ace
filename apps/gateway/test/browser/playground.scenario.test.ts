// More options (/advanced) in a real browser: extract a local page, save a progressive source, merge a
// video-only and an audio-only source with the real worker and save the artifact; a feed lists its
// entries a page at a time, each opened here or picked on the front page.
import { beforeEach, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { auditPage } from './audit.js';
import { describeBrowser, usePlaygroundStack, screenshot } from './browser.js';

const run = promisify(execFile);

let page: Page;

describeBrowser('the playground page', () => {
  const stack = usePlaygroundStack('playground', (origin, media) => {
    origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
    origin.file('/media/video-only.mp4', media.videoOnlyMp4, 'video/mp4');
    origin.file('/media/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
    origin.file('/media/poster.png', media.png, 'image/png');
    origin.body(
      '/watch.html',
      `<!doctype html><html><head><title>Lavfi test card</title></head><body>
      <video poster="/media/poster.png" controls><source src="/media/clip.mp4" type="video/mp4" label="240p"></video>
      </body></html>`,
      'text/html',
    );
    origin.body(
      '/split.html',
      `<!doctype html><html><head><title>Split tracks</title></head><body>
      <video poster="/media/poster.png"><source src="/media/video-only.mp4" type='video/mp4; codecs="avc1.64001e"' label="360p"><source src="/media/audio-only.m4a" type='audio/mp4; codecs="mp4a.40.2"'></video>
      </body></html>`,
      'text/html',
    );
    // A podcast feed longer than a page (100 entries): 120 episodes, each the same tone.
    origin.file('/audio/tone.m4a', media.audioOnlyM4a, 'audio/mp4');
    const episodes = Array.from(
      { length: 120 },
      (_, i) =>
        `<item><title>Episode ${i + 1}</title><guid isPermaLink="false">tones-${i + 1}</guid><pubDate>Wed, 25 Nov 2026 07:00:00 GMT</pubDate><enclosure url="${origin.url(`/audio/tone.m4a?episode=${i + 1}`)}" length="1000" type="audio/mp4"/></item>`,
    );
    origin.body(
      '/tones.xml',
      `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Tones Weekly</title><link>${origin.url('/')}</link>${episodes.join('')}</channel></rss>`,
      'application/rss+xml',
    );
    for (const name of fs.readdirSync(media.hlsDir)) {
      origin.file(
        `/hls/${name}`,
        path.join(media.hlsDir, name),
        name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t',
      );
    }
  });

  // A fresh context per test: no job list, storage or page state carried over from another test.
  beforeEach(async () => {
    await stack.browser.fresh();
    page = stack.browser.page;
  });

  async function extract(url: string): Promise<void> {
    await page.goto(`${stack.served.base}/advanced`);
    await page.getByLabel('Page or media URL').fill(url);
    await page.getByLabel('Page or media URL').press('Enter');
  }

  test('a page is extracted: title, platform, profile and each source with a download button', async () => {
    await extract(stack.origin.url('/watch.html'));
    await page.getByRole('heading', { level: 2, name: 'Lavfi test card' }).waitFor();
    const result = page.locator('#result');
    await expect(result.locator('.facts').innerText()).resolves.toMatch(/generic[\s\S]*html5/);
    await expect(page.getByRole('status').innerText()).resolves.toContain('Found 1 media item');
    const row = result.locator('tbody tr');
    await expect(row.count()).resolves.toBe(1);
    await expect(row.innerText()).resolves.toMatch(/240p[\s\S]*Video \+ audio/);
    await expect(result.locator('img.thumb').getAttribute('src')).resolves.toBe(stack.origin.url('/media/poster.png'));
    await screenshot(page, 'playground-result');
  });

  test("a feed lists its entries a page at a time; Open shows an entry's sources, and the front page takes it from there", async () => {
    await extract(stack.origin.url('/tones.xml'));
    await page.getByRole('heading', { level: 2, name: 'Tones Weekly' }).waitFor();
    await expect(page.getByRole('status').innerText()).resolves.toBe(
      '“Tones Weekly” is a collection of 120 entries: open one to see its media, or pick entries to download on the front page.',
    );
    const entries = page.getByRole('region', { name: 'Entries' });
    await expect(entries.getByText('Feed · 120 entries', { exact: true }).count()).resolves.toBe(1);
    const opens = entries.getByRole('button', { name: /^Open “Episode \d+” here$/ });
    await expect(opens.count()).resolves.toBe(100);
    const problems = await auditPage(page, 'advanced-collection');

    await entries.getByRole('button', { name: 'Show more' }).click();
    await page.getByRole('status').filter({ hasText: '120 of 120 entries are listed.' }).waitFor();
    await expect(opens.count()).resolves.toBe(120);
    // The keyboard moves to the first new entry; there is nothing more to show.
    await expect(page.evaluate('document.activeElement.getAttribute("aria-label")')).resolves.toBe(
      'Open “Episode 101” here',
    );
    await expect(entries.getByRole('button', { name: 'Show more' }).count()).resolves.toBe(0);

    // Open extracts the entry here: its sources, with their Download buttons.
    await entries.getByRole('button', { name: 'Open “Episode 3” here' }).click();
    await page
      .getByRole('button', { name: /^Download / })
      .first()
      .waitFor();
    await expect(page.getByLabel('Page or media URL').inputValue()).resolves.toBe(
      stack.origin.url('/audio/tone.m4a?episode=3'),
    );
    await expect(page.getByRole('status').innerText()).resolves.toContain('Found 1 media item');

    // The front page's checklist downloads several: the link hands it the feed.
    await extract(stack.origin.url('/tones.xml'));
    await page.getByRole('link', { name: 'Pick entries on the front page' }).click();
    await page.getByRole('region', { name: 'Tones Weekly' }).getByLabel('Episode 1', { exact: true }).waitFor();
    expect(problems).toEqual([]);
  }, 60_000);

  test('an error is shown as the envelope message', async () => {
    stack.origin.status('/gone', 404);
    await extract(stack.origin.url('/gone'));
    const status = page.getByRole('status');
    await status.filter({ hasText: /not found|404/i }).waitFor();
    await expect(status.getAttribute('data-kind')).resolves.toBe('error');
  });

  test('a progressive source is saved with the bytes of the origin file and its Content-Disposition name', async () => {
    await extract(stack.origin.url('/watch.html'));
    const button = page.getByRole('button', { name: /^Download 240p/ });
    const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
    const file = await download.path();
    expect(fs.statSync(file).size).toBe(fs.statSync(stack.media.muxedMp4).size);
    expect(download.suggestedFilename()).toBe('Lavfi test card.mp4');
    await page.getByRole('status').filter({ hasText: 'Saved Lavfi test card.mp4' }).waitFor();
  });

  test('an HLS source is saved through a job: progress, then a link to the artifact', async () => {
    await extract(stack.origin.url('/hls/index.m3u8'));
    await page.getByRole('heading', { level: 2 }).first().waitFor();
    const [button] = await page.getByRole('button', { name: /^Download / }).all();
    await button.click();
    const job = page.locator('#job-list li').first();
    await job.locator('.job-status', { hasText: 'Completed' }).waitFor({ timeout: 30_000 });
    const link = job.getByRole('link', { name: /^Save .*\.mp4$/ });
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const probe = await run('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'stream=codec_type',
      '-of',
      'csv=p=0',
      await download.path(),
    ]);
    expect(probe.stdout.trim().split('\n').sort()).toEqual(['audio', 'video']);
  });

  test('a video-only and an audio-only source are merged by the worker and the artifact is saved', async () => {
    await extract(stack.origin.url('/split.html'));
    const merge = page.getByRole('group', { name: 'Merge video and audio' });
    await expect(merge.getByLabel('Video').inputValue()).resolves.toBe(stack.origin.url('/media/video-only.mp4'));
    await expect(merge.getByLabel('Audio').inputValue()).resolves.toBe(stack.origin.url('/media/audio-only.m4a'));
    await merge.getByLabel('Format').selectOption('mkv');
    await merge.getByRole('button', { name: 'Merge' }).click();

    const job = page.locator('#job-list li').first();
    await job.getByRole('progressbar').waitFor();
    await job.locator('.job-status', { hasText: 'Completed' }).waitFor({ timeout: 30_000 });
    await expect(job.getByRole('progressbar').getAttribute('value')).resolves.toBe('100');
    await screenshot(page, 'playground-merged');

    const save = job.getByRole('link', { name: /^Save / });
    const [download] = await Promise.all([page.waitForEvent('download'), save.click()]);
    expect(download.suggestedFilename()).toBe('Split tracks.mkv');
    const probe = await run('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'stream=codec_type',
      '-of',
      'csv=p=0',
      await download.path(),
    ]);
    expect(probe.stdout.trim().split('\n').sort()).toEqual(['audio', 'video']);
  });
});
