// How the gateway serves the web app, without a browser: security headers, asset types, the asset
// allow-list, revalidation, no inline code (the CSP forbids it) and nothing fetched from elsewhere.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { CONTENT_SECURITY_POLICY, WEB_DIR } from '../../src/routes/web.js';
import { binary, buildGateway, type TestGateway } from '../helpers.js';

let gw: TestGateway;

beforeAll(async () => {
  gw = await buildGateway();
});

afterAll(async () => {
  await gw.close();
});

describe('web app routes', () => {
  test.each(['/', '/advanced', '/settings/api-keys'])(
    '%s is an HTML page with a strict CSP and anti-framing headers',
    async (page) => {
      const res = await request(gw.app).get(page).expect(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
      expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self';");
      expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.text).toContain('<link rel="stylesheet" href="/assets/app.css">');
    },
  );

  test.each([
    ['app.css', 'text/css; charset=utf-8'],
    ['api.js', 'text/javascript; charset=utf-8'],
    ['playground.js', 'text/javascript; charset=utf-8'],
    ['settings.js', 'text/javascript; charset=utf-8'],
    ['favicon.svg', 'image/svg+xml'],
    ['shell.js', 'text/javascript; charset=utf-8'],
    ['share.js', 'text/javascript; charset=utf-8'],
    ['icon-512.png', 'image/png'],
  ])('/assets/%s is served as %s', async (name, type) => {
    const res = await request(gw.app).get(`/assets/${name}`).buffer(true).parse(binary).expect(200);
    expect(res.headers['content-type']).toBe(type);
    expect((res.body as Buffer).equals(fs.readFileSync(path.join(WEB_DIR, name)))).toBe(true);
  });

  test('an unchanged asset is answered 304 to a revalidation', async () => {
    const first = await request(gw.app).get('/assets/app.css').expect(200);
    expect(first.headers['cache-control']).toBe('no-cache');
    await request(gw.app).get('/assets/app.css').set('if-none-match', first.headers.etag).expect(304);
  });

  test.each(['nope.js', 'index.html', '..%2Fsrc%2Fapp.ts', '..%2F..%2Fpackage.json', '.hidden.js'])(
    '/assets/%s is a 404 envelope',
    async (name) => {
      const res = await request(gw.app).get(`/assets/${name}`).expect(404);
      expect(res.body).toEqual({ success: false, error: { code: 'not_found', message: expect.any(String) } });
    },
  );

  test('the web routes stay out of the OpenAPI document', async () => {
    const doc = (await request(gw.app).get('/api/openapi.json').expect(200)).body as { paths: Record<string, unknown> };
    expect(
      Object.keys(doc.paths).filter((p) => p === '/' || p.startsWith('/settings') || p.startsWith('/assets')),
    ).toEqual([]);
  });
});

describe('the API reference (/docs)', () => {
  test("is an HTML page under the same CSP, loading only the gateway's own files", async () => {
    const res = await request(gw.app).get('/docs').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    const loaded = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)]
      .map(([, url]) => url)
      .filter((url) => /\.(?:js|css)$/.test(url));
    expect(loaded).toEqual([
      '/assets/shell.js',
      '/docs/swagger-ui.css',
      '/assets/app.css',
      '/assets/i18n.js',
      '/docs/docs.css',
      '/docs/swagger-ui-bundle.js',
      '/docs/docs.js',
    ]);
    for (const url of loaded) {
      const file = await request(gw.app).get(url).expect(200);
      expect(file.headers['content-type']).toMatch(url.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
    }
  });

  test("Swagger UI's bundle goes out gzipped to a client that accepts it, and whole to one that does not", async () => {
    const zipped = await request(gw.app)
      .get('/docs/swagger-ui-bundle.js')
      .set('accept-encoding', 'gzip')
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toMatch(/Accept-Encoding/i);
    const plain = await request(gw.app)
      .get('/docs/swagger-ui-bundle.js')
      .set('accept-encoding', 'identity')
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    // (supertest inflates the body it hands over: the sizes sent are in Content-Length.)
    expect(Number(zipped.headers['content-length'])).toBeLessThan(Number(plain.headers['content-length']) / 2);
    expect(zipped.body).toEqual(plain.body);
  });

  test.each(['index.html', 'swagger-initializer.js', '..%2Fpackage.json', 'oauth2-redirect.html'])(
    '/docs/%s is a 404 envelope',
    async (name) => {
      const res = await request(gw.app).get(`/docs/${name}`).expect(404);
      expect(res.body).toMatchObject({ success: false, error: { code: 'not_found' } });
    },
  );
});

