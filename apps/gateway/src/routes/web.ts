// The web app: hand-written pages and their static assets (no build step, no CDN), read once from
// apps/gateway/web/ and served with a strict CSP; the pages are put together in web-page.ts (the shared
// top bar, the inlined catalogs). Internal routes: they stay out of the OpenAPI document.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Request, RequestHandler, Response } from 'express';
import { ErrorEnvelopeSchema, ReelayError } from '@reelay/contracts';
import type { RouteSpec } from '../http/route.js';
import { HEADER_PARTIAL, webPage, type WebFile, type WebPage } from './web-page.js';

export type { WebFile } from './web-page.js';

/** The same folder from src/routes (tests) and dist/routes (pnpm start, the image). */
export const WEB_DIR = fileURLToPath(new URL('../../web/', import.meta.url));

// No inline script or style anywhere, so 'self' is enough; media and thumbnails come from origins.
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https: http:",
  "media-src 'self' https: http:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webmanifest': 'application/manifest+json',
  '.json': 'application/json; charset=utf-8',
};

const I18NEXT_PACKAGE = path.dirname(createRequire(import.meta.url).resolve('i18next/package.json'));

// Served at the root rather than under /assets/: the manifest by convention, the service worker because
// its scope is its own folder (and it is built with the shell's version).
const ROOT_FILES = new Set(['manifest.webmanifest', 'sw.js']);
/** The pages the service worker keeps for offline use (the API reference's renderer is too large). */
const SHELL_PAGES: Record<string, string> = {
  '/': 'index.html',
  '/advanced': 'advanced.html',
  '/settings/api-keys': 'settings.html',
};
/** Message catalogs live at /locales/<language>/<namespace>.json (the i18n module's contract). */
const LOCALE_FILE = /^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?\/[a-z][a-z0-9-]{0,31}\.json$/;

