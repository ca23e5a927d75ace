// The web app's pages as they are served. Every page has the same top bar (skip link, brand, nav,
// theme and language switches): it is written once, in web/partials/header.html, and put where a page
// says <!--#include header-->, with the page's own nav link marked aria-current. And every page gets
// the message catalogs it names (<html data-i18n-ns>) as a JSON data block, so its words are there
// without a request after the HTML: English, which is always needed as the fallback, and the best
// match of the browser's Accept-Language. A visitor who chose another language in the switch gets it
// fetched by i18n.js, as before. A data block is not a script, so the CSP's script-src 'self' holds.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Request } from 'express';

/** A file the gateway serves from memory: its bytes, type and ETag (pages and assets alike). */
export interface WebFile {
  body: Buffer;
  type: string;
  etag: string;
  /** The body gzipped once at start-up, for large files (the API docs' renderer). */
  gzip?: Buffer;
}

const INCLUDE_HEADER = '<!--#include header-->';
export const HEADER_PARTIAL = 'partials/header.html';
const FALLBACK = 'en';
const CATALOG_PATH = /^\/locales\/([^/]+)\/([^/]+)\.json$/;

/** A served page: the variant of it a request gets. */
export interface WebPage {
  variant(req: Request): WebFile;
}

/** The page's HTML with the shared top bar in it, the link to `current` (a route path) marked as this page. */
export function withHeader(dir: string, html: string, current?: string): string {
  if (!html.includes(INCLUDE_HEADER)) return html;
  let header = fs.readFileSync(path.join(dir, HEADER_PARTIAL), 'utf8').trimEnd();
  if (current) {
    // Only the nav's link: the brand also links to /, and is not "the current page".
    header = header.replace(/<nav\b[\s\S]*?<\/nav>/, (nav) =>
      nav.replace(`<a href="${current}"`, `<a href="${current}" aria-current="page"`),
    );
  }
  return html.replace(INCLUDE_HEADER, header);
}

/** The namespaces a page declares on <html data-i18n-ns="common front">; every one if it declares none. */
function pageNamespaces(html: string, all: string[]): string[] {
  const declared = /<html\b[^>]*\bdata-i18n-ns="([^"]*)"/
    .exec(html)?.[1]
    .split(/\s+/)
    .filter((ns) => all.includes(ns));
  return declared?.length ? declared : all;
}

/**
 * The JSON data block for `languages`: { "en": { "common": {…}, "front": {…} }, "de": {…} }, as
 * i18next's `resources` takes it. `<` is escaped so no catalog text can end the element.
 */
function catalogBlock(catalogs: Map<string, WebFile>, languages: string[], namespaces: string[]): string {
  const resources: Record<string, Record<string, unknown>> = {};
  for (const lng of languages) {
    for (const ns of namespaces) {
      const file = catalogs.get(`/locales/${lng}/${ns}.json`);
      if (file) (resources[lng] ??= {})[ns] = JSON.parse(file.body.toString('utf8'));
    }
  }
  const json = JSON.stringify(resources).replace(/</g, '\\u003c');
  return `<script type="application/json" id="i18n-catalogs">${json}</script>`;
}

function htmlFile(html: string): WebFile {
  const body = Buffer.from(html);
  return {
    body,
    type: 'text/html; charset=utf-8',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
}

/**
 * A page of web/ with the top bar included and its catalogs inlined: one variant per language the
 * catalogs have, built once at start-up; a request gets the one its Accept-Language matches best
 * (English when none does). The caller sends `Vary: Accept-Language` with it.
 */
export function webPage(dir: string, file: string, catalogs: Map<string, WebFile>, current?: string): WebPage {
  const html = withHeader(dir, fs.readFileSync(path.join(dir, file), 'utf8'), current);
  const found = [...catalogs.keys()].map((name) => CATALOG_PATH.exec(name)).filter((m) => m !== null);
  // English first: express's negotiation answers with the first language when the header names none.
  const languages = [...new Set([FALLBACK, ...found.map((m) => m[1])])];
  const namespaces = pageNamespaces(html, [...new Set(found.map((m) => m[2]))]);
  const variants = new Map(
    languages.map((lng) => {
      const block = catalogBlock(catalogs, lng === FALLBACK ? [FALLBACK] : [FALLBACK, lng], namespaces);
      return [lng, htmlFile(html.replace('</head>', `  ${block}\n</head>`))] as const;
    }),
  );
  return {
    variant: (req) => {
      const best = req.acceptsLanguages(...languages);
      return variants.get(typeof best === 'string' ? best : FALLBACK) ?? variants.get(FALLBACK)!;
    },
  };
}
