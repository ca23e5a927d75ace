// The bytes Range parts hold (proxy-ranges.ts): a real throttled origin on 127.0.0.1 and a client
// that stops reading for a while, as ffmpeg does when it waits on its other input.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { serveFile, startOrigin, type Origin } from '@reelay/testkit';
import { Egress } from '../src/egress.js';
import { GuardedProxy } from '../src/proxy.js';
import { RANGE_CHUNK_BYTES } from '../src/proxy-ranges.js';

const CONCURRENCY = 4;
const egress = new Egress({ allowlist: ['127.0.0.1'], responseTimeoutMs: 5_000, idleTimeoutMs: 5_000 });
let dir: string;
let file: string;
let origin: Origin;
let proxy: GuardedProxy;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-ranges-bound-'));
  file = path.join(dir, 'big.bin');
  fs.writeFileSync(file, randomBytes(12 * 1024 * 1024));
  origin = await startOrigin();
  // 8 MiB/s a connection: slow enough to be split, the whole file ~0.4 s over 4.
  origin.route('/big.bin', (req, res) =>
    serveFile(req, res, file, 'application/octet-stream', { etag: '"v1"' }, 8 * 1024 * 1024),
  );
  proxy = await GuardedProxy.start({ egress, allowConnect: false, fetchConcurrency: CONCURRENCY });
});

afterAll(async () => {
  await proxy.close();
  await origin.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a client that stops reading holds the parts after its next one to (concurrency - 1) parts, and gets every byte in order', async () => {
  const session = proxy.openSession('bound', { maxBytes: 100 * 1024 * 1024 });
  const url = new URL(session.proxyUrl);
  const auth = `Basic ${Buffer.from(`${url.username}:${url.password}`).toString('base64')}`;
  const body = await new Promise<Buffer>((resolve, reject) => {
    const req = http.get(
      {
        host: '127.0.0.1',
        port: proxy.port,
        path: origin.url('/big.bin'),
        headers: { 'proxy-authorization': auth },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let paused = false;
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          // Once 2 MiB are in, stop reading for a second: the parts go on until their bound.
          if (!paused && chunks.reduce((n, x) => n + x.length, 0) > 2 * 1024 * 1024) {
            paused = true;
            res.pause();
            setTimeout(() => res.resume(), 1_000);
          }
        });
        res.once('end', () => resolve(Buffer.concat(chunks)));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
  });
  expect(body.equals(fs.readFileSync(file))).toBe(true);
  expect(session.rangeParts).toBeGreaterThan(CONCURRENCY);
  expect(session.rangeHeldPeak).toBeGreaterThan(0);
  expect(session.rangeHeldPeak).toBeLessThanOrEqual((CONCURRENCY - 1) * RANGE_CHUNK_BYTES);
  proxy.closeSession(session);
}, 30_000);

/** Reads the first 64 KiB of the big file through the proxy as `proxyUrl` says, then closes, as ffprobe does. */
async function readStart(proxyUrl: string): Promise<number> {
  const url = new URL(proxyUrl);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${url.password}`).toString('base64')}`;
  return new Promise<number>((resolve, reject) => {
    const req = http.get(
      {
        host: '127.0.0.1',
        port: proxy.port,
        path: origin.url('/big.bin'),
        headers: { 'proxy-authorization': auth },
        agent: false,
      },
      (res) => {
        let got = 0;
        res.on('data', (c: Buffer) => {
          got += c.length;
          if (got >= 64 * 1024) {
            res.destroy();
            resolve(got);
          }
        });
        res.once('error', reject);
      },
    );
    req.once('error', reject);
  });
}

test("a header read (the session's headerReadProxyUrl, what a duration probe uses) is never split into parts; the same read as a plain client is", async () => {
  const session = proxy.openSession('header-read', { maxBytes: 100 * 1024 * 1024 });
  expect(new URL(session.headerReadProxyUrl).password).toBe(new URL(session.proxyUrl).password);
  await readStart(session.headerReadProxyUrl);
  await new Promise((r) => setTimeout(r, 300)); // parts, had any started, would have been asked for by now
  expect(session.rangeParts).toBe(0);
  // The plain credentials on the same slow origin: the parts start beside the open answer (the cost
  // the mark avoids: megabytes fetched ahead for a client that has gone).
  await readStart(session.proxyUrl);
  await new Promise((r) => setTimeout(r, 300));
  expect(session.rangeParts).toBeGreaterThan(0);
  proxy.closeSession(session);
}, 30_000);

test("the header-read mark needs the session's password like any other request", async () => {
  const session = proxy.openSession('header-read-auth', { maxBytes: 100 * 1024 * 1024 });
  const url = new URL(session.headerReadProxyUrl);
  const status = await new Promise<number>((resolve, reject) => {
    const auth = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:wrong`).toString('base64')}`;
    http
      .get(
        {
          host: '127.0.0.1',
          port: proxy.port,
          path: origin.url('/big.bin'),
          headers: { 'proxy-authorization': auth },
          agent: false,
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      )
      .once('error', reject);
  });
  expect(status).toBe(407);
  proxy.closeSession(session);
});
