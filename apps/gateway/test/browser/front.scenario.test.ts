// The front page in a real browser: a link in, the file out, in one action. A direct stream reaches
// the browser's downloads with the origin's bytes; a job (the remembered preference "Sound only, MP3")
// follows its event stream and saves its artifact when done; /?u= starts at once; the queue survives a
// reload and reattaches to a running job, which can be cancelled; a feed shows its entries to pick,
// a page at a time up to the server's MAX_COLLECTION_ENTRIES; a page with several items shows them to
// pick; a live stream is recorded and stopped; a failure says why; a language switch says everything
// the page's scripts wrote again. Every state passes the audit.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeEach, expect, test } from '@jest/globals';
import type { Download, Page } from 'playwright-core';
import { startLiveHls, type LiveStream } from '@reelay/testkit';
import { WEB_DIR } from '../../src/routes/web.js';
import { auditPage, untranslated } from './audit.js';
import { describeBrowser, usePlaygroundStack } from './browser.js';

/** The stack's MAX_COLLECTION_ENTRIES: low, so a listing reaches it in two pages. */
const MAX_ENTRIES = 150;

let page: Page;
let live: LiveStream | undefined;

const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');
const bytesOf = async (download: Download) => fs.readFileSync((await download.path())!);

describeBrowser('the front page', () => {
  const stack = usePlaygroundStack(
    'front',
    (origin, media) => {
      origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
      origin.body(
        '/watch.html',
        `<!doctype html><html><head><title>Test card</title></head><body>
      <video><source src="/media/clip.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"' label="240p"></video></body></html>`,
        'text/html',
      );
      // The same clip under its own URL, so its job is never another test's (identical requests share one).
      origin.file('/media/quiet.mp4', media.muxedMp4, 'video/mp4');
      origin.body(
        '/quiet.html',
        `<!doctype html><html><head><title>Quiet card</title></head><body>
      <video><source src="/media/quiet.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"' label="240p"></video></body></html>`,
        'text/html',
      );
      // A page with three items: a video and two sounds, each its own bytes.
      origin.file('/media/tone.mp3', media.mp3, 'audio/mpeg');
      origin.body(
        '/gallery.html',
        `<!doctype html><html><head><title>Three things</title></head><body>
      <video><source src="/media/clip.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"' label="240p"></video>
      <audio src="/media/tone.mp3"></audio>
      <audio><source src="/media/audio-only.m4a" type='audio/mp4; codecs="mp4a.40.2"'></audio></body></html>`,
        'text/html',
      );
      // The same with its second item gone from the origin by the time it is downloaded.
      origin.body(
        '/gallery-gone.html',
        `<!doctype html><html><head><title>Two left</title></head><body>
      <video><source src="/media/clip.mp4" type='video/mp4; codecs="avc1.64001e, mp4a.40.2"' label="240p"></video>
      <audio><source src="/media/gone.m4a" type='audio/mp4; codecs="mp4a.40.2"'></audio>
      <audio src="/media/tone.mp3"></audio></body></html>`,
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
      // A podcast feed of three episodes (the same tone under three names).
      for (const n of [1, 2, 3]) origin.file(`/audio/${n}.m4a`, media.audioOnlyM4a, 'audio/mp4');
      const items = [1, 2, 3].map(
        (n) =>
          `<item><title>Episode ${n}</title><guid isPermaLink="false">front-ep-${n}</guid><enclosure url="${origin.url(`/audio/${n}.m4a`)}" length="1000" type="audio/mp4"/></item>`,
      );
      origin.body(
        '/feed.xml',
        `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Three Tones</title><link>${origin.url('/')}</link>${items.join('')}</channel></rss>`,
        'application/rss+xml',
      );
      // Feeds longer than a page (100 entries): 120 entries, and 180, past the stack's limit of 150.
      for (let n = 1; n <= 180; n++) origin.file(`/long/${n}.m4a`, media.audioOnlyM4a, 'audio/mp4');
      const longFeed = (title: string, count: number) =>
        `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>${title}</title><link>${origin.url('/')}</link>${Array.from({ length: count }, (_, i) => `<item><title>Entry ${i + 1}</title><guid isPermaLink="false">front-long-${i + 1}</guid><enclosure url="${origin.url(`/long/${i + 1}.m4a`)}" length="1000" type="audio/mp4"/></item>`).join('')}</channel></rss>`;
      origin.body('/long.xml', longFeed('Long feed', 120), 'application/rss+xml');
      origin.body('/huge.xml', longFeed('Huge feed', 180), 'application/rss+xml');
      // A live HLS stream that ffmpeg writes in real time.
      const stream = (live = startLiveHls());
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
    },
    { MAX_COLLECTION_ENTRIES: String(MAX_ENTRIES) },
  );

  afterAll(() => {
    live?.kill();
    if (live) fs.rmSync(live.dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    await stack.browser.fresh();
    page = stack.browser.page;
  });

  const field = () => page.getByLabel('Link', { exact: true });
  const queueRow = (title: string) => page.locator('#queue-list li', { hasText: title });
  /** The SHA-256 of each of the next `count` files the browser saves, sorted (their order is the browser's). */
  const nextSavedHashes = (count: number) =>
    new Promise<Download[]>((resolve) => {
      const saved: Download[] = [];
      const onDownload = (download: Download) => {
        if (saved.push(download) < count) return;
        page.off('download', onDownload);
        resolve(saved);
      };
      page.on('download', onDownload);
    }).then(async (saved) => (await Promise.all(saved.map(async (d) => sha(await bytesOf(d))))).sort());

  async function submit(url: string): Promise<void> {
    await field().fill(url);
    await page.getByRole('button', { name: 'Download', exact: true }).click();
  }

  test("a direct stream: one click, and the browser saves the origin's bytes", async () => {
    await page.goto(`${stack.served.base}/`);
    const problems = await auditPage(page, 'front-idle');
    const download = page.waitForEvent('download');
    await submit(stack.origin.url('/watch.html'));
    const saved = await download;
    expect(saved.suggestedFilename()).toBe('Test card.mp4');
    expect(sha(await bytesOf(saved))).toBe(sha(fs.readFileSync(stack.media.muxedMp4)));
    // The browser fetched it by the link, never the page: the queue says where it went.
    expect(saved.url()).toContain('/api/v1/download/stream?');
    await queueRow('Test card').locator('.job-status', { hasText: 'Test card.mp4' }).waitFor();
    problems.push(...(await auditPage(page, 'front-saved')));
    expect(problems).toEqual([]);
  });

  test('a page with several items lists them to pick; the picked ones are saved, each with its own bytes', async () => {
    await page.goto(`${stack.served.base}/`);
    await submit(stack.origin.url('/gallery.html'));
    const choice = page.getByRole('region', { name: 'Three things' });
    await choice.getByLabel(/^Item 3 /).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: '“Three things” has 3 items: choose what to download.' })
      .waitFor();
    await expect(
      page.evaluate(
        "[...document.querySelectorAll('#choice input[type=checkbox]')].map((box) => [box.labels[0].textContent, box.checked])",
      ),
    ).resolves.toEqual([
      ['Item 1 · Video', true],
      ['Item 2 · Sound', true],
      ['Item 3 · Sound', true],
    ]);
    // Nothing is downloaded before the choice.
    await expect(page.locator('#queue-list li').count()).resolves.toBe(0);
    const problems = await auditPage(page, 'front-items');

    await choice.getByLabel(/^Item 2 /).uncheck();
    const saved = nextSavedHashes(2);
    await choice.getByRole('button', { name: 'Download 2 selected' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: '2 items of “Three things” are on their way: see Your downloads.' })
      .waitFor();
    await expect(choice.isHidden()).resolves.toBe(true);
    for (const title of ['Three things · 1/3', 'Three things · 3/3'])
      await queueRow(title).locator('.badge', { hasText: 'Saved' }).waitFor();
    await expect(page.locator('#queue-list li').count()).resolves.toBe(2);
    await expect(saved).resolves.toEqual(
      [sha(fs.readFileSync(stack.media.muxedMp4)), sha(fs.readFileSync(stack.media.audioOnlyM4a))].sort(),
    );
    problems.push(...(await auditPage(page, 'front-items-saved')));
    expect(problems).toEqual([]);
  });

  test('an item of a page that cannot start is a failed row with its reason, and the items after it still start', async () => {
    await page.goto(`${stack.served.base}/`);
    await submit(stack.origin.url('/gallery-gone.html'));
    const choice = page.getByRole('region', { name: 'Two left' });
    await choice.getByLabel(/^Item 3 /).waitFor();
    const saved = nextSavedHashes(2);
    await choice.getByRole('button', { name: 'Download 3 selected' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: '2 of 3 items of “Two left” are on their way; 1 could not start: see Your downloads.' })
      .waitFor();
    await expect(choice.isHidden()).resolves.toBe(true);
    const gone = queueRow('Two left · 2/3');
    await gone.locator('.badge', { hasText: 'Failed' }).waitFor();
    // The server's reason, after the page's own lead-in (not the status line's "The server says").
    await expect(gone.locator('.job-status').innerText()).resolves.toMatch(/^Failed: (?!The server says)\S/);
    for (const title of ['Two left · 1/3', 'Two left · 3/3'])
      await queueRow(title).locator('.badge', { hasText: 'Saved' }).waitFor();
    await expect(saved).resolves.toEqual(
      [sha(fs.readFileSync(stack.media.muxedMp4)), sha(fs.readFileSync(stack.media.mp3))].sort(),
    );
    expect(await auditPage(page, 'front-items-one-failed')).toEqual([]);
  });

  test('/?u= downloads at once and leaves the address clean, so a reload does not download again', async () => {
    const download = page.waitForEvent('download');
    await page.goto(`${stack.served.base}/?u=${encodeURIComponent(stack.origin.url('/watch.html'))}`);
    expect(sha(await bytesOf(await download))).toBe(sha(fs.readFileSync(stack.media.muxedMp4)));
    expect(new URL(page.url()).search).toBe('');
    await expect(field().inputValue()).resolves.toBe(stack.origin.url('/watch.html'));
  });

  test('remembered preferences make a job; it follows its events, saves the file when ready, and survives a reload', async () => {
    await page.goto(`${stack.served.base}/`);
    await page.getByText('Preferences', { exact: true }).click();
    await page.getByLabel('Sound only').check();
    await page.getByLabel('File type').selectOption('mp3');
    await page.reload();
    await expect(page.getByLabel('Sound only').isChecked()).resolves.toBe(true);
    await expect(page.getByLabel('File type').inputValue()).resolves.toBe('mp3');

    const download = page.waitForEvent('download', { timeout: 30_000 });
    await submit(stack.origin.url('/watch.html'));
    const saved = await download;
    expect(saved.suggestedFilename()).toBe('Test card.mp3');
    const row = queueRow('Test card');
    await row.locator('.badge', { hasText: 'Ready' }).waitFor();
    const id = (await row.getAttribute('data-job-id'))!;
    // The same bytes as the job's artifact, and an MP3 (an ID3 tag or an MPEG frame first).
    const artifact = Buffer.from(await (await fetch(`${stack.served.base}/api/v1/jobs/${id}/artifact`)).arrayBuffer());
    const bytes = await bytesOf(saved);
    expect(sha(bytes)).toBe(sha(artifact));
    expect(bytes.subarray(0, 3).toString('latin1') === 'ID3' || bytes[0] === 0xff).toBe(true);
    await expect(row.getByRole('link', { name: 'Save Test card.mp3' }).getAttribute('href')).resolves.toBe(
      `/api/v1/jobs/${id}/artifact`,
    );

    // After a reload the finished job is still listed, with its file offered, and not saved again.
    let again = false;
    page.on('download', () => (again = true));
    await page.reload();
    await queueRow('Test card').getByRole('link', { name: 'Save Test card.mp3' }).waitFor();
    expect(again).toBe(false);
  });

  test('a job whose event stream goes silent is asked after within a minute, and its file still comes', async () => {
    // Its event stream never answers: a connection a network dropped without a word. The page's clock
    // is the test's, so the minute of silence passes at once.
    await page.route('**/api/v1/jobs/*/events', () => {});
    await page.clock.install();
    await page.goto(`${stack.served.base}/`);
    await page.getByText('Preferences', { exact: true }).click();
    await page.getByLabel('Sound only').check();
    await page.getByLabel('File type').selectOption('mp3');
    const download = page.waitForEvent('download', { timeout: 30_000 });
    await submit(stack.origin.url('/quiet.html'));
    const row = queueRow('Quiet card');
    await row.waitFor();
    const id = (await row.getAttribute('data-job-id'))!;
    // The job ends on the server; the page, hearing nothing, still shows it unfinished.
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const job = (await (await fetch(`${stack.served.base}/api/v1/jobs/${id}`)).json()) as {
        data: { status: string };
      };
      if (job.data.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await expect(row.locator('.badge', { hasText: 'Ready' }).count()).resolves.toBe(0);
    await page.clock.fastForward(61_000);
    const saved = await download;
    expect(saved.suggestedFilename()).toBe('Quiet card.mp3');
    await row.locator('.badge', { hasText: 'Ready' }).waitFor();
  }, 60_000);

  test('a running job is followed again after a reload, and Cancel ends it', async () => {
    await page.goto(`${stack.served.base}/`);
    await submit(stack.origin.url('/held.html'));
    const row = queueRow('Held tracks');
    await row.locator('.badge', { hasText: 'Working' }).waitFor({ timeout: 15_000 });
    await expect(row.locator('progress').count()).resolves.toBe(1);
    const problems = await auditPage(page, 'front-running');

    await page.reload();
    await row.locator('.badge', { hasText: 'Working' }).waitFor();
    await row.getByRole('button', { name: 'Cancel “Held tracks”' }).click();
    await row.locator('.badge', { hasText: 'Cancelled' }).waitFor({ timeout: 15_000 });
    await expect(row.locator('.job-status').innerText()).resolves.toBe('Cancelled. Nothing was saved.');
    const id = await row.getAttribute('data-job-id');
    const job = (await (await fetch(`${stack.served.base}/api/v1/jobs/${id}`)).json()) as { data: { status: string } };
    expect(job.data.status).toBe('cancelled');
    problems.push(...(await auditPage(page, 'front-cancelled')));
    expect(problems).toEqual([]);
  });

  test('a feed shows its entries; the picked ones become one collection job whose ZIP is saved', async () => {
    await page.goto(`${stack.served.base}/`);
    await submit(stack.origin.url('/feed.xml'));
    const choice = page.getByRole('region', { name: 'Three Tones' });
    await choice.getByLabel('Episode 2').waitFor();
    const problems = await auditPage(page, 'front-collection');
    await choice.getByLabel('Episode 2').uncheck();
    const download = page.waitForEvent('download', { timeout: 60_000 });
    await choice.getByRole('button', { name: 'Download 2 selected' }).click();
    const saved = await download;
    expect(saved.suggestedFilename()).toMatch(/\.zip$/);
    const zip = await bytesOf(saved);
    expect(zip.subarray(0, 2).toString('latin1')).toBe('PK');
    const row = queueRow('Three Tones');
    await expect(row.locator('.job-status').innerText()).resolves.toContain('2 of 2 done');
    const id = await row.getAttribute('data-job-id');
    const children = (await (await fetch(`${stack.served.base}/api/v1/jobs/${id}/children`)).json()) as {
      data: { children: Array<{ index: number; status: string }> };
    };
    expect(children.data.children.map((c) => [c.index, c.status])).toEqual([
      [1, 'completed'],
      [3, 'completed'],
    ]);
    expect(problems).toEqual([]);
  }, 90_000);

  test("a long feed lists a page at a time: Show more keeps what was ticked, and stops at the server's limit", async () => {
    await page.goto(`${stack.served.base}/`);
    await submit(stack.origin.url('/huge.xml'));
    const choice = page.getByRole('region', { name: 'Huge feed' });
    const boxes = choice.getByRole('checkbox');
    await choice.getByLabel('Entry 100', { exact: true }).waitFor();
    await expect(boxes.count()).resolves.toBe(100);
    await choice
      .getByText('The first 100 of 180 are listed: “Show more” lists the next ones, “Download all” takes every one.')
      .waitFor();
    await choice.getByLabel('Entry 2', { exact: true }).uncheck();
    const problems = await auditPage(page, 'front-collection-paged');

    await choice.getByRole('button', { name: 'Show more' }).click();
    await choice.getByLabel('Entry 150', { exact: true }).waitFor();
    // The second page is the last the server lists (MAX_COLLECTION_ENTRIES): no more to show, none to take past it.
    await expect(boxes.count()).resolves.toBe(MAX_ENTRIES);
    await expect(choice.getByLabel('Entry 2', { exact: true }).isChecked()).resolves.toBe(false);
    await expect(choice.getByLabel('Entry 101', { exact: true }).isChecked()).resolves.toBe(true);
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('entry-101');
    await expect(choice.getByRole('button', { name: 'Show more' }).count()).resolves.toBe(0);
    await expect(choice.getByRole('button', { name: /^Download all/ }).count()).resolves.toBe(0);
    await choice
      .getByText(
        `This server lists at most ${MAX_ENTRIES} entries of a collection: these are the first ${MAX_ENTRIES} of 180.`,
      )
      .waitFor();
    await choice.getByRole('button', { name: `Download ${MAX_ENTRIES - 1} selected` }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: `${MAX_ENTRIES} of 180 entries are listed.` })
      .waitFor();
    problems.push(...(await auditPage(page, 'front-collection-limit')));

    // One from each page: the download takes exactly those.
    await choice.getByRole('button', { name: 'Select all' }).click();
    await choice.getByRole('button', { name: `Download ${MAX_ENTRIES} selected` }).waitFor();
    await choice.getByRole('button', { name: 'Select none' }).click();
    await choice.getByLabel('Entry 2', { exact: true }).check();
    await choice.getByLabel('Entry 140', { exact: true }).check();
    const download = page.waitForEvent('download', { timeout: 60_000 });
    await choice.getByRole('button', { name: 'Download 2 selected' }).click();
    expect((await bytesOf(await download)).subarray(0, 2).toString('latin1')).toBe('PK');
    const id = await queueRow('Huge feed').getAttribute('data-job-id');
    const children = (await (await fetch(`${stack.served.base}/api/v1/jobs/${id}/children`)).json()) as {
      data: { children: Array<{ index: number; status: string }> };
    };
    expect(children.data.children.map((c) => [c.index, c.status])).toEqual([
      [2, 'completed'],
      [140, 'completed'],
    ]);
    expect(problems).toEqual([]);
  }, 90_000);

  test('Download all lists the rest first: all entries when the server takes them all, nothing started past its limit', async () => {
    await page.goto(`${stack.served.base}/`);
    await submit(stack.origin.url('/long.xml'));
    let choice = page.getByRole('region', { name: 'Long feed' });
    await choice.getByLabel('Entry 100', { exact: true }).waitFor();
    await choice.getByLabel('Entry 7', { exact: true }).uncheck();
    await choice.getByRole('button', { name: 'Download all (120)' }).click();
    const row = queueRow('Long feed');
    await row.waitFor();
    // All 120, the one unticked on the first page too: "all" is every entry.
    const id = await row.getAttribute('data-job-id');
    const job = (await (await fetch(`${stack.served.base}/api/v1/jobs/${id}`)).json()) as {
      data: { entries: { total: number } };
    };
    expect(job.data.entries.total).toBe(120);
    await row.getByRole('button', { name: 'Cancel “Long feed”' }).click();
    await row.locator('.badge', { hasText: 'Cancelled' }).waitFor({ timeout: 15_000 });

    // Past the limit: the listing stops there, the page says so, and nothing joins the queue.
    await submit(stack.origin.url('/huge.xml'));
    choice = page.getByRole('region', { name: 'Huge feed' });
    await choice.getByRole('button', { name: 'Download all (180)' }).click();
    await page
      .getByRole('status')
      .and(page.locator('[data-kind="error"]'))
      .filter({ hasText: `This server downloads at most ${MAX_ENTRIES} entries of a collection at once` })
      .waitFor();
    await expect(choice.getByRole('checkbox').count()).resolves.toBe(MAX_ENTRIES);
    await expect(page.locator('#queue-list li').count()).resolves.toBe(1);
    await expect(page.evaluate('document.activeElement.dataset.action')).resolves.toBe('download-selected');
    await choice.getByRole('button', { name: `Download ${MAX_ENTRIES} selected` }).waitFor();
    expect(await auditPage(page, 'front-collection-too-many')).toEqual([]);
  }, 60_000);

  test('a live stream offers Record; Stop in the queue ends it with the recording saved', async () => {
    await live!.listed(2);
    await page.goto(`${stack.served.base}/`);
    await submit(stack.origin.url('/live/index.m3u8'));
    await page.getByRole('button', { name: 'Record' }).waitFor();
    const problems = await auditPage(page, 'front-live');
    await page.getByRole('button', { name: 'Record' }).click();
    const row = page.locator('#queue-list li').first();
    await row.locator('.job-status', { hasText: /Recording: [2-9] seconds so far/ }).waitFor({ timeout: 20_000 });
    problems.push(...(await auditPage(page, 'front-recording')));
    const download = page.waitForEvent('download', { timeout: 20_000 });
    await row.getByRole('button', { name: /^Stop recording/ }).click();
    const saved = await download;
    expect(saved.suggestedFilename()).toMatch(/\.(mp4|mkv|ts)$/);
    expect((await bytesOf(saved)).length).toBeGreaterThan(1000);
    await row.locator('.job-status', { hasText: /^Recorded \d+ seconds/ }).waitFor();
    expect(problems).toEqual([]);
  }, 90_000);

  test('a failure says why in plain words, and nothing joins the queue', async () => {
    await page.goto(`${stack.served.base}/`);
    await submit(stack.origin.url('/no-such-page.html'));
    const status = page.getByRole('status').and(page.locator('[data-kind="error"]'));
    await status.waitFor();
    await expect(status.innerText()).resolves.not.toMatch(/started|job/i);
    await expect(page.locator('#queue-list li').count()).resolves.toBe(0);
    await submit('not a link');
    await expect(status.innerText()).resolves.toBe('Enter a full link, starting with http:// or https://.');
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('link');
    expect(await auditPage(page, 'front-error')).toEqual([]);
  });

  test('a stored download whose file has passed its time says it expired, and offers no dead link', async () => {
    await page.goto(`${stack.served.base}/`);
    // Only once the page has started its queue: starting, it writes the queue it read over the stored one.
    await page.locator('form[data-ready="true"]').waitFor({ state: 'attached' });
    const old = {
      id: 'gone-job',
      title: 'Old talk',
      kind: 'job',
      status: 'completed',
      created: 1,
      artifact: {
        url: '/api/v1/jobs/gone-job/artifact',
        filename: 'Old talk.mp4',
        size: 10,
        expires_at: '2020-01-01T00:00:00Z',
      },
    };
    await page.evaluate(`localStorage.setItem('reelay-queue', ${JSON.stringify(JSON.stringify([old]))})`);
    await page.reload();
    const row = queueRow('Old talk');
    await row.locator('.badge', { hasText: 'Expired' }).waitFor();
    await expect(row.getByRole('link').count()).resolves.toBe(0);
    await row.getByRole('button', { name: 'Remove “Old talk” from the list' }).click();
    await expect(page.locator('#queue').isHidden()).resolves.toBe(true);
    await expect(page.evaluate("localStorage.getItem('reelay-queue')")).resolves.toBe('[]');
  });

  test('a German browser gets the page in German', async () => {
    const context = await page.context().browser()!.newContext({ locale: 'de-DE' });
    try {
      const german = await context.newPage();
      await german.goto(`${stack.served.base}/`);
      await german.getByRole('heading', { level: 1, name: 'Video oder Ton speichern' }).waitFor();
      await expect(german.locator('html').getAttribute('lang')).resolves.toBe('de');
      await expect(german.getByRole('button', { name: 'Herunterladen', exact: true }).count()).resolves.toBe(1);
    } finally {
      await context.close();
    }
  });

  test('a language switch says again what the page wrote: the status line, the choice (keeping what was ticked) and the queue', async () => {
    const german = (data: string[]) => untranslated(page, catalogs('de'), data);
    // As the header's switch does (i18n.scenario drives the select itself); resolved once the page has redrawn.
    const switchTo = (lng: string) =>
      page.evaluate(`import('/assets/i18n.js').then((m) => m.setLanguage(${JSON.stringify(lng)}))`);
    const status = page.getByRole('status');
    await page.goto(`${stack.served.base}/`);
    await page.locator('form[data-ready="true"]').waitFor({ state: 'attached' });

    // A server's refusal in the status line: its lead-in is the page's, its message the server's.
    await submit(stack.origin.url('/no-such-page.html'));
    await status.and(page.locator('[data-kind="error"]')).waitFor();
    const refusal = await status.innerText();
    await switchTo('de');
    await expect(status.innerText()).resolves.toBe(`Der Server meldet: ${refusal}`);
    await switchTo('en');
    await expect(status.innerText()).resolves.toBe(refusal);

    // A collection with one entry unticked and the keyboard on another: switched while on show.
    await submit(stack.origin.url('/feed.xml'));
    const choice = page.getByRole('region', { name: 'Three Tones' });
    await choice.getByLabel('Episode 2').uncheck();
    await choice.getByLabel('Episode 3').focus();
    await switchTo('de');
    await expect(choice.getByRole('button', { name: '2 ausgewählte herunterladen' }).count()).resolves.toBe(1);
    await expect(choice.getByText('Feed · 3 Einträge', { exact: true }).count()).resolves.toBe(1);
    await expect(choice.getByLabel('Episode 2').isChecked()).resolves.toBe(false);
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('entry-3');
    await expect(status.innerText()).resolves.toBe(
      '„Three Tones“ ist eine Sammlung: Wählen Sie, was heruntergeladen werden soll.',
    );
    expect(await german(['Three Tones', 'Episode 1', 'Episode 2', 'Episode 3'])).toEqual([]);

    // Downloaded in German; its row and the status line, back in English, are English throughout.
    await choice.getByRole('button', { name: '2 ausgewählte herunterladen' }).click();
    const row = queueRow('Three Tones');
    await row.locator('.badge', { hasText: 'Fertig' }).waitFor({ timeout: 60_000 });
    await status.filter({ hasText: '„Three Tones“ ist fertig.' }).waitFor();
    await expect(row.locator('.job-status').innerText()).resolves.toMatch(/^2 von 2 fertig · Fertig \(/);
    await switchTo('en');
    await expect(row.locator('.job-status').innerText()).resolves.toMatch(/^2 of 2 done · Ready \(/);
    await expect(status.innerText()).resolves.toBe('“Three Tones” is ready.');
    await expect(page.locator('main').innerText()).resolves.not.toMatch(
      /Sammlung|fertig|herunterladen|Einträge|Einstellungen/i,
    );

    // A page's items.
    await submit(stack.origin.url('/gallery.html'));
    const items = page.getByRole('region', { name: 'Three things' });
    await items.getByLabel(/^Item 3 /).waitFor();
    await switchTo('de');
    await expect(items.getByLabel('Element 3 · Ton', { exact: true }).count()).resolves.toBe(1);
    await expect(items.getByText('3 Elemente', { exact: true }).count()).resolves.toBe(1);
    expect(await german(['Three Tones', 'Three things'])).toEqual([]);
  }, 90_000);
});

function catalogs(lng: string): Array<Record<string, string>> {
  const dir = path.join(WEB_DIR, 'locales', lng);
  return fs
    .readdirSync(dir)
    .map((file) => JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Record<string, string>);
}
