import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import express from 'express';
import { createLogger } from '@reelay/observability';
import { accessLog } from '../src/http/access-log.js';
import { requestId } from '../src/http/request-id.js';

const lines: Array<Record<string, unknown>> = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, cb) {
    for (const line of chunk.toString('utf8').split('\n'))
      if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
    cb();
  },
});
let server: http.Server;
let base: string;

beforeAll(async () => {
  const app = express();
  app.use(requestId);
  app.use(accessLog(createLogger({ name: 'access-test', destination: sink })));
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', (_req, res) => void res.status(503).json({ status: 'not_ready' }));
  app.get('/ok', (_req, res) => void res.json({ ok: true }));
  app.get('/broken', (_req, res) => void res.status(502).json({ ok: false }));
  app.get('/crash', (_req, res) => void res.status(500).json({ ok: false }));
  app.get('/slow', (_req, res) => void setTimeout(() => res.json({ late: true }), 500));
  app.delete('/jobs/:id', (_req, res) => void res.status(204).end());
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const logged = async (path: string) => {
  await new Promise((r) => setTimeout(r, 20));
  return lines.filter((l) => (l.req as { url?: string } | undefined)?.url === path);
};

test('one line per request: id, method, URL, status and time, at info', async () => {
  const res = await fetch(`${base}/ok?x=1`);
  const [line, ...more] = await logged('/ok?x=1');
  expect(more).toHaveLength(0);
  expect(line).toMatchObject({
    level: 30,
    msg: 'request completed',
    app: 'access-test',
    req: { id: res.headers.get('x-request-id'), method: 'GET', url: '/ok?x=1' },
    res: { status: 200 },
  });
  expect(typeof line.responseTime).toBe('number');
});

test('a 5xx is logged at error', async () => {
  await fetch(`${base}/crash`);
  await fetch(`${base}/broken`);
  expect(await logged('/crash')).toMatchObject([{ level: 50, msg: 'request failed', res: { status: 500 } }]);
  expect(await logged('/broken')).toMatchObject([{ level: 50, res: { status: 502 } }]);
});

test('probes and scrapes are not logged', async () => {
  await fetch(`${base}/healthz`);
  await fetch(`${base}/readyz`);
  expect(await logged('/healthz')).toHaveLength(0);
  expect(await logged('/readyz')).toHaveLength(0);
});

test('a client that leaves before the answer is logged once, as aborted', async () => {
  const controller = new AbortController();
  const pending = fetch(`${base}/slow`, { signal: controller.signal }).catch(() => undefined);
  setTimeout(() => controller.abort(), 100);
  await pending;
  await new Promise((r) => setTimeout(r, 600));
  expect(await logged('/slow')).toMatchObject([{ msg: 'request aborted' }]);
});

describe('secrets in query strings', () => {
  test('code, state and token values are written as [redacted]', async () => {
    const { loggedUrl } = await import('../src/http/access-log.js');
    expect(loggedUrl('/account/oauth/github/callback?code=abc&state=def&x=1')).toBe(
      '/account/oauth/github/callback?code=[redacted]&state=[redacted]&x=1',
    );
    expect(loggedUrl('/p?Token=t#f')).toBe('/p?Token=[redacted]#f');
    expect(loggedUrl('/p?codec=h264')).toBe('/p?codec=h264');
  });
});

describe('capabilities in paths', () => {
  const id = 'kq3T9vQ2rS8uX1yZ4aB6cD';

  test('a route is logged as its template, never with the id it was called with', async () => {
    await fetch(`${base}/jobs/${id}?cursor=2`, { method: 'DELETE' });
    expect(await logged('/jobs/:id?cursor=2')).toMatchObject([{ req: { method: 'DELETE' }, res: { status: 204 } }]);
    expect(JSON.stringify(lines)).not.toContain(id);
  });

  test('a path no route takes is logged with each id- or token-shaped segment replaced', async () => {
    await fetch(`${base}/jobs/${id}/nothing/feeds/${id}x.xml`);
    expect(await logged('/jobs/:redacted/nothing/feeds/:redacted')).toMatchObject([{ res: { status: 404 } }]);
    expect(JSON.stringify(lines)).not.toContain(id);
  });
});
