import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startOrigin, type Origin } from '@reelay/testkit';
import { createLogger } from '@reelay/observability';
import { SourceRegistry } from '@reelay/sources';
import { ExtractCache } from '../src/services/extract-cache.js';
import { buildGateway, type TestGateway } from './helpers.js';

// Two gateway replicas, each with its own Redis client, on the run's one Redis: what one fetched the
// other answers from the cache, and a burst on both makes one upstream fetch.
let origin: Origin;
const replicas: { gw: TestGateway; server: http.Server; base: string }[] = [];
let uncached: TestGateway;
const MEDIA = randomBytes(4096);
const silent = createLogger({ name: 'extract-cache-test', level: 'silent' });
const now = () => Math.floor(Date.now() / 1000);

/** A page that takes 300 ms to answer (so a burst overlaps its fetch), with og:video at `media`. */
function slowPage(path: string, media: string): void {
  origin.route(path, (_req, res) => {
    setTimeout(() => {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<html><head><meta property="og:title" content="Cached"><meta property="og:video" content="${media}"><meta property="og:video:type" content="video/mp4"></head></html>`,
        );
    }, 300);
  });
}

const hits = (path: string) => origin.hits.get(path) ?? 0;

type Envelope = { success: boolean; data?: { extraction_id?: string }; error?: { code: string } };

/** Each answer, cached or not, records its sources under its own extraction: set that id apart. */
function splitExtraction(body: Envelope): { body: Envelope; extraction?: string } {
  if (!body.data) return { body };
  const { extraction_id, ...data } = body.data;
  return { body: { ...body, data }, extraction: extraction_id };
}

async function extract(
  replica: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; age: string | null; body: Envelope; extraction?: string }> {
  const res = await fetch(`${replicas[replica]!.base}/api/v1/extract`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ url: origin.url(path) }),
  });
  return { status: res.status, age: res.headers.get('age'), ...splitExtraction((await res.json()) as Envelope) };
}

beforeAll(async () => {
  origin = await startOrigin();
  origin.body('/clip.mp4', MEDIA, 'video/mp4');
  for (let i = 0; i < 2; i++) {
    const gw = await buildGateway({ env: { EXTRACT_CACHE_SECONDS: '60' } });
    const server = gw.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    replicas.push({ gw, server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  }
  uncached = await buildGateway({ env: { EXTRACT_CACHE_SECONDS: '0' } });
});

afterAll(async () => {
  for (const r of replicas) {
    r.server.closeAllConnections();
    await new Promise((resolve) => r.server.close(resolve));
    await r.gw.close();
  }
  await uncached.close();
  await origin.close();
});

describe('the extract cache across two replicas', () => {
  test('50 concurrent extracts of one new URL through both replicas make exactly one request to the page', async () => {
    slowPage('/burst', '/clip.mp4');
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => extract(i % 2, '/burst')));
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    expect(hits('/burst')).toBe(1);
    // Every replica answered the same result; only the request that fetched has no Age.
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
    expect(new Set(answers.map((a) => a.extraction)).size).toBe(50);
    expect(answers.filter((a) => a.age === null)).toHaveLength(1);
  });

  test('the same URL again within the TTL is answered without the origin, with an Age header that counts up', async () => {
    slowPage('/again', '/clip.mp4');
    const first = await extract(0, '/again');
    expect({ status: first.status, age: first.age }).toEqual({ status: 200, age: null });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = await extract(1, '/again');
    expect(second.status).toBe(200);
    expect(Number(second.age)).toBeGreaterThanOrEqual(1);
    expect(second.body).toEqual(first.body);
    expect(hits('/again')).toBe(1);
  });

  test("surface A's playground shares the cache: a URL extracted on one surface is answered on the other without the origin", async () => {
    slowPage('/shared', '/clip.mp4');
    const first = await extract(0, '/shared');
    const res = await fetch(`${replicas[1]!.base}/api/playground`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: origin.url('/shared') }),
    });
    expect({ status: res.status, age: res.headers.get('age') !== null, hits: hits('/shared') }).toEqual({
      status: 200,
      age: true,
      hits: 1,
    });
    expect(splitExtraction((await res.json()) as Envelope).body).toEqual(first.body);
  });

  test('Cache-Control: no-cache fetches afresh and refreshes the entry for everyone', async () => {
    slowPage('/fresh', '/clip.mp4');
    await extract(0, '/fresh');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const fresh = await extract(1, '/fresh', { 'cache-control': 'no-cache' });
    expect({ status: fresh.status, age: fresh.age, hits: hits('/fresh') }).toEqual({ status: 200, age: null, hits: 2 });
    // The refreshed entry is younger than the first one would be by now.
    const after = await extract(0, '/fresh');
    expect({ age: after.age, hits: hits('/fresh') }).toEqual({ age: '0', hits: 2 });
  });

  test('with EXTRACT_CACHE_SECONDS=0 every extract reaches the origin and none has an Age', async () => {
    slowPage('/off', '/clip.mp4');
    const server = uncached.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const ask = () =>
        fetch(`${base}/api/v1/extract`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url: origin.url('/off') }),
        });
      const [a, b] = [await ask(), await ask()];
      expect([a.status, b.status, a.headers.get('age'), b.headers.get('age')]).toEqual([200, 200, null, null]);
      expect(hits('/off')).toBe(2);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test("a cached answer records its sources again, so they stay downloadable after the registry's entry lapsed", async () => {
    slowPage('/sources', '/clip.mp4?v=sources');
    origin.body('/clip.mp4?v=sources', MEDIA, 'video/mp4');
    await extract(0, '/sources');
    const registry = new SourceRegistry(replicas[0]!.gw.redis, 60);
    const media = origin.url('/clip.mp4?v=sources');
    await replicas[0]!.gw.redis.del(registry.key(media)); // as if SOURCE_TTL_SECONDS had run out
    const cached = await extract(1, '/sources');
    expect({ age: cached.age !== null, hits: hits('/sources') }).toEqual({ age: true, hits: 1 });
    const download = await fetch(`${replicas[1]!.base}/api/v1/download`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: media }),
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(MEDIA)).toBe(true);
  });

  test('an error is shared with the requests waiting for that fetch, but never cached', async () => {
    origin.route(
      '/gone',
      (_req, res) => void setTimeout(() => res.writeHead(404, { 'content-type': 'text/plain' }).end('gone'), 300),
    );
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => extract(i % 2, '/gone')));
    expect(answers.map((a) => [a.status, a.body.error?.code])).toEqual(Array(10).fill([404, 'content_not_found']));
    expect(hits('/gone')).toBe(1);
    expect((await extract(0, '/gone')).status).toBe(404);
    expect(hits('/gone')).toBe(2);
  });

  test('a lock left by a replica that died is taken over once it lapses, and the URL is fetched once', async () => {
    slowPage('/orphan', '/clip.mp4');
    const cache = new ExtractCache(replicas[0]!.gw.redis, { ttlSeconds: 60, waitMs: 10_000, logger: silent });
    // A holder that took the lock and died: nobody renews it, it lapses after 1.5 s.
    await replicas[0]!.gw.redis.set(cache.keys(origin.url('/orphan')).lock, 'dead-replica', 'PX', 1500);
    const pending = extract(1, '/orphan');
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(hits('/orphan')).toBe(0); // still waiting for the dead holder
    const answer = await pending;
    expect({ status: answer.status, hits: hits('/orphan') }).toEqual({ status: 200, hits: 1 });
    await cache.close();
  }, 15_000);

  test('an entry lives no longer than its media URLs: cut to their expiry less 30 s, or not kept at all', async () => {
    const redis = replicas[0]!.gw.redis;
    const keys = new ExtractCache(redis, { ttlSeconds: 60, waitMs: 1000, logger: silent });
    slowPage('/expiring', `/clip.mp4?expires=${now() + 40}`);
    await extract(0, '/expiring');
    const ttl = await redis.pttl(keys.keys(origin.url('/expiring')).result);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(10_000);
    slowPage('/expired', `/clip.mp4?expires=${now() + 20}`);
    await extract(0, '/expired');
    expect(await redis.exists(keys.keys(origin.url('/expired')).result)).toBe(0);
    expect((await extract(1, '/expired')).age).toBeNull();
    expect(hits('/expired')).toBe(2);
    await keys.close();
  });
});

describe('single flight, one replica seen from another', () => {
  const extraction = (title: string) =>
    ({
      result: { url: 'x', platform: 'generic', extract_profile: 'direct_file', title, media: [] },
      records: [],
    }) as never;

  test('a waiter whose bound runs out while the holder is alive fetches by itself', async () => {
    const redis = replicas[0]!.gw.redis;
    const cache = new ExtractCache(redis, { ttlSeconds: 60, waitMs: 600, logger: silent, recheckMs: 100 });
    const url = `http://127.0.0.1/${randomBytes(4).toString('hex')}`;
    // A live holder: it keeps renewing its lock and never finishes within the waiter's bound.
    let release!: () => void;
    const holder = cache.serve(url, () => new Promise((resolve) => (release = () => resolve(extraction('slow')))));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const waiter = await cache.serve(url, async () => extraction('own'));
    expect({ outcome: waiter.outcome, title: waiter.extraction.result.title }).toEqual({
      outcome: 'unshared',
      title: 'own',
    });
    release();
    expect((await holder).outcome).toBe('miss');
    await cache.close();
  });

  test("when the holder's client leaves, a waiter takes the lock over and fetches instead", async () => {
    const redis = replicas[1]!.gw.redis;
    const cache = new ExtractCache(redis, { ttlSeconds: 60, waitMs: 5000, logger: silent });
    const url = `http://127.0.0.1/${randomBytes(4).toString('hex')}`;
    const left = new AbortController();
    let fail!: () => void;
    const holder = cache.serve(
      url,
      () => new Promise((_, reject) => (fail = () => reject(new Error('client closed the connection')))),
      { signal: left.signal },
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    let fetched = 0;
    const waiter = cache.serve(url, async () => (fetched++, extraction('taken over')));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fetched).toBe(0);
    left.abort();
    fail();
    await expect(holder).rejects.toThrow('client closed');
    expect(await waiter).toMatchObject({ outcome: 'miss', extraction: { result: { title: 'taken over' } } });
    expect(fetched).toBe(1);
    await cache.close();
  });
});

test('a cached entry that does not read is no answer: the extract asks the origin', async () => {
  slowPage('/damaged', '/clip.mp4');
  const cache = new ExtractCache(replicas[0]!.gw.redis, { ttlSeconds: 60, waitMs: 1000, logger: silent });
  await replicas[0]!.gw.redis.set(cache.keys(origin.url('/damaged')).result, '{"not":"an entry"}', 'PX', 60_000);
  const answer = await extract(0, '/damaged');
  expect({ status: answer.status, age: answer.age, hits: hits('/damaged') }).toEqual({
    status: 200,
    age: null,
    hits: 1,
  });
  await cache.close();
});

test("HTTP/1.0's Pragma: no-cache asks afresh too; other Cache-Control directives do not", async () => {
  slowPage('/pragma', '/clip.mp4');
  await extract(0, '/pragma');
  expect((await extract(1, '/pragma', { 'cache-control': 'max-stale=60' })).age).not.toBeNull();
  expect(hits('/pragma')).toBe(1);
  expect((await extract(1, '/pragma', { pragma: 'no-cache' })).age).toBeNull();
  expect(hits('/pragma')).toBe(2);
});
