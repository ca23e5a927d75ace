// Languages in a real browser: German picked from the browser's languages; every page and state in
// German shows only words from the German catalogs (and passes the audit: axe-core, 360 px, both
// sizes and themes, screenshots); the header's switch changes the words at once and is remembered;
// numbers and dates are written the language's way.
import { beforeEach, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { WEB_DIR } from '../../src/routes/web.js';
import { auditPage, untranslated } from './audit.js';
import { describeBrowser, usePlaygroundStack } from './browser.js';

const EN_VTT = 'WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nHello\n';

function catalogs(lng: string): Array<Record<string, string>> {
  const dir = path.join(WEB_DIR, 'locales', lng);
  return fs
    .readdirSync(dir)
    .map((file) => JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Record<string, string>);
}

let page: Page;

describeBrowser('the web app in two languages', () => {
  const stack = usePlaygroundStack('i18n', (origin, media) => {
    origin.file('/media/video-only.mp4', media.videoOnlyMp4, 'video/mp4');
    origin.file('/media/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
    origin.file('/media/poster.png', media.png, 'image/png');
    origin.body('/subs/en.vtt', EN_VTT, 'text/vtt');
    // A video-only and an audio-only source with a subtitle track: clip, audio only, merge and embed forms.
    origin.body(
      '/split.html',
      `<!doctype html><html><head><title>Lavfi test card</title></head><body>
      <video poster="/media/poster.png"><source src="/media/video-only.mp4" type='video/mp4; codecs="avc1.64001e"' label="360p"><source src="/media/audio-only.m4a" type='audio/mp4; codecs="mp4a.40.2"'>
        <track kind="subtitles" src="/subs/en.vtt" srclang="en" label="English"></video></body></html>`,
      'text/html',
    );
    // A podcast feed of two episodes: the front page's collection choice.
    origin.body(
      '/feed.xml',
      `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Zwei Töne</title><link>${origin.url('/')}</link>${[
        1, 2,
      ]
        .map(
          (n) =>
            `<item><title>Folge ${n}</title><guid isPermaLink="false">i18n-ep-${n}</guid><enclosure url="${origin.url('/media/audio-only.m4a')}" length="1000" type="audio/mp4"/></item>`,
        )
        .join('')}</channel></rss>`,
      'application/rss+xml',
    );
    // A feed longer than a page (100 entries), and a page with two items: the front page's other choices.
    origin.body(
      '/long.xml',
      `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Viele Töne</title><link>${origin.url('/')}</link>${Array.from(
        { length: 120 },
        (_, i) =>
          `<item><title>Folge ${i + 1}</title><guid isPermaLink="false">i18n-long-${i + 1}</guid><enclosure url="${origin.url(`/media/${i + 1}.m4a`)}" length="1000" type="audio/mp4"/></item>`,
      ).join('')}</channel></rss>`,
      'application/rss+xml',
    );
    origin.body(
      '/two.html',
      `<!doctype html><html><head><title>Zwei Spuren</title></head><body>
      <video poster="/media/poster.png"><source src="/media/video-only.mp4" type='video/mp4; codecs="avc1.64001e"' label="360p"></video>
      <audio><source src="/media/audio-only.m4a" type='audio/mp4; codecs="mp4a.40.2"'></audio></body></html>`,
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
    await stack.browser.fresh({ locale: 'de-DE' });
    page = stack.browser.page;
  });

  /** What is wrong with the page now: English-only words, and the audit's findings (with screenshots). */
  async function check(name: string, data: string[] = [], options: { fullPage?: boolean } = {}): Promise<string[]> {
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('de');
    const words = (await untranslated(page, catalogs('de'), data)).map(
      (text) => `${name}: not from the German catalogs: “${text}”`,
    );
    return [...words, ...(await auditPage(page, `de-${name}`, options))];
  }

  async function extract(url: string, waitFor: string): Promise<void> {
    const field = page.getByLabel('Adresse der Seite oder Mediendatei');
    await field.fill(url);
    await field.press('Enter');
    await page.getByRole('heading', { name: waitFor }).first().waitFor();
  }

  /** The front page's one action: the link, then its Download button. */
  async function download(url: string): Promise<void> {
    await page.getByLabel('Link', { exact: true }).fill(url);
    await page.getByRole('button', { name: 'Herunterladen', exact: true }).click();
  }

  test('a German browser gets every page and state in German, and each passes the audit', async () => {
    const problems: string[] = [];
    // The front page: idle (preferences open), a refused link and a server's failure, a job, a collection.
    await page.goto(`${stack.served.base}/`);
    await page.getByRole('heading', { level: 1, name: 'Video oder Ton speichern' }).waitFor();
    await page.locator('#front-form[data-ready]').waitFor();
    await page.getByText('Einstellungen', { exact: true }).click();
    await page.getByLabel('Dateityp').waitFor();
    problems.push(...(await check('front-idle')));

    await download('kein Link');
    await page.getByRole('status').filter({ hasText: 'Geben Sie einen vollständigen Link ein' }).waitFor();
    await download(stack.origin.url('/no-such-page.html'));
    await page.getByRole('status').filter({ hasText: 'Der Server meldet:' }).waitFor();
    problems.push(...(await check('front-failure')));

    const saved = page.waitForEvent('download', { timeout: 60_000 });
    await download(stack.origin.url('/hls/index.m3u8'));
    await saved;
    const jobRow = page.locator('#queue-list li').first();
    await jobRow.locator('.badge', { hasText: /^(Fertig|Gespeichert)$/ }).waitFor({ timeout: 30_000 });
    problems.push(...(await check('front-job', ['index'])));

    await download(stack.origin.url('/feed.xml'));
    await page.getByRole('region', { name: 'Zwei Töne' }).getByLabel('Folge 2').waitFor();
    problems.push(...(await check('front-collection', ['Zwei Töne', 'Folge 1', 'Folge 2'])));

    await download(stack.origin.url('/long.xml'));
    const long = page.getByRole('region', { name: 'Viele Töne' });
    await long.getByRole('button', { name: 'Mehr anzeigen' }).waitFor();
    problems.push(...(await check('front-collection-paged', ['Viele Töne', 'Folge'])));
    await long.getByRole('button', { name: 'Mehr anzeigen' }).click();
    await page.getByRole('status').filter({ hasText: '120 von 120 Einträgen sind aufgeführt.' }).waitFor();

    await download(stack.origin.url('/two.html'));
    await page.getByRole('region', { name: 'Zwei Spuren' }).getByLabel('Element 2 · Ton', { exact: true }).waitFor();
    problems.push(...(await check('front-items', ['Zwei Spuren'])));

    // The queue with a row in each end state (as a reload finds them), beside the finished job.
    const stored = [
      {
        id: 'i18n-old',
        title: 'Alter Vortrag',
        kind: 'job',
        status: 'completed',
        created: 1,
        artifact: {
          url: '/api/v1/jobs/i18n-old/artifact',
          filename: 'Alter Vortrag.mp4',
          size: 10,
          expires_at: '2020-01-01T00:00:00Z',
        },
      },
      {
        id: 'i18n-failed',
        title: 'Kaputter Vortrag',
        kind: 'job',
        status: 'failed',
        created: 2,
        error: 'The origin answered 404.',
      },
      { id: 'i18n-cancelled', title: 'Abgebrochener Vortrag', kind: 'job', status: 'cancelled', created: 3 },
      { id: 'i18n-gone', title: 'Vergessener Vortrag', kind: 'job', status: 'processing', created: 4 },
    ];
    await page.evaluate(
      `localStorage.setItem('reelay-queue', JSON.stringify([...JSON.parse(localStorage.getItem('reelay-queue')), ...${JSON.stringify(stored)}]))`,
    );
    await page.reload();
    for (const badge of ['Abgelaufen', 'Abgebrochen'])
      await page.locator('#queue-list .badge', { hasText: badge }).waitFor();
    // A running job the server no longer knows turns into a failure that says so.
    await page
      .locator('#queue-list li', { hasText: 'Vergessener Vortrag' })
      .getByText('Der Server kennt diesen Download nicht mehr', { exact: false })
      .waitFor();
    problems.push(
      ...(await check('front-queue', ['index', ...stored.map((entry) => entry.title), 'The origin answered 404.'])),
    );

    // More options (the playground).
    await page.goto(`${stack.served.base}/advanced`);
    await page.getByRole('heading', { level: 1, name: 'Weitere Optionen' }).waitFor();
    problems.push(...(await check('advanced-idle')));

    await extract(stack.origin.url('/split.html'), 'Untertitel');
    // A wrong clip range is told in German beside the fields.
    await page.getByLabel('Start').fill('abc');
    await page.getByRole('button', { name: 'Ton speichern' }).click();
    await page.getByRole('alert').filter({ hasText: 'Start: Sekunden (90)' }).waitFor();
    problems.push(...(await check('advanced-extracted', ['Lavfi test card', 'original'])));

    await page.goto(`${stack.served.base}/advanced`);
    await extract(stack.origin.url('/hls/index.m3u8'), 'Medium');
    await page
      .getByRole('button', { name: / herunterladen$/ })
      .first()
      .click();
    await page.locator('#job-list li .job-status', { hasText: 'Fertig.' }).waitFor({ timeout: 30_000 });
    // The page's status line no longer says the job started once it has finished.
    await page.getByRole('status').filter({ hasText: 'fertig, die Datei liegt unten bereit.' }).waitFor();
    problems.push(...(await check('advanced-job', ['index'])));

    const lost = await page.goto(`${stack.served.base}/no/such/page`);
    expect(lost?.status()).toBe(404);
    await page.getByRole('heading', { level: 1, name: 'Seite nicht gefunden' }).waitFor();
    problems.push(...(await check('not-found')));

    await page.goto(`${stack.served.base}/settings/api-keys`);
    await page.getByRole('form', { name: 'Anmelden' }).waitFor();
    problems.push(...(await check('settings-signed-out')));

    const email = `i18n-${randomBytes(6).toString('hex')}@example.com`;
    expect(
      (
        await page.request.post(`${stack.served.base}/account/signup`, {
          data: { email, password: 'correct horse battery' },
        })
      ).status(),
    ).toBe(201);
    for (const name of ['production server with a rather long name', 'ci-bot']) {
      expect((await page.request.post(`${stack.served.base}/account/keys`, { data: { name } })).status()).toBe(201);
    }
    await page.reload();
    await page.getByRole('heading', { level: 2, name: 'Ihre Schlüssel' }).waitFor();
    await page.getByRole('button', { name: 'Nutzung: ci-bot' }).click();
    // (No requests yet: the panel says so instead of drawing empty bars.)
    await page.locator('#usage-panel').getByText('Keine Anfragen in diesen 30 Tagen.').waitFor();
    problems.push(...(await check('settings-keys', [email])));

    await page.getByRole('button', { name: 'Schlüssel ci-bot löschen' }).click();
    await page.getByRole('dialog', { name: 'Diesen Schlüssel löschen?' }).waitFor();
    problems.push(...(await check('settings-delete-dialog', [email, 'ci-bot'])));
    await page.getByRole('button', { name: 'Abbrechen' }).click();

    // A subscription to the feed with all its entries: its row, its items (downloaded by the worker).
    const subscribed = await page.request.post(`${stack.served.base}/api/v1/subscriptions`, {
      data: { url: stack.origin.url('/feed.xml'), since: 'all', every: 300, preset: { audio_only: true } },
    });
    expect(subscribed.status()).toBe(201);
    const subscription = ((await subscribed.json()) as { data: { id: string } }).data.id;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const items = (await (
        await page.request.get(`${stack.served.base}/api/v1/subscriptions/${subscription}/items`)
      ).json()) as { data: Array<{ status: string }> };
      if (items.data.length === 2 && items.data.every((item) => item.status === 'completed')) break;
      if (Date.now() > deadline) throw new Error(`the subscription's items are ${JSON.stringify(items.data)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await page.reload();
    await page.getByRole('button', { name: 'Einträge zeigen: „Zwei Töne“' }).click();
    await page.getByRole('link', { name: '„Folge 2“ speichern' }).waitFor();
    await page
      .locator('#subs-body')
      .getByText(/^Alle 5 Minuten/)
      .waitFor();
    problems.push(...(await check('settings-subscriptions', [email, 'Zwei Töne', 'Folge 1', 'Folge 2'])));
    // Inside the table's box (which would scroll sideways, so the page's width says nothing of it): every button.
    for (const width of [390, 360]) {
      await page.setViewportSize({ width, height: 844 });
      const outside = await page.evaluate<string[]>(`(() => {
        const box = document.querySelector('#subs-table').closest('.table-wrap').getBoundingClientRect();
        return [...document.querySelectorAll('#subs-body button, #subs-body a')]
          .filter((el) => el.getBoundingClientRect().right > box.right + 0.5)
          .map((el) => el.textContent);
      })()`);
      expect({ width, outside }).toEqual({ width, outside: [] });
    }

    // More options on a feed: its entries, each to open, and the way to the front page's checklist.
    await page.goto(`${stack.served.base}/advanced`);
    await extract(stack.origin.url('/feed.xml'), 'Zwei Töne');
    await page.getByRole('button', { name: '„Folge 2“ hier öffnen' }).waitFor();
    await page.getByText('Feed · 2 Einträge', { exact: true }).waitFor();
    problems.push(...(await check('advanced-collection', ['Zwei Töne', 'Folge 1', 'Folge 2'])));

    // The API reference: its page is German, the reference itself stays English (lang="en").
    await page.goto(`${stack.served.base}/docs`);
    await page.locator('#docs .opblock').first().waitFor({ timeout: 30_000 });
    await expect(page.locator('#docs').getAttribute('lang')).resolves.toBe('en');
    problems.push(...(await check('docs', [], { fullPage: false })));
    expect(problems).toEqual([]);
  }, 300_000);

  test('the switch in the header changes the words at once, sets <html lang>, and is remembered on every page', async () => {
    await stack.browser.fresh({ locale: 'en-GB' });
    page = stack.browser.page;
    await page.goto(`${stack.served.base}/advanced`);
    await page.getByRole('heading', { level: 1, name: 'More options' }).waitFor();
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('en');
    await page.getByLabel('Page or media URL').fill(stack.origin.url('/split.html'));
    await page.getByLabel('Page or media URL').press('Enter');
    await page.getByRole('columnheader', { name: 'Quality' }).waitFor();

    await page.locator('#language-select').selectOption('de');
    await page.getByRole('heading', { level: 1, name: 'Weitere Optionen' }).waitFor();
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('de');
    await expect(page.title()).resolves.toBe('Weitere Optionen · reelay');
    await expect(page.getByRole('navigation').getByRole('link', { name: 'API-Schlüssel' }).count()).resolves.toBe(1);
    // What the page had built is built again in German.
    await page.getByRole('columnheader', { name: 'Qualität' }).waitFor();
    await expect(page.evaluate("localStorage.getItem('reelay-language')")).resolves.toBe('de');

    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Weitere Optionen' }).waitFor();
    for (const [url, heading] of [
      ['/', 'Video oder Ton speichern'],
      ['/settings/api-keys', 'API-Schlüssel'],
      ['/no/such/page', 'Seite nicht gefunden'],
    ]) {
      await page.goto(`${stack.served.base}${url}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await expect(page.locator('#language-select').inputValue()).resolves.toBe('de');
    }
    await page.locator('#language-select').selectOption('en');
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('en');

    // The front page's switch: its words and what its script wrote (the preferences' summary) change.
    await page.goto(`${stack.served.base}/`);
    await page.getByRole('heading', { level: 1, name: 'Save a video or its sound' }).waitFor();
    await page.locator('#front-form[data-ready]').waitFor();
    await expect(page.locator('#prefs-summary').innerText()).resolves.toBe('(Best available)');
    await page.locator('#language-select').selectOption('de');
    await page.getByRole('heading', { level: 1, name: 'Video oder Ton speichern' }).waitFor();
    await expect(page.locator('#prefs-summary').innerText()).resolves.toBe('(Beste verfügbare)');
  }, 120_000);

  test('numbers and dates are written the way the language writes them', async () => {
    const formats = (lng: string) =>
      page.evaluate(`import('/assets/i18n.js').then(async (m) => {
        await m.setLanguage(${JSON.stringify(lng)});
        // An element marked both ways: its text, and an attribute in the [attr]ns:key form.
        const probe = document.createElement('p');
        probe.setAttribute('data-i18n', '[aria-label]common:nav.label; common:skip');
        m.applyTranslations(probe);
        return [m.formatNumber(1234.5), m.formatDate('2026-03-04T05:06:00Z', { dateStyle: 'long', timeZone: 'UTC' }), m.t('playground:job.completed'),
          m.t('playground:found', { count: 1234, n: 1234, title: 'x' }), probe.textContent, probe.getAttribute('aria-label')];
      })`);
    await page.goto(`${stack.served.base}/advanced`);
    await expect(formats('de')).resolves.toEqual([
      '1.234,5',
      '4. März 2026',
      'Fertig.',
      '1.234 Medien in „x“ gefunden.',
      'Zum Inhalt springen',
      'Hauptmenü',
    ]);
    await expect(formats('en')).resolves.toEqual([
      '1,234.5',
      'March 4, 2026',
      'Completed.',
      'Found 1,234 media items in “x”.',
      'Skip to content',
      'Main',
    ]);

    // A key's creation time in the table, in German.
    await page.evaluate("localStorage.setItem('reelay-language', 'de')");
    const email = `dates-${randomBytes(6).toString('hex')}@example.com`;
    expect(
      (
        await page.request.post(`${stack.served.base}/account/signup`, {
          data: { email, password: 'correct horse battery' },
        })
      ).status(),
    ).toBe(201);
    expect((await page.request.post(`${stack.served.base}/account/keys`, { data: { name: 'k' } })).status()).toBe(201);
    await page.goto(`${stack.served.base}/settings/api-keys`);
    const created = page.getByRole('row', { name: /^k / }).locator('td[data-label="Angelegt"] time');
    const iso = await created.getAttribute('datetime');
    const expected = new Intl.DateTimeFormat('de', {
      day: 'numeric',
      month: 'short',
      hour: '2-digit',
      minute: '2-digit',
      timeZone: 'UTC',
    }).format(new Date(iso!));
    await expect(created.innerText()).resolves.toBe(expected);
  }, 60_000);
});
