// Answers the proxy opens before its client asks (proxy-early.ts): a real origin on 127.0.0.1 that
// counts what it is asked, and the client's own absolute-form GETs through the proxy.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Egress } from '../src/egress.js';
import { GuardedProxy } from '../src/proxy.js';
import type { ProxySession } from '../src/proxy-session.js';

const FILE = randomBytes(300_000);
const egress = new Egress({ allowlist: ['127.0.0.1'], responseTimeoutMs: 2_000, idleTimeoutMs: 2_000 });
const FFMPEG_HEADERS = { range: 'bytes=0-', accept: '*/*', 'icy-metadata': '1' };
let origin: http.Server;
let base: string;
let proxy: GuardedProxy;
/** Requests the origin received (their Range), and how many of its answers were cut off before their end. */
const seen = { ranges: [] as (string | undefined)[], cut: 0 };

beforeAll(async () => {
  origin = http.createServer((req, res) => {
    seen.ranges.push(req.headers.range);
    res.once('close', () => {
      if (!res.writableFinished) seen.cut += 1;
    });
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const from = m ? Number(m[1]) : 0;
    const headers = { 'content-type': 'video/mp4', 'accept-ranges': 'bytes', 'content-length': String(FILE.length - from) };
    if (m) res.writeHead(206, { ...headers, 'content-range': `bytes ${from}-${FILE.length - 1}/${FILE.length}` });
    else res.writeHead(200, headers);
    // Slow enough that an answer nobody reads is still open when the test drops it.
    if (req.url === '/slow') return void res.write(FILE.subarray(from, from + 1000));
    res.end(FILE.subarray(from));
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  proxy = await GuardedProxy.start({ egress, allowConnect: false });
});

afterAll(async () => {
  await proxy.close();
  origin.closeAllConnections();
  await new Promise<void>((resolve) => origin.close(() => resolve()));
});

function reset(): void {
  seen.ranges = [];
  seen.cut = 0;
}

/** The client's GET through the proxy, as ffmpeg sends it. */
function get(session: ProxySession, target: string, headers: Record<string, string> = FFMPEG_HEADERS): Promise<{ status: number; body: Buffer }> {
  const url = new URL(session.proxyUrl);
  const auth = `Basic ${Buffer.from(`${url.username}:${url.password}`).toString('base64')}`;
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: proxy.port, path: target, headers: { ...headers, 'proxy-authorization': auth }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.once('error', reject);
    });
    req.once('error', reject);
  });
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe('answers opened early', () => {
  test('a file opened early answers the client GET from byte 0: the origin is asked once and the client gets every byte, counted', async () => {
    reset();
    const s = proxy.openSession('early-1', { maxBytes: 1_000_000, maxRequests: 4 });
    expect(proxy.openEarly(s, `${base}/file`, FFMPEG_HEADERS)).toBe(true);
    await until(() => seen.ranges.length === 1); // asked before the client came
    const answer = await get(s, `${base}/file`);
    expect(answer.status).toBe(206);
    expect(answer.body.equals(FILE)).toBe(true);
    expect(seen.ranges).toEqual(['bytes=0-']);
    expect([s.requests, s.bytes]).toEqual([1, FILE.length]);
    proxy.closeSession(s);
  });

  test('a request for the same file from the middle does not take it: it goes upstream as asked, and the early answer is cut off', async () => {
    reset();
    const s = proxy.openSession('early-2', { maxBytes: 1_000_000, maxRequests: 4 });
    proxy.openEarly(s, `${base}/slow`, FFMPEG_HEADERS);
    await until(() => seen.ranges.length === 1);
    const answer = await get(s, `${base}/file`, { range: 'bytes=1000-' }); // another file: the early one stays
    expect(answer.body.equals(FILE.subarray(1000))).toBe(true);
    expect(seen.cut).toBe(0);
    const slow = get(s, `${base}/slow`, { range: 'bytes=200000-' });
    await until(() => seen.cut === 1 && seen.ranges.length === 3);
    expect(seen.ranges).toEqual(['bytes=0-', 'bytes=1000-', 'bytes=200000-']);
    proxy.closeSession(s);
    await slow.catch(() => undefined);
  });

  test('other request headers than the early answer was opened with: the client request goes upstream with its own', async () => {
    reset();
    const s = proxy.openSession('early-3', { maxBytes: 1_000_000, maxRequests: 4, headerNames: ['referer'] });
    proxy.openEarly(s, `${base}/file`, { ...FFMPEG_HEADERS, referer: 'https://a.example/' });
    await until(() => seen.ranges.length === 1);
    const answer = await get(s, `${base}/file`, { ...FFMPEG_HEADERS, referer: 'https://b.example/' });
    expect(answer.body.equals(FILE)).toBe(true);
    expect(seen.ranges).toEqual(['bytes=0-', 'bytes=0-']);
    proxy.closeSession(s);
  });

  test('the session end cuts off what was opened early and never asked for', async () => {
    reset();
    const s = proxy.openSession('early-4', { maxBytes: 1_000_000 });
    proxy.openEarly(s, `${base}/slow`, FFMPEG_HEADERS);
    await until(() => seen.ranges.length === 1);
    proxy.closeSession(s);
    await until(() => seen.cut === 1);
    expect(s.bytes).toBe(0);
  });

  test('each file opened early spends one request of the session budget, and none is opened past it', async () => {
    reset();
    const s = proxy.openSession('early-5', { maxBytes: 1_000_000, maxRequests: 1 });
    expect(proxy.openEarly(s, `${base}/file`, FFMPEG_HEADERS)).toBe(true);
    expect(proxy.openEarly(s, `${base}/file`, FFMPEG_HEADERS)).toBe(false); // already open
    expect(proxy.openEarly(s, `${base}/slow`, FFMPEG_HEADERS)).toBe(false); // over the budget: refused, and the session cut off
    expect(s.failures.limit).toMatch(/more than 1 requests/);
    proxy.closeSession(s);
  });

  test('a file egress refuses is refused as the client request would be: the session records it as blocked', async () => {
    const s = proxy.openSession('early-6', { maxBytes: 1_000_000 });
    expect(proxy.openEarly(s, 'http://127.0.0.2:9/file', FFMPEG_HEADERS)).toBe(true);
    await until(() => s.failures.blocked !== undefined);
    expect(s.failures.blocked).toMatch(/127\.0\.0\.2/);
    expect(s.signal.aborted).toBe(true);
    proxy.closeSession(s);
  });

  test('a target the client could not name is not opened', () => {
    const s = proxy.openSession('early-7', { maxBytes: 1_000_000 });
    expect(proxy.openEarly(s, 'file:///etc/passwd', FFMPEG_HEADERS)).toBe(false);
    expect(proxy.openEarly(s, '/relative', FFMPEG_HEADERS)).toBe(false);
    expect(s.requests).toBe(0);
    proxy.closeSession(s);
  });
});