export function load(dir: string, file: string): WebFile {
  const body = fs.readFileSync(path.join(dir, file));
  return {
    body,
    type: TYPES[path.extname(file)],
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
}

export function send(req: Request, res: Response, file: WebFile, status = 200): void {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // Unversioned file names: the browser revalidates each time and gets a cheap 304.
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('ETag', file.etag);
  if (file.gzip) res.setHeader('Vary', 'Accept-Encoding');
  if (status === 200 && req.headers['if-none-match'] === file.etag) return void res.status(304).end();
  res.status(status);
  if (file.gzip && req.acceptsEncodings('gzip', 'identity') === 'gzip') {
    res.setHeader('Content-Encoding', 'gzip');
    return void res.type(file.type).send(file.gzip);
  }
  res.type(file.type).send(file.body);
}

/** A page in the variant the request's Accept-Language picks (see web-page.ts), which caches must key on. */
export function sendPage(req: Request, res: Response, page: WebPage, status = 200): void {
  res.vary('Accept-Language');
  send(req, res, page.variant(req), status);
}

export function webRoutes(dir = WEB_DIR): RouteSpec[] {
  const read = (file: string) => load(dir, file);
  // Only files with a known type are assets; the map is the allow-list, so no path reaches the disk.
  const assets = new Map(
    fs
      .readdirSync(dir)
      .filter((name) => !name.endsWith('.html') && !ROOT_FILES.has(name) && TYPES[path.extname(name)] !== undefined)
      .map((name) => [name, read(name)] as const),
  );
  assets.set('i18next.js', i18nextModule());
  const catalogs = localeCatalogs(dir);
  const page = (routePath: string, file: string, summary: string): RouteSpec => {
    const content = webPage(dir, file, catalogs, routePath);
    return {
      method: 'get',
      path: routePath,
      tag: 'web',
      summary,
      internal: true,
      responses: {
        200: { description: 'HTML page', contentType: 'text/html' },
        304: { description: 'Not modified (If-None-Match matched)' },
      },
      handler: (req, res) => sendPage(req, res, content),
    };
  };
  const manifest = read('manifest.webmanifest');
  const worker = serviceWorker(dir, assets, catalogs);
  return [
    page('/', 'index.html', 'The front page: a link in, the file out'),
    page('/advanced', 'advanced.html', 'The playground: sources, merges, clips and subtitles'),
    {
      method: 'get',
      path: '/manifest.webmanifest',
      tag: 'web',
      summary: "The web app's manifest (name, icons, share target)",
      internal: true,
      responses: {
        200: { description: 'Web app manifest', contentType: 'application/manifest+json' },
        304: { description: 'Not modified (If-None-Match matched)' },
      },
      handler: (req, res) => send(req, res, manifest),
    },
    {
      method: 'get',
      path: '/sw.js',
      tag: 'web',
      summary: "The web app's service worker",
      internal: true,
      responses: {
        200: { description: 'JavaScript', contentType: 'text/javascript' },
        304: { description: 'Not modified (If-None-Match matched)' },
      },
      handler: (req, res) => send(req, res, worker),
    },
    {
      // The sign-in form lives on the API keys page; people (and links) try /login first.
      method: 'get',
      path: '/login',
      tag: 'web',
      summary: 'Where people look for sign-in: the API keys page',
      internal: true,
      responses: { 303: { description: 'See /settings/api-keys' } },
      handler: (_req, res) => res.redirect(303, '/settings/api-keys'),
    },
    page('/settings/api-keys', 'settings.html', 'API key settings'),
    {
      method: 'get',
      path: '/locales/{language}/{namespace}',
      tag: 'web',
      summary: "A message catalog of the web app (flat JSON, one language's one namespace)",
      internal: true,
      responses: {
        200: { description: 'The catalog: keys to translated strings', contentType: 'application/json' },
        304: { description: 'Not modified (If-None-Match matched)' },
        400: { description: 'invalid_request: malformed percent-encoding in the name', schema: ErrorEnvelopeSchema },
        404: { description: 'not_found: no such catalog', schema: ErrorEnvelopeSchema },
      },
      handler: (req, res) => {
        const name = `/locales/${String(req.params.language)}/${String(req.params.namespace)}`;
        const catalog = catalogs.get(name);
        if (!catalog) throw new ReelayError('not_found', `No catalog at ${name}.`);
        send(req, res, catalog);
      },
    },
    {
      method: 'get',
      path: '/assets/{file}',
      tag: 'web',
      summary: 'A static asset of the web app',
      internal: true,
      responses: {
        200: {
          description: 'CSS, JavaScript, SVG or PNG',
          contentType: ['text/css', 'text/javascript', 'image/svg+xml', 'image/png'],
        },
        304: { description: 'Not modified (If-None-Match matched)' },
        400: { description: 'invalid_request: malformed percent-encoding in the name', schema: ErrorEnvelopeSchema },
        404: { description: 'not_found: no such asset', schema: ErrorEnvelopeSchema },
      },
      handler: (req, res) => {
        const asset = assets.get(String(req.params.file));
        if (!asset) throw new ReelayError('not_found', `No asset named ${String(req.params.file)}.`);
        send(req, res, asset);
      },
    },
  ];
}

/**
 * /assets/i18next.js: i18next's own minified build as an ES module with i18next as its default export.
 * The package's ES module build is not minified (93 KB to parse on every first visit, at a phone's
 * speed); its minified build (i18next.min.js, 50 KB) is UMD, which takes `module.exports` when it
 * finds one, so it is wrapped with one. Gzipped once: it is the largest asset.
 */
export function i18nextModule(): WebFile {
  const { version } = JSON.parse(fs.readFileSync(path.join(I18NEXT_PACKAGE, 'package.json'), 'utf8')) as {
    version: string;
  };
  const umd = fs.readFileSync(path.join(I18NEXT_PACKAGE, 'i18next.min.js'), 'utf8');
  const body = Buffer.from(
    `// i18next ${version} (MIT), its minified build i18next.min.js as an ES module.\nconst module = { exports: {} };\nconst exports = module.exports;\n${umd}\nconst i18next = module.exports;\nexport { i18next as default };\n`,
  );
  return {
    body,
    type: TYPES['.js'],
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    gzip: gzipSync(body),
  };
}

/**
 * Every catalog under web/locales/<language>/<namespace>.json, by the path it is served at. The map is
 * the allow-list: a request names a key of it or gets a 404, so no path reaches the disk.
 */
export function localeCatalogs(dir: string): Map<string, WebFile> {
  const root = path.join(dir, 'locales');
  const catalogs = new Map<string, WebFile>();
  if (!fs.existsSync(root)) return catalogs;
  for (const language of fs.readdirSync(root).sort()) {
    if (!fs.statSync(path.join(root, language)).isDirectory()) continue;
    for (const file of fs.readdirSync(path.join(root, language)).sort()) {
      if (LOCALE_FILE.test(`${language}/${file}`))
        catalogs.set(`/locales/${language}/${file}`, load(path.join(root, language), file));
    }
  }
  return catalogs;
}

/**
 * sw.js with the shell written into it: its pages and assets, and a version hashed from all their
 * bytes (and the worker's own), so any change to the shell is a new worker with a new cache.
 */
export function serviceWorker(
  dir: string,
  assets: Map<string, WebFile>,
  catalogs: Map<string, WebFile> = new Map(),
): WebFile {
  const source = fs.readFileSync(path.join(dir, 'sw.js'), 'utf8');
  const hash = createHash('sha256').update(source);
  for (const file of [...Object.values(SHELL_PAGES), HEADER_PARTIAL]) {
    if (fs.existsSync(path.join(dir, file))) hash.update(fs.readFileSync(path.join(dir, file)));
  }
  const files = [...[...assets].map(([name, file]) => [`/assets/${name}`, file] as const), ...catalogs].sort(
    ([a], [b]) => a.localeCompare(b),
  );
  for (const [name, file] of files) hash.update(name).update(file.body);
  // The catalogs are kept like the assets: the shell offline is the shell in the visitor's language.
  const shell = {
    version: hash.digest('base64url').slice(0, 16),
    pages: Object.keys(SHELL_PAGES),
    assets: files.map(([name]) => name),
  };
  const line = /^const SHELL = .*;$/m;
  if (!line.test(source)) throw new Error('sw.js has no "const SHELL = …;" line to fill in');
  const body = Buffer.from(source.replace(line, `const SHELL = ${JSON.stringify(shell)};`));
  return { body, type: TYPES['.js'], etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

/**
 * A browser that navigates to an unknown page (GET or HEAD, HTML preferred over JSON, outside /api)
 * gets the app's 404 page; everyone else falls through to the JSON envelope.
 */
export function notFoundPage(dir = WEB_DIR): RequestHandler {
  const page = webPage(dir, '404.html', localeCatalogs(dir));
  return (req, res, next) => {
    const wantsHtml =
      (req.method === 'GET' || req.method === 'HEAD') &&
      !/^\/api(?:\/|$)/.test(req.path) &&
      req.accepts(['application/json', 'text/html']) === 'text/html';
    if (!wantsHtml) return next();
    sendPage(req, res, page, 404);
  };
}