describe('installable: manifest, icons and service worker', () => {
  test('the manifest names the app, its icons (192, 512, maskable) and a GET share target to / with the link in u', async () => {
    const res = await request(gw.app).get('/manifest.webmanifest').buffer(true).parse(binary).expect(200);
    expect(res.headers['content-type']).toBe('application/manifest+json; charset=utf-8');
    const manifest = JSON.parse((res.body as Buffer).toString('utf8')) as Record<string, unknown> & {
      icons: Array<{ src: string; sizes: string; purpose: string }>;
    };
    expect(manifest).toMatchObject({
      short_name: 'reelay',
      start_url: '/',
      display: 'standalone',
      share_target: { action: '/', method: 'GET', params: { url: 'u' } },
    });
    expect(manifest.theme_color).toMatch(/^#[0-9a-f]{6}$/i);
    expect(manifest.background_color).toMatch(/^#[0-9a-f]{6}$/i);
    const png = manifest.icons.filter((icon) => icon.src.endsWith('.png'));
    expect(png.map((icon) => `${icon.sizes} ${icon.purpose}`).sort()).toEqual([
      '192x192 any',
      '512x512 any',
      '512x512 maskable',
    ]);
    for (const icon of png) {
      const file = await request(gw.app).get(icon.src).buffer(true).parse(binary).expect(200);
      expect(file.headers['content-type']).toBe('image/png');
      const body = file.body as Buffer;
      // The PNG's own header says the size the manifest claims.
      expect(`${body.readUInt32BE(16)}x${body.readUInt32BE(20)}`).toBe(icon.sizes);
      expect(body.length).toBeLessThan(20_000);
    }
  });

  test.each(['/', '/advanced', '/settings/api-keys', '/docs'])(
    '%s links the manifest and loads the shell script before the body',
    async (page) => {
      const res = await request(gw.app).get(page).expect(200);
      expect(res.text).toContain('<link rel="manifest" href="/manifest.webmanifest">');
      expect(res.text.indexOf('<script src="/assets/shell.js"></script>')).toBeLessThan(res.text.indexOf('<body>'));
      expect(res.text).toContain('id="theme-select"');
      expect(res.text).toContain('<a href="/docs"');
    },
  );

  test('sw.js is served at the root with the shell it precaches and a version hashed from it', async () => {
    const res = await request(gw.app).get('/sw.js').expect(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const line = /^const SHELL = (.*);$/m.exec(res.text);
    const shell = JSON.parse(line![1]) as { version: string; pages: string[]; assets: string[] };
    expect(shell.version).toMatch(/^[\w-]{16}$/);
    expect(shell.pages).toEqual(['/', '/advanced', '/settings/api-keys']);
    expect(shell.assets).toEqual(
      expect.arrayContaining(['/assets/app.css', '/assets/shell.js', '/assets/playground.js', '/assets/icon-192.png']),
    );
    // The message catalogs too, so the shell speaks the visitor's language offline.
    expect(shell.assets).toEqual(
      expect.arrayContaining([
        '/assets/i18n.js',
        '/assets/i18next.js',
        '/locales/en/common.json',
        '/locales/de/common.json',
        '/locales/en/front.json',
        '/locales/de/front.json',
      ]),
    );
    expect(shell.assets.every((url) => url.startsWith('/assets/') || url.startsWith('/locales/'))).toBe(true);
    // Not among the assets: the worker and the manifest live at the root only.
    await request(gw.app).get('/assets/sw.js').expect(404);
    await request(gw.app).get('/assets/manifest.webmanifest').expect(404);
  });

  test('a changed shell file is a new service worker version', async () => {
    const { serviceWorker } = await import('../../src/routes/web.js');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-web-'));
    try {
      fs.copyFileSync(path.join(WEB_DIR, 'sw.js'), path.join(dir, 'sw.js'));
      for (const page of ['index.html', 'advanced.html', 'settings.html'])
        fs.writeFileSync(path.join(dir, page), '<!doctype html>');
      const asset = (text: string) =>
        new Map([['app.css', { body: Buffer.from(text), type: 'text/css', etag: '"x"' }]]);
      const version = (text: string) => /"version":"([^"]+)"/.exec(serviceWorker(dir, asset(text)).body.toString())![1];
      expect(version('a {}')).toBe(version('a {}'));
      expect(version('a {}')).not.toBe(version('b {}'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('one top bar for every page', () => {
  const browserAccept = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8';
  const pages: Array<[string, string | null]> = [
    ['/', '/'],
    ['/advanced', '/advanced'],
    ['/settings/api-keys', '/settings/api-keys'],
    ['/docs', '/docs'],
    ['/no/such/page', null],
  ];
  const header = fs.readFileSync(path.join(WEB_DIR, 'partials', 'header.html'), 'utf8').trim();

  test.each(pages)(
    '%s has the shared top bar, with its own nav link (%s) marked as the current page',
    async (url, current) => {
      const res = await request(gw.app).get(url).set('accept', browserAccept);
      expect(res.text).not.toContain('<!--#include');
      const served = /<a class="skip-link"[\s\S]*?<\/header>/.exec(res.text)![0];
      // The partial as it is, but for the one aria-current, which is on a nav link and nowhere else.
      expect(served.replace(' aria-current="page"', '')).toBe(header);
      const marked = [...res.text.matchAll(/<a href="([^"]*)" aria-current="page"/g)].map(([, href]) => href);
      expect(marked).toEqual(current ? [current] : []);
      expect(/<nav\b[\s\S]*<\/nav>/.exec(served)![0]).toContain(
        current ? `<a href="${current}" aria-current="page" data-i18n="common:nav.` : '<nav',
      );
    },
  );

  test('the pages on disk carry no top bar of their own, only the include', () => {
    for (const file of ['index.html', 'advanced.html', 'settings.html', 'docs.html', '404.html']) {
      const html = fs.readFileSync(path.join(WEB_DIR, file), 'utf8');
      expect({
        file,
        includes: html.split('<!--#include header-->').length - 1,
        headers: html.match(/<header\b|<nav\b|id="theme-select"/g),
      }).toEqual({ file, includes: 1, headers: null });
    }
  });
});

describe("the page's catalogs inlined in it", () => {
  const disk = (lng: string, ns: string) =>
    JSON.parse(fs.readFileSync(path.join(WEB_DIR, 'locales', lng, `${ns}.json`), 'utf8')) as Record<string, string>;
  const inlined = (html: string) => {
    const block = /<script type="application\/json" id="i18n-catalogs">([^<]*)<\/script>/.exec(html);
    return block ? (JSON.parse(block[1]) as Record<string, Record<string, Record<string, string>>>) : null;
  };

  test.each([
    ['no Accept-Language', undefined, ['en']],
    ['English', 'en-GB,en;q=0.9', ['en']],
    ['German', 'de-DE,de;q=0.9,en;q=0.8', ['en', 'de']],
    ['Swiss German after French', 'fr-CH, fr;q=0.9, de-CH;q=0.8', ['en', 'de']],
    ['a language the app has not got', 'ja', ['en']],
  ])(
    'the front page for %s holds English (the fallback) and the best match: %s → %j',
    async (_who, accept, languages) => {
      const req = request(gw.app).get('/');
      if (accept) req.set('accept-language', accept);
      const res = await req.expect(200);
      expect(res.headers.vary).toMatch(/Accept-Language/);
      const resources = inlined(res.text)!;
      expect(Object.keys(resources).sort()).toEqual([...languages].sort());
      // Exactly the namespaces the page declares (<html data-i18n-ns="common front">), as on disk.
      for (const lng of languages)
        expect(resources[lng]).toEqual({ common: disk(lng, 'common'), front: disk(lng, 'front') });
      // In <head>, before any script of the page could want it.
      expect(res.text.indexOf('id="i18n-catalogs"')).toBeLessThan(res.text.indexOf('</head>'));
    },
  );

  test('each language is its own variant: its own ETag, revalidated per language', async () => {
    const en = await request(gw.app).get('/advanced').set('accept-language', 'en').expect(200);
    const de = await request(gw.app).get('/advanced').set('accept-language', 'de').expect(200);
    expect(en.headers.etag).not.toBe(de.headers.etag);
    expect(Object.keys(inlined(de.text)!)).toEqual(['en', 'de']);
    expect(Object.keys(inlined(de.text)!.de)).toEqual(['common', 'playground']);
    await request(gw.app)
      .get('/advanced')
      .set('accept-language', 'de')
      .set('if-none-match', de.headers.etag)
      .expect(304);
    await request(gw.app)
      .get('/advanced')
      .set('accept-language', 'en')
      .set('if-none-match', de.headers.etag)
      .expect(200);
  });

  test('every page gets its catalogs, the 404 and the API reference included', async () => {
    for (const url of ['/settings/api-keys', '/docs', '/no/such/page']) {
      const res = await request(gw.app).get(url).set('accept', 'text/html').set('accept-language', 'de');
      expect({ url, de: Object.keys(inlined(res.text)?.de ?? {}) }).toEqual({
        url,
        de: url === '/settings/api-keys' ? ['common', 'settings'] : ['common'],
      });
    }
  });

  test("no catalog text can end the data block: every '<' in it is escaped", async () => {
    const res = await request(gw.app).get('/').set('accept-language', 'de').expect(200);
    const block = /<script type="application\/json" id="i18n-catalogs">([\s\S]*?)<\/script>/.exec(res.text)![1];
    expect(block).not.toContain('<');
    // (The catalogs do hold '<' — the numbered tags of rich strings — so the escape is exercised.)
    expect(JSON.stringify(disk('de', 'common'))).toContain('<0>');
    expect(inlined(res.text)!.de.common['docs.raw']).toBe(disk('de', 'common')['docs.raw']);
  });
});

describe('languages: i18next and the catalogs', () => {
  test('i18next is served from node_modules as an ES module of its minified build, gzipped to a client that accepts it', async () => {
    const zipped = await request(gw.app)
      .get('/assets/i18next.js')
      .set('accept-encoding', 'gzip')
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(zipped.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(zipped.headers['content-encoding']).toBe('gzip');
    const text = (zipped.body as Buffer).toString('utf8');
    expect(text).toMatch(/^export \{[^}]*\bdefault\b/m);
    // The package's own minified file, whole, inside the wrapper (not a copy of our making).
    const i18nextDir = path.dirname(createRequire(import.meta.url).resolve('i18next/package.json'));
    expect(text).toContain(fs.readFileSync(path.join(i18nextDir, 'i18next.min.js'), 'utf8'));
    expect(text.length).toBeLessThan(fs.statSync(path.join(i18nextDir, 'dist/esm/i18next.js')).size * 0.6);
  });

  test.each(['en', 'de'])('/locales/%s/<namespace>.json is each catalog as JSON', async (lng) => {
    for (const ns of ['common', 'front', 'playground', 'settings']) {
      const res = await request(gw.app).get(`/locales/${lng}/${ns}.json`).expect(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
      expect(res.body).toEqual(JSON.parse(fs.readFileSync(path.join(WEB_DIR, 'locales', lng, `${ns}.json`), 'utf8')));
    }
    const again = await request(gw.app).get(`/locales/${lng}/common.json`).expect(200);
    await request(gw.app).get(`/locales/${lng}/common.json`).set('if-none-match', again.headers.etag).expect(304);
  });

  test.each([
    '/locales/fr/common.json',
    '/locales/en/nothing.json',
    '/locales/en/common',
    '/locales/..%2Fpackage.json/x.json',
    '/locales/en/..%2F..%2Fpackage.json',
  ])('%s is a 404 envelope', async (url) => {
    const res = await request(gw.app).get(url).set('accept', 'application/json').expect(404);
    expect(res.body).toMatchObject({ success: false, error: { code: 'not_found' } });
  });
});

describe('unknown pages', () => {
  const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

  test('a browser navigating to an unknown page gets the HTML 404 page with a link home', async () => {
    const res = await request(gw.app).get('/no/such/page').set('accept', browserAccept).expect(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(res.text).toContain('<h1 data-i18n="common:notFound.heading">Page not found</h1>');
    expect(res.text).toContain('href="/"');
  });

  test.each([
    ['curl (*/*)', '/no/such/page', '*/*'],
    ['a JSON client', '/no/such/page', 'application/json'],
    ['no Accept header', '/no/such/page', undefined],
    ['a browser under /api', '/api/v1/nope', browserAccept],
  ])('%s keeps the JSON envelope (%s)', async (_who, url, accept) => {
    const req = request(gw.app).get(url);
    if (accept) req.set('accept', accept);
    const res = await req.expect(404);
    expect(res.body).toEqual({ success: false, error: { code: 'not_found', message: expect.any(String) } });
  });

  test('a browser POSTing to an unknown path keeps the JSON envelope', async () => {
    const res = await request(gw.app).post('/no/such/page').set('accept', browserAccept).send({}).expect(404);
    expect(res.body).toMatchObject({ success: false, error: { code: 'not_found' } });
  });

  test('/login leads to the sign-in form on the API keys page', async () => {
    const res = await request(gw.app).get('/login').set('accept', browserAccept).expect(303);
    expect(res.headers.location).toBe('/settings/api-keys');
  });
});

describe('message catalogs', () => {
  test('each is served as JSON from /locales/<language>/<namespace>.json; anything else there is 404', async () => {
    const res = await request(gw.app).get('/locales/de/front.json').expect(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body.download).toBe('Herunterladen');
    await request(gw.app).get('/locales/xx/front.json').expect(404);
    await request(gw.app).get('/locales/en/..%2F..%2Fpackage.json').expect(404);
  });

  test('German has every English key and no other; every key the front page uses is in them', () => {
    const catalog = (lng: string) =>
      JSON.parse(fs.readFileSync(path.join(WEB_DIR, 'locales', lng, 'front.json'), 'utf8')) as Record<string, string>;
    const en = catalog('en');
    const de = catalog('de');
    expect(Object.keys(de).sort()).toEqual(Object.keys(en).sort());
    expect(Object.entries(de).filter(([, text]) => !text.trim())).toEqual([]);
    const used = new Set<string>();
    for (const file of ['index.html', 'front.js', 'front-queue.js', 'front-choice.js']) {
      const text = fs.readFileSync(path.join(WEB_DIR, file), 'utf8');
      for (const m of text.matchAll(/front:([A-Za-z]+)/g)) used.add(m[1]);
    }
    // Keys built at run time: the status badges and collection kinds.
    for (const key of used) {
      const known =
        key in en ||
        `${key}_other` in en ||
        Object.keys(en).some((k) => k.startsWith(key) && /^(status|kind)$/.test(key));
      expect({ key, known }).toEqual({ key, known: true });
    }
  });
});

describe('web app files', () => {
  const files = fs.readdirSync(WEB_DIR).filter((name) => fs.statSync(path.join(WEB_DIR, name)).isFile());
  const read = (name: string) => fs.readFileSync(path.join(WEB_DIR, name), 'utf8');

  test('pages have no inline script, style or event handler (the CSP would block them)', () => {
    for (const page of files.filter((f) => f.endsWith('.html'))) {
      const html = read(page);
      expect({ page, inlineScripts: html.match(/<script(?![^>]*\bsrc=)[^>]*>/g) }).toEqual({
        page,
        inlineScripts: null,
      });
      expect({ page, styles: html.match(/<style|\sstyle=/g) }).toEqual({ page, styles: null });
      expect({ page, handlers: html.match(/\son[a-z]+=/g) }).toEqual({ page, handlers: null });
    }
  });

  test('nothing is loaded from another site (no CDN, no web fonts)', () => {
    for (const name of files) {
      const text = read(name);
      expect({
        name,
        external: text.match(
          /(?:src|href)=["']?(?:https?:)?\/\/|@import|url\(\s*["']?(?:https?:)?\/\/|import\s[^;]*from\s+["'](?:https?:)?\/\//g,
        ),
      }).toEqual({ name, external: null });
    }
  });
});
