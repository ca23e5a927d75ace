// The web app as an installable app in a real browser: the manifest a browser reads, the service
// worker that takes control and serves the shell offline (and nothing from the API), the theme switch
// that is remembered and applied before the first paint, a shared link that reaches the front page and
// More options, and
// the 404 page a browser gets where an API client gets JSON.
import { beforeEach, expect, test } from '@jest/globals';
import type { Page } from 'playwright-core';
import { eventually } from '../account-helpers.js';
import { chooseTheme } from './audit.js';
import { describeBrowser, screenshot, useServedBrowser } from './browser.js';

let page: Page;

describeBrowser('the installable web app shell', () => {
  // Going offline makes the page's own requests fail on purpose; those are not the page's errors.
  const stack = useServedBrowser(/ERR_INTERNET_DISCONNECTED/);

  beforeEach(async () => {
    await stack.browser.fresh();
    page = stack.browser.page;
  });

  test('the page links a manifest the browser can read: name, standalone, icons and the share target', async () => {
    await page.goto(`${stack.served.base}/`);
    const href = await page.locator('link[rel="manifest"]').getAttribute('href');
    const manifest = (await page.evaluate(`fetch(${JSON.stringify(href)}).then((res) => res.json())`)) as {
      name: string;
      display: string;
      icons: Array<{ src: string; sizes: string; purpose: string }>;
      share_target: { action: string; method: string; params: { url: string } };
    };
    expect(manifest.name).toContain('reelay');
    expect(manifest.display).toBe('standalone');
    expect(manifest.icons.map((icon) => `${icon.sizes}/${icon.purpose}`)).toEqual(
      expect.arrayContaining(['192x192/any', '512x512/any', '512x512/maskable']),
    );
    expect(manifest.share_target).toMatchObject({ action: '/', method: 'GET', params: { url: 'u' } });
    // Every icon loads as an image in the page.
    for (const icon of manifest.icons) {
      const size = await page.evaluate(
        `new Promise((resolve, reject) => { const img = new Image(); img.onload = () => resolve(img.naturalWidth); img.onerror = reject; img.src = ${JSON.stringify(icon.src)}; })`,
      );
      expect(size).toBeGreaterThan(0);
    }
  });

  test('the service worker takes control, and with the network gone a reload still shows the shell', async () => {
    await page.goto(`${stack.served.base}/`);
    // (Not waitForFunction: it evaluates strings, which the page's CSP forbids.)
    await page.evaluate(
      "navigator.serviceWorker.controller ?? new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve))",
    );
    const version = /"version":"([^"]+)"/.exec(await (await page.request.get(`${stack.served.base}/sw.js`)).text())![1];
    await expect(page.evaluate('caches.keys()')).resolves.toEqual([`reelay-shell-${version}`]);

    // An API call through the controlled page is answered by the network and never cached.
    await expect(page.evaluate("fetch('/api/v1/platforms').then((res) => res.status)")).resolves.toBe(200);
    const cached = (await page.evaluate(
      `caches.open('reelay-shell-${version}').then((c) => c.keys()).then((keys) => keys.map((r) => new URL(r.url).pathname))`,
    )) as string[];
    expect(cached).toEqual(
      expect.arrayContaining([
        '/',
        '/settings/api-keys',
        '/assets/app.css',
        '/assets/playground.js',
        '/assets/icon-192.png',
      ]),
    );
    expect(cached).toEqual(
      expect.arrayContaining(['/assets/i18n.js', '/assets/i18next.js', '/locales/de/common.json']),
    );
    expect(cached).toEqual(
      expect.arrayContaining(['/advanced', '/assets/front.js', '/locales/en/front.json', '/locales/de/front.json']),
    );
    expect(
      cached.filter(
        (p) =>
          !p.startsWith('/assets/') &&
          !p.startsWith('/locales/') &&
          !['/', '/advanced', '/settings/api-keys'].includes(p),
      ),
    ).toEqual([]);

    await stack.browser.context.setOffline(true);
    try {
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Save a video or its sound' }).waitFor();
      await page.getByLabel('Link', { exact: true }).waitFor();
      // The stylesheet came from the cache too: the header is laid out as a flex row.
      await expect(page.evaluate("getComputedStyle(document.querySelector('.site-header')).display")).resolves.toBe(
        'flex',
      );
      await screenshot(page, 'shell-offline');
      // Extracting offline says so plainly (the API is never answered from a cache).
      await page.getByLabel('Link', { exact: true }).fill('https://example.com/watch/1');
      await page.getByLabel('Link', { exact: true }).press('Enter');
      await page.getByRole('status').filter({ hasText: 'The server could not be reached' }).waitFor();
      await page.goto(`${stack.served.base}/settings/api-keys`);
      await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    } finally {
      await stack.browser.context.setOffline(false);
    }
  });

  test("a new service worker deletes an older release's cache when it takes over", async () => {
    await page.goto(`${stack.served.base}/`);
    const controlled =
      "navigator.serviceWorker.controller ?? new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve))";
    await page.evaluate(controlled);
    // An older release's shell, left behind; and the worker gone, as when a new version is deployed.
    await page.evaluate("caches.open('reelay-shell-older').then((cache) => cache.put('/', new Response('old shell')))");
    await page.evaluate("caches.open('someone-elses-cache').then((cache) => cache.put('/x', new Response('x')))");
    await page.evaluate('navigator.serviceWorker.getRegistration().then((r) => r.unregister())');
    await page.reload();
    await page.evaluate(controlled);
    const version = /"version":"([^"]+)"/.exec(await (await page.request.get(`${stack.served.base}/sw.js`)).text())![1];
    await eventually(
      async () =>
        expect(((await page.evaluate('caches.keys()')) as string[]).sort()).toEqual([
          `reelay-shell-${version}`,
          'someone-elses-cache',
        ]),
      5000,
    );
    await page.getByRole('heading', { level: 1, name: 'Save a video or its sound' }).waitFor();
  });

  test('the theme switch changes the colours at once, is remembered, and is applied before the first paint', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${stack.served.base}/`);
    await expect(page.locator('#theme-select').inputValue()).resolves.toBe('system');
    const background = () => page.evaluate('getComputedStyle(document.body).backgroundColor');
    const light = await background();
    await chooseTheme(page, 'dark');
    await expect(page.locator('html').getAttribute('data-theme')).resolves.toBe('dark');
    const dark = await background();
    expect(dark).not.toBe(light);

    // Remembered on every page, and set on <html> before <body> exists (so nothing paints light first).
    await page.addInitScript(`new MutationObserver((_, observer) => {
      if (document.body) { window.themeAtBody = document.documentElement.dataset.theme; observer.disconnect(); }
    }).observe(document, { childList: true, subtree: true });`);
    for (const path of ['/settings/api-keys', '/docs', '/no/such/page']) {
      await page.goto(`${stack.served.base}${path}`);
      await expect(page.evaluate('window.themeAtBody')).resolves.toBe('dark');
      await expect(page.locator('#theme-select').inputValue()).resolves.toBe('dark');
    }

    // "System" follows the operating system's setting, live.
    await chooseTheme(page, 'system');
    await expect(page.locator('html').getAttribute('data-theme')).resolves.toBe('light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await eventually(async () => expect(await page.locator('html').getAttribute('data-theme')).toBe('dark'), 5000);
    await expect(page.evaluate("localStorage.getItem('reelay-theme')")).resolves.toBe('system');
  });

  test('on More options, a shared link (/?u=, or a link inside shared text) fills the URL field and focuses it', async () => {
    const link = 'https://example.com/watch/42?t=1&x=y';
    await page.goto(`${stack.served.base}/advanced?u=${encodeURIComponent(link)}`);
    const field = page.getByLabel('Page or media URL');
    await expect(field.inputValue()).resolves.toBe(link);
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('url');

    await page.goto(`${stack.served.base}/advanced?title=Look&text=${encodeURIComponent(`watch this ${link} now`)}`);
    await expect(field.inputValue()).resolves.toBe(link);

    await page.goto(`${stack.served.base}/advanced?u=`);
    await expect(field.inputValue()).resolves.toBe('');
  });

  test('the front page takes a link inside shared text too, and links it on to More options', async () => {
    // The gateway has no such asset: the download fails (404 from the origin), and says so.
    const link = `${stack.served.base}/assets/nothing-here.mp4`;
    await page.goto(`${stack.served.base}/?title=Look&text=${encodeURIComponent(`watch this ${link} now`)}`);
    await expect(page.getByLabel('Link', { exact: true }).inputValue()).resolves.toBe(link);
    await page.getByRole('status').and(page.locator('[data-kind="error"]')).waitFor();
    await expect(page.getByRole('link', { name: /^More options: / }).getAttribute('href')).resolves.toBe(
      `/advanced?u=${encodeURIComponent(link)}`,
    );
  });

  test('Enter on the Extract button keeps the focus on it through the request', async () => {
    await page.goto(
      `${stack.served.base}/advanced?u=${encodeURIComponent(`${stack.served.base}/assets/nothing-here.mp4`)}`,
    );
    await page.getByRole('button', { name: 'Extract' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').and(page.locator('[data-kind="error"]')).waitFor();
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('extract-button');
  });

  test("Enter on the front page's Download button keeps the focus on it through the request", async () => {
    await page.goto(`${stack.served.base}/`);
    await page.getByLabel('Link', { exact: true }).fill(`${stack.served.base}/assets/nothing-here.mp4`);
    await page.getByRole('button', { name: 'Download', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').and(page.locator('[data-kind="error"]')).waitFor();
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('go');
  });

  test('a browser at an unknown page or /login sees a page; an API client gets the JSON envelope', async () => {
    const answer = await page.goto(`${stack.served.base}/this/is/not/here`);
    expect(answer?.status()).toBe(404);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    await page.getByRole('link', { name: 'Go to the front page' }).click();
    await page.getByRole('heading', { level: 1, name: 'Save a video or its sound' }).waitFor();

    const json = await page.request.get(`${stack.served.base}/this/is/not/here`, {
      headers: { accept: 'application/json' },
    });
    expect(json.status()).toBe(404);
    expect(await json.json()).toMatchObject({ success: false, error: { code: 'not_found' } });
    const curl = await fetch(`${stack.served.base}/this/is/not/here`, { headers: { accept: '*/*' } });
    expect(await curl.json()).toMatchObject({ success: false, error: { code: 'not_found' } });

    await page.goto(`${stack.served.base}/login`);
    expect(new URL(page.url()).pathname).toBe('/settings/api-keys');
    await page.getByRole('form', { name: 'Sign in' }).waitFor();
  });
});
