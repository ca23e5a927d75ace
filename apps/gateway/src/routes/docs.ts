// GET /docs: the OpenAPI document rendered for people by Swagger UI (swagger-ui-dist, a dependency of
// the gateway: no CDN), under the web app's Content-Security-Policy. Swagger UI was chosen over
// Redoc and Scalar because its bundle runs under script-src/style-src 'self' (those two inject
// <style> elements, which would need 'unsafe-inline'). Internal routes: they stay out of the document.
import { createRequire } from 'node:module';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { ErrorEnvelopeSchema, ReelayError } from '@reelay/contracts';
import type { RouteSpec } from '../http/route.js';
import { webPage } from './web-page.js';
import { load, localeCatalogs, send, sendPage, WEB_DIR, type WebFile } from './web.js';

const SWAGGER_UI_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

export function docsRoutes(dir = WEB_DIR): RouteSpec[] {
  const page = webPage(dir, 'docs.html', localeCatalogs(dir), '/docs');
  const vendor = (file: string): WebFile => {
    const loaded = load(SWAGGER_UI_DIR, file);
    return { ...loaded, gzip: gzipSync(loaded.body) };
  };
  // The allow-list of files under /docs/: Swagger UI's bundle and styles, and the page's own script.
  const files = new Map<string, WebFile>([
    ['swagger-ui-bundle.js', vendor('swagger-ui-bundle.js')],
    ['swagger-ui.css', vendor('swagger-ui.css')],
    ['docs.js', load(dir, 'docs.js')],
    ['docs.css', load(dir, 'docs.css')],
  ]);
  return [
    {
      method: 'get',
      path: '/docs',
      tag: 'web',
      summary: 'The API reference, rendered from /api/openapi.json',
      internal: true,
      responses: {
        200: { description: 'HTML page', contentType: 'text/html' },
        304: { description: 'Not modified (If-None-Match matched)' },
      },
      handler: (req, res) => sendPage(req, res, page),
    },
    {
      method: 'get',
      path: '/docs/{file}',
      tag: 'web',
      summary: "A file of the API reference's renderer",
      internal: true,
      responses: {
        200: { description: 'CSS or JavaScript', contentType: ['text/css', 'text/javascript'] },
        304: { description: 'Not modified (If-None-Match matched)' },
        400: { description: 'invalid_request: malformed percent-encoding in the name', schema: ErrorEnvelopeSchema },
        404: { description: 'not_found: no such file', schema: ErrorEnvelopeSchema },
      },
      handler: (req, res) => {
        const file = files.get(String(req.params.file));
        if (!file) throw new ReelayError('not_found', `No file named ${String(req.params.file)}.`);
        send(req, res, file);
      },
    },
  ];
}
