// Recording in the playground, in a real browser: a live HLS stream ffmpeg makes in real time is
// extracted, its source offers Record, the job shows how much it has recorded and a Stop button,
// and Stop ends it with a file to save.
import { afterAll, expect, test } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { startLiveHls, type LiveStream } from '@reelay/testkit';
import { describeBrowser, usePlaygroundStack } from './browser.js';

let live: LiveStream | undefined;

describeBrowser('recording in the playground', () => {
  const stack = usePlaygroundStack('record', (origin) => {
    const stream = (live = startLiveHls());
    // The origin routes exact paths: the playlist and the segment names ffmpeg will write.
    origin.route('/live/index.m3u8', (_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' })
        .end(fs.readFileSync(path.join(stream.dir, 'index.m3u8'))),
    );
    for (let i = 0; i < 600; i++) {
      origin.route(`/live/seg${i}.ts`, (_req, res) => {
        const file = path.join(stream.dir, `seg${i}.ts`);
        if (!fs.existsSync(file)) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'video/mp2t' }).end(fs.readFileSync(file));
      });
    }
  });
  afterAll(() => {
    live?.kill();
    if (live) fs.rmSync(live.dir, { recursive: true, force: true });
  });

  test('a live source offers Record; the job shows seconds recorded and Stop, which ends it with a file to save', async () => {
    await live!.listed(2);
    await stack.browser.fresh();
    const page = stack.browser.page;
    await page.goto(`${stack.served.base}/advanced`);
    await page.getByLabel('Page or media URL').fill(stack.origin.url('/live/index.m3u8'));
    await page.getByRole('button', { name: /^Extract/ }).click();
    const record = page.getByRole('button', { name: /^Record / }).first();
    await record.click();
    const job = page.locator('#job-list li').first();
    await job.locator('.job-status', { hasText: /Recording: [2-9] s/ }).waitFor({ timeout: 20_000 });
    await job.getByRole('button', { name: /^Stop / }).click();
    await job.locator('.job-status', { hasText: /Recorded \d+ s \(stopped\)/ }).waitFor({ timeout: 10_000 });
    await expect(job.getByRole('link', { name: /^Save .*\.mp4$/ }).count()).resolves.toBe(1);
  });
});
