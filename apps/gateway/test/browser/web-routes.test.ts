// How the gateway serves the web app, without a browser: security headers, asset types, the asset
// allow-list, revalidation, no inline code (the CSP forbids it) and nothing fetched from elsewhere.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fs from 'node:fs';
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
  test.each(['/', '/settings/api-keys'])('%s is an HTML page with a strict CSP and anti-framing headers', async (page) => {
    const res = await request(gw.app).get(page).expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self';");
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.text).toContain('<link rel="stylesheet" href="/assets/app.css">');
  });

  test.each([
    ['app.css', 'text/css; charset=utf-8'],
    ['api.js', 'text/javascript; charset=utf-8'],
    ['playground.js', 'text/javascript; charset=utf-8'],
    ['settings.js', 'text/javascript; charset=utf-8'],
    ['favicon.svg', 'image/svg+xml'],
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

  test.each(['nope.js', 'index.html', '..%2Fsrc%2Fapp.ts', '..%2F..%2Fpackage.json', '.hidden.js'])('/assets/%s is a 404 envelope', async (name) => {
    const res = await request(gw.app).get(`/assets/${name}`).expect(404);
    expect(res.body).toEqual({ success: false, error: { code: 'not_found', message: expect.any(String) } });
  });

  test('the web routes stay out of the OpenAPI document', async () => {
    const doc = (await request(gw.app).get('/api/openapi.json').expect(200)).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p === '/' || p.startsWith('/settings') || p.startsWith('/assets'))).toEqual([]);
  });
});

describe('the API reference (/docs)', () => {
  test('is an HTML page under the same CSP, loading only the gateway\'s own files', async () => {
    const res = await request(gw.app).get('/docs').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    const loaded = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map(([, url]) => url).filter((url) => /\.(?:js|css)$/.test(url));
    expect(loaded).toEqual(['/docs/swagger-ui.css', '/docs/docs.css', '/docs/swagger-ui-bundle.js', '/docs/docs.js']);
    for (const url of loaded) {
      const file = await request(gw.app).get(url).expect(200);
      expect(file.headers['content-type']).toMatch(url.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
    }
  });

  test("Swagger UI's bundle goes out gzipped to a client that accepts it, and whole to one that does not", async () => {
    const zipped = await request(gw.app).get('/docs/swagger-ui-bundle.js').set('accept-encoding', 'gzip').buffer(true).parse(binary).expect(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toMatch(/Accept-Encoding/i);
    const plain = await request(gw.app).get('/docs/swagger-ui-bundle.js').set('accept-encoding', 'identity').buffer(true).parse(binary).expect(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    // (supertest inflates the body it hands over: the sizes sent are in Content-Length.)
    expect(Number(zipped.headers['content-length'])).toBeLessThan(Number(plain.headers['content-length']) / 2);
    expect(zipped.body).toEqual(plain.body);
  });

  test.each(['index.html', 'swagger-initializer.js', '..%2Fpackage.json', 'oauth2-redirect.html'])('/docs/%s is a 404 envelope', async (name) => {
    const res = await request(gw.app).get(`/docs/${name}`).expect(404);
    expect(res.body).toMatchObject({ success: false, error: { code: 'not_found' } });
  });
});

describe('web app files', () => {
  const files = fs.readdirSync(WEB_DIR);
  const read = (name: string) => fs.readFileSync(path.join(WEB_DIR, name), 'utf8');

  test('pages have no inline script, style or event handler (the CSP would block them)', () => {
    for (const page of files.filter((f) => f.endsWith('.html'))) {
      const html = read(page);
      expect({ page, inlineScripts: html.match(/<script(?![^>]*\bsrc=)[^>]*>/g) }).toEqual({ page, inlineScripts: null });
      expect({ page, styles: html.match(/<style|\sstyle=/g) }).toEqual({ page, styles: null });
      expect({ page, handlers: html.match(/\son[a-z]+=/g) }).toEqual({ page, handlers: null });
    }
  });

  test('nothing is loaded from another site (no CDN, no web fonts)', () => {
    for (const name of files) {
      const text = read(name);
      expect({ name, external: text.match(/(?:src|href)=["']?(?:https?:)?\/\/|@import|url\(\s*["']?(?:https?:)?\/\/|import\s[^;]*from\s+["'](?:https?:)?\/\//g) }).toEqual({ name, external: null });
    }
  });
});
