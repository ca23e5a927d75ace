// The local HTTP origin tests fetch from: routes registered per test (pages, manifests, media files
// with Range support, redirects, errors, stalls), listening on 127.0.0.1 only.
import fs from 'node:fs';
import http from 'node:http';
import { Transform } from 'node:stream';
import type net from 'node:net';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface Origin {
  /** http://127.0.0.1:PORT */
  base: string;
  port: number;
  url(path: string): string;
  route(path: string, handler: Handler): void;
  /** Serves a string or buffer with a content type (and optional extra headers). */
  body(path: string, body: string | Buffer, contentType: string, headers?: Record<string, string>): void;
  /** Serves a file from disk with Range support. */
  file(path: string, file: string, contentType: string, headers?: Record<string, string>): void;
  redirect(path: string, location: string, status?: number): void;
  status(path: string, status: number, body?: string): void;
  /** Requests seen, by path (query included). */
  hits: Map<string, number>;
  /** Emitted when a client closes before the response finished. */
  aborted: string[];
  close(): Promise<void>;
}

export async function startOrigin(host = '127.0.0.1'): Promise<Origin> {
  const routes = new Map<string, Handler>();
  const hits = new Map<string, number>();
  const aborted: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const pathWithQuery = req.url ?? '/';
    hits.set(pathWithQuery, (hits.get(pathWithQuery) ?? 0) + 1);
    res.on('close', () => {
      if (!res.writableFinished) aborted.push(pathWithQuery);
    });
    const handler = routes.get(pathWithQuery) ?? routes.get(pathWithQuery.split('?')[0]);
    if (!handler) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    handler(req, res);
  });
  server.keepAliveTimeout = 5_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as net.AddressInfo).port;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  const origin: Origin = {
    base,
    port,
    hits,
    aborted,
    url: (path) => base + path,
    route: (path, handler) => void routes.set(path, handler),
    body: (path, body, contentType, headers = {}) =>
      routes.set(path, (req, res) => {
        const buf = typeof body === 'string' ? Buffer.from(body) : body;
        res.writeHead(200, { 'content-type': contentType, 'content-length': buf.length, ...headers });
        res.end(req.method === 'HEAD' ? undefined : buf);
      }),
    file: (path, file, contentType, headers = {}) =>
      routes.set(path, (req, res) => serveFile(req, res, file, contentType, headers)),
    redirect: (path, location, status = 302) =>
      routes.set(path, (_req, res) => {
        res.writeHead(status, { location }).end();
      }),
    status: (path, status, body = '') =>
      routes.set(path, (_req, res) => {
        res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  return origin;
}

/** Serves a file with byte ranges (a single range; 416 when unsatisfiable). */
export function serveFile(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  file: string,
  contentType: string,
  headers: Record<string, string> = {},
  bytesPerSecond?: number,
): void {
  const size = fs.statSync(file).size;
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  let start = 0;
  let end = size - 1;
  let status = 200;
  if (range && (range[1] || range[2])) {
    if (range[1]) {
      start = Number(range[1]);
      end = range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
    } else {
      start = Math.max(0, size - Number(range[2]));
    }
    if (start > end || start >= size) {
      res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
      return;
    }
    status = 206;
  }
  const head: Record<string, string | number> = {
    'content-type': contentType,
    'content-length': end - start + 1,
    'accept-ranges': 'bytes',
    ...headers,
  };
  if (status === 206) head['content-range'] = `bytes ${start}-${end}/${size}`;
  res.writeHead(status, head);
  if (req.method === 'HEAD') return void res.end();
  const body = fs.createReadStream(file, { start, end });
  if (bytesPerSecond) body.pipe(throttle(bytesPerSecond)).pipe(res);
  else body.pipe(res);
  res.once('close', () => body.destroy());
}

/**
 * A per-connection speed limit, as CDNs give each connection: `bytesPerSecond`, sent in slices of
 * 20 ms worth, each when the connection is free again. For tests of what reelay does with an origin
 * that is not loopback-fast.
 */
export function throttle(bytesPerSecond: number): Transform {
  const slice = Math.max(1, Math.round(bytesPerSecond / 50));
  let free = performance.now();
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const pieces: Buffer[] = [];
      for (let at = 0; at < chunk.length; at += slice) pieces.push(chunk.subarray(at, at + slice));
      const next = () => {
        const piece = pieces.shift();
        if (!piece) return done();
        const now = performance.now();
        const at = Math.max(now, free);
        free = at + (piece.length / bytesPerSecond) * 1000;
        setTimeout(() => {
          this.push(piece);
          next();
        }, at - now);
      };
      next();
    },
  });
}
