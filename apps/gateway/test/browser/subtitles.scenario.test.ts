// The playground's subtitle choices in a real browser: a page's tracks listed, saved as they are or
// converted by the worker, embedded in a video, and a source converted to another format.
import { beforeEach, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { describeBrowser, usePlaygroundStack, screenshot } from './browser.js';

const run = promisify(execFile);

let page: Page;
const EN_VTT = 'WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nHello\n';
const FR_SRT = '1\n00:00:00,000 --> 00:00:01,000\nBonjour\n';

describeBrowser('subtitle choices in the playground', () => {
  const stack = usePlaygroundStack('subtitles', (origin, media) => {
    origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
    origin.body('/subs/en.vtt', EN_VTT, 'text/vtt');
    origin.body('/subs/fr.srt', FR_SRT, 'application/x-subrip');
    origin.file('/media/video-only.mp4', media.videoOnlyMp4, 'video/mp4');
    origin.file('/media/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
    origin.body(
      '/split.html',
      `<!doctype html><html><head><title>Split tracked</title></head><body>
      <video><source src="/media/video-only.mp4" type='video/mp4; codecs="avc1.64001e"' label="360p"><source src="/media/audio-only.m4a" type='audio/mp4; codecs="mp4a.40.2"'>
        <track kind="subtitles" src="/subs/en.vtt" srclang="en" label="English"></video></body></html>`,
      'text/html',
    );
    origin.body(
      '/tracks.html',
      `<!doctype html><html><head><title>Tracked</title></head><body>
      <video controls><source src="/media/clip.mp4" type="video/mp4" label="240p">
        <track kind="subtitles" src="/subs/en.vtt" srclang="en" label="English">
        <track kind="captions" src="/subs/fr.srt" srclang="fr" label="Français">
      </video></body></html>`,
      'text/html',
    );
  });

  beforeEach(async () => {
    await stack.browser.fresh();
    page = stack.browser.page;
    await page.goto(`${stack.served.base}/advanced`);
    await page.getByLabel('Page or media URL').fill(stack.origin.url('/tracks.html'));
    await page.getByLabel('Page or media URL').press('Enter');
    await page.getByRole('heading', { level: 4, name: 'Subtitles' }).waitFor();
  });

  async function savedJob(): Promise<{ name: string; file: string }> {
    const job = page.locator('#job-list li').first();
    await job.locator('.job-status', { hasText: 'Completed' }).waitFor({ timeout: 30_000 });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      job.getByRole('link', { name: /^Save / }).click(),
    ]);
    return { name: download.suggestedFilename(), file: await download.path() };
  }

  test('each track is listed with its language, name and format, and a vtt track is saved as it is', async () => {
    const rows = page.locator('.subtitle-tracks tbody tr');
    await expect(rows.allInnerTexts()).resolves.toEqual([
      expect.stringMatching(/en[\s\S]*English[\s\S]*WebVTT/),
      expect.stringMatching(/fr[\s\S]*Français[\s\S]*SRT/),
    ]);
    await screenshot(page, 'playground-subtitles');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download the English subtitles' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('Tracked.en.vtt');
    expect(fs.readFileSync(await download.path(), 'utf8')).toBe(EN_VTT);
  });

  test('an srt track asked as vtt is converted by a job and saved as WebVTT', async () => {
    await page.getByLabel('Format of the Français subtitles').selectOption('vtt');
    await page.getByRole('button', { name: 'Download the Français subtitles' }).click();
    const { name, file } = await savedJob();
    expect(name).toBe('Tracked.fr.vtt');
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^WEBVTT[\s\S]*Bonjour/);
  });

  test('checked languages are embedded in the video the worker writes', async () => {
    const embed = page.getByRole('group', { name: 'Embed subtitles' });
    await embed.getByRole('checkbox', { name: 'en' }).check();
    await embed.getByRole('checkbox', { name: 'fr' }).check();
    await embed.getByLabel('Format').selectOption('mkv');
    await embed.getByRole('button', { name: 'Save with subtitles' }).click();
    await page.locator('#job-list li').first().getByText('Tracked with subtitles (en, fr)').waitFor();
    const { name, file } = await savedJob();
    expect(name).toBe('Tracked.mkv');
    const probe = await run('ffprobe', [
      '-v',
      'error',
      '-select_streams',
      's',
      '-show_entries',
      'stream=codec_name:stream_tags=language',
      '-of',
      'csv=p=0',
      file,
    ]);
    expect(probe.stdout.trim().split('\n')).toEqual(['webvtt,eng', 'webvtt,fre']);
  });

  test('embedding with no language checked says so without a request', async () => {
    await page
      .getByRole('group', { name: 'Embed subtitles' })
      .getByRole('button', { name: 'Save with subtitles' })
      .click();
    await page.getByRole('status').filter({ hasText: 'Choose at least one subtitle language' }).waitFor();
    await expect(page.locator('#job-list li').count()).resolves.toBe(0);
  });

  test("a merge can embed the item's subtitles too", async () => {
    await page.getByLabel('Page or media URL').fill(stack.origin.url('/split.html'));
    await page.getByLabel('Page or media URL').press('Enter');
    const merge = page.getByRole('group', { name: 'Merge video and audio' });
    await merge
      .getByRole('group', { name: 'Subtitles to embed in the merge' })
      .getByRole('checkbox', { name: 'en' })
      .check();
    await merge.getByLabel('Format').selectOption('mp4');
    await merge.getByRole('button', { name: 'Merge' }).click();
    const { name, file } = await savedJob();
    expect(name).toBe('Split tracked.mp4');
    const probe = await run('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'stream=codec_name:stream_tags=language',
      '-of',
      'csv=p=0',
      file,
    ]);
    expect(probe.stdout.trim().split('\n')).toEqual(['h264,und', 'aac,und', 'mov_text,eng']);
  });

  test('a source can be converted to an audio format from its row', async () => {
    await page.getByLabel(/^Format of 240p/).selectOption('mp3');
    await page.getByRole('button', { name: /^Download 240p/ }).click();
    const { name, file } = await savedJob();
    expect(name).toBe('Tracked.mp3');
    const probe = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0', file]);
    expect(probe.stdout.trim()).toBe('mp3');
  });
});
