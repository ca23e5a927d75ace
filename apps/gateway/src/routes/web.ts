// The web app: two hand-written pages and their static assets (no build step, no CDN), read once from
// apps/gateway/web/ and served with a strict CSP. Internal routes: they stay out of the OpenAPI document.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Request, Response } from 'express';
import { ErrorEnvelopeSchema, ReelayError } from '@reelay/contracts';
import type { RouteSpec } from '../http/route.js';

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
};

export interface WebFile {
  body: Buffer;
  type: string;
  etag: string;
  /** The body gzipped once at start-up, for large files (the API docs' renderer). */
  gzip?: Buffer;
}

export function load(dir: string, file: string): WebFile {
  const body = fs.readFileSync(path.join(dir, file));
  return { body, type: TYPES[path.extname(file)], etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

export function send(req: Request, res: Response, file: WebFile): void {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // Unversioned file names: the browser revalidates each time and gets a cheap 304.
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('ETag', file.etag);
  if (file.gzip) res.setHeader('Vary', 'Accept-Encoding');
  if (req.headers['if-none-match'] === file.etag) return void res.status(304).end();
  if (file.gzip && req.acceptsEncodings('gzip', 'identity') === 'gzip') {
    res.setHeader('Content-Encoding', 'gzip');
    return void res.type(file.type).send(file.gzip);
  }
  res.type(file.type).send(file.body);
}

export function webRoutes(dir = WEB_DIR): RouteSpec[] {
  const read = (file: string) => load(dir, file);
  // Only files with a known type are assets; the map is the allow-list, so no path reaches the disk.
  const assets = new Map(
    fs
      .readdirSync(dir)
      .filter((name) => !name.endsWith('.html') && TYPES[path.extname(name)] !== undefined)
      .map((name) => [name, read(name)] as const),
  );
  const page = (routePath: string, file: string, summary: string): RouteSpec => {
    const content = read(file);
    return {
      method: 'get',
      path: routePath,
      tag: 'web',
      summary,
      internal: true,
      responses: { 200: { description: 'HTML page', contentType: 'text/html' }, 304: { description: 'Not modified (If-None-Match matched)' } },
      handler: (req, res) => send(req, res, content),
    };
  };
  return [
    page('/', 'index.html', 'The playground'),
    page('/settings/api-keys', 'settings.html', 'API key settings'),
    {
      method: 'get',
      path: '/assets/{file}',
      tag: 'web',
      summary: 'A static asset of the web app',
      internal: true,
      responses: {
        200: { description: 'CSS, JavaScript or SVG', contentType: ['text/css', 'text/javascript', 'image/svg+xml'] },
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
