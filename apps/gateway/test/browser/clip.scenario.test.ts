// The playground's clip range and audio-only choice in a real browser: a range set on an item is cut
// by the real worker (the saved file is probed), a wrong range is told beside the fields without a
// request, the server's invalid_clip message is shown as it is, and the choices fit a phone.
import { beforeEach, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { clipProblem } from '@reelay/contracts';
import { describeBrowser, usePlaygroundStack, screenshot } from './browser.js';

const run = promisify(execFile);

let page: Page;
/** Every POST /api/v1/download the page made in the current test. */
let downloads: string[];

async function probe(file: string, entries: string): Promise<string[]> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', entries, '-of', 'csv=p=0', file]);
  return stdout.trim().split('\n');
}

describeBrowser('clip and audio-only choices in the playground', () => {
  const stack = usePlaygroundStack('clip', (origin, media) => {
    origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
    origin.file('/media/video-only.mp4', media.videoOnlyMp4, 'video/mp4');
    origin.file('/media/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
    origin.body('/subs/en.vtt', 'WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nHello\n', 'text/vtt');
    origin.body(
      '/watch.html',
      `<!doctype html><html><head><title>Clip card</title></head><body>
      <video controls><source src="/media/clip.mp4" type="video/mp4" label="240p"></video></body></html>`,
      'text/html',
    );
    origin.body(
      '/split.html',
      `<!doctype html><html><head><title>Split clip</title></head><body>
      <video><source src="/media/video-only.mp4" type='video/mp4; codecs="avc1.64001e"' label="360p"><source src="/media/audio-only.m4a" type='audio/mp4; codecs="mp4a.40.2"'>
        <track kind="subtitles" src="/subs/en.vtt" srclang="en" label="English"></video></body></html>`,
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
    // Well under jest's 30 s, so a missing element fails with its locator rather than a bare timeout.
    page.setDefaultTimeout(10_000);
    downloads = [];
    page.on('request', (req) => {
      if (req.method() === 'POST' && new URL(req.url()).pathname === '/api/v1/download')
        downloads.push(req.postData() ?? '');
    });
  });

  async function extract(url: string): Promise<void> {
    await page.goto(`${stack.served.base}/advanced`);
    await page.getByLabel('Page or media URL').fill(url);
    await page.getByLabel('Page or media URL').press('Enter');
    await page.getByRole('group', { name: 'Clip (optional)' }).waitFor();
  }

  async function setClip(start: string, end: string, mode?: 'fast' | 'precise'): Promise<void> {
    const clip = page.getByRole('group', { name: 'Clip (optional)' });
    await clip.getByLabel('Start').fill(start);
    await clip.getByLabel('End').fill(end);
    if (mode) await clip.getByLabel('Cut').selectOption(mode);
  }

  async function savedJob(): Promise<{ name: string; file: string }> {
    const job = page.locator('#job-list li').first();
    await job.locator('.job-status', { hasText: 'Completed' }).waitFor({ timeout: 60_000 });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      job.getByRole('link', { name: /^Save / }).click(),
    ]);
    return { name: download.suggestedFilename(), file: await download.path() };
  }

  test('a precise clip range on an item is cut by the worker: the saved file lasts end − start', async () => {
    await extract(stack.origin.url('/watch.html'));
    await setClip('0.5', '0:01.7', 'precise');
    await page.getByRole('button', { name: /^Download 240p/ }).click();
    await page
      .locator('#job-list li')
      .first()
      .getByText('240p video + audio of Clip card (0:00.5–0:01.7 precise)')
      .waitFor();
    expect(downloads.map((body) => JSON.parse(body).clip)).toEqual([{ start: 0.5, end: 1.7, mode: 'precise' }]);
    const { name, file } = await savedJob();
    expect(name).toBe('Clip card.mp4');
    await expect(probe(file, 'stream=codec_type')).resolves.toEqual(['video', 'audio']);
    const [duration] = await probe(file, 'format=duration');
    expect(Math.abs(Number(duration) - 1.2)).toBeLessThan(0.1);
  });

  test("audio only saves the item's sound in the chosen format, clipped like the rest", async () => {
    await extract(stack.origin.url('/watch.html'));
    await expect(page.locator('.audio-only').innerText()).resolves.toContain(
      'The sound of the 240p video + audio source, without its picture.',
    );
    await setClip('', '1', 'precise');
    await page.getByRole('group', { name: 'Audio only' }).getByLabel('Format').selectOption('m4a');
    await page.getByRole('button', { name: 'Save audio' }).click();
    const { name, file } = await savedJob();
    expect(name).toBe('Clip card.m4a');
    await expect(probe(file, 'stream=codec_type,codec_name')).resolves.toEqual(['aac,audio']);
    const [duration] = await probe(file, 'format=duration');
    expect(Math.abs(Number(duration) - 1)).toBeLessThan(0.1);
  });

  test("a merge takes the item's clip range too", async () => {
    await extract(stack.origin.url('/split.html'));
    await expect(page.locator('.audio-only').innerText()).resolves.toContain(
      'The sound of the original audio only source.',
    );
    await setClip('0:00.25', '1.25', 'precise');
    const merge = page.getByRole('group', { name: 'Merge video and audio' });
    await merge.getByLabel('Format').selectOption('mkv');
    await merge.getByRole('button', { name: 'Merge' }).click();
    const { name, file } = await savedJob();
    expect(name).toBe('Split clip.mkv');
    const [duration] = await probe(file, 'format=duration');
    expect(Math.abs(Number(duration) - 1)).toBeLessThan(0.1);
  });

  test('a wrong range is told beside the fields and no request is made', async () => {
    await extract(stack.origin.url('/hls/index.m3u8')); // an HLS playlist: its length (2 s) is known
    const clip = page.getByRole('group', { name: 'Clip (optional)' });
    const error = clip.getByRole('alert');
    const download = page.getByRole('button', { name: /^Download / }).first();

    await setClip('1.5', '1');
    await download.click();
    await expect(error.innerText()).resolves.toBe('The end must be after the start.');
    await expect(clip.getByLabel('End').getAttribute('aria-invalid')).resolves.toBe('true');

    await setClip('abc', '1');
    await download.click();
    await expect(error.innerText()).resolves.toBe('Start: write seconds (90) or minutes:seconds (1:30).');

    await setClip('0:05', '');
    await page.getByRole('button', { name: 'Save audio' }).click();
    await expect(error.innerText()).resolves.toBe('The start is at or past the end of the media (0:02).');
    // The field at fault takes the focus (the tests' TypeScript has no DOM types: a string is evaluated).
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe(
      await clip.getByLabel('Start').getAttribute('id'),
    );

    expect(downloads).toEqual([]);
    await expect(page.locator('#job-list li').count()).resolves.toBe(0);

    // Fixed, the message goes and the request is made.
    await setClip('0', '1');
    await download.click();
    await page.locator('#job-list li').first().waitFor();
    await expect(error.innerText()).resolves.toBe('');
    expect(downloads).toHaveLength(1);
  });

  test('a range the server refuses shows its invalid_clip message as it is', async () => {
    await extract(stack.origin.url('/watch.html'));
    await setClip('0', '100000'); // the page leaves the upper bound to the server
    await page.getByRole('button', { name: /^Download 240p/ }).click();
    await page.getByRole('status').and(page.locator('[data-kind="error"]')).waitFor();
    expect(downloads).toHaveLength(1);
    // The same request straight to the API: the page shows its envelope's message, word for word.
    const res = await fetch(`${stack.served.base}/api/v1/download`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: downloads[0],
    });
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect({ status: res.status, code: error.code }).toEqual({ status: 400, code: 'invalid_clip' });
    expect(error.message).toContain(clipProblem(0, 100_000));
    const inline = page.getByRole('group', { name: 'Clip (optional)' }).getByRole('alert');
    await expect(inline.innerText()).resolves.toBe(error.message);
    await expect(page.getByRole('status').innerText()).resolves.toBe(error.message);
  });

  test('a clip with subtitles to embed in a merge is refused in the page', async () => {
    await extract(stack.origin.url('/split.html'));
    await setClip('0', '1');
    const merge = page.getByRole('group', { name: 'Merge video and audio' });
    await merge
      .getByRole('group', { name: 'Subtitles to embed in the merge' })
      .getByRole('checkbox', { name: 'en' })
      .check();
    await merge.getByRole('button', { name: 'Merge' }).click();
    await page
      .getByRole('group', { name: 'Clip (optional)' })
      .getByRole('alert')
      .filter({ hasText: 'A clip cannot embed subtitles' })
      .waitFor();
    expect(downloads).toEqual([]);
  });

  test("the item's choices fit a 1280×800 window and a 390-wide phone without sideways scrolling", async () => {
    for (const [width, height, name] of [
      [1280, 800, 'playground-choices'],
      [390, 844, 'playground-choices-phone'],
    ] as const) {
      await page.setViewportSize({ width, height });
      await extract(stack.origin.url('/split.html'));
      await page.getByRole('heading', { level: 4, name: 'Subtitles' }).waitFor();
      const overflow = await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect({ width, overflow }).toEqual({ width, overflow: 0 });
      await screenshot(page, name);
    }
  });
});
