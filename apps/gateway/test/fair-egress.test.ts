import { setMaxListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { Egress } from '@reelay/egress';
import { startOrigin, type Origin } from '@reelay/testkit';
import { buildGateway, type TestGateway } from './helpers.js';

const PAGE =
  '<html><head><meta property="og:title" content="Still fast"><meta property="og:video" content="/clip.mp4"></head></html>';

let origin: Origin;

beforeAll(async () => {
  origin = await startOrigin();
  origin.body('/page', PAGE, 'text/html');
  origin.route('/stall', () => {
    /* never answers: a slow page of the same host */
  });
});

afterAll(() => origin.close());

/** Opens n requests the origin never answers; resolves once the origin has seen `seen` of them. */
async function stall(egress: Egress, n: number, seen: number, signal: AbortSignal): Promise<Promise<unknown>[]> {
  const pending = Array.from({ length: n }, (_, i) =>
    egress.open(origin.url(`/stall?${i}`), { signal }).then(
      () => 'answered',
      () => 'failed',
    ),
  );
  const deadline = Date.now() + 15_000;
  const hits = () => [...origin.hits].filter(([path]) => path.startsWith('/stall?')).length;
  while (hits() < seen && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(hits()).toBeGreaterThanOrEqual(seen);
  return pending;
}

describe('fair egress per origin host', () => {
  let gw: TestGateway;
  afterAll(() => gw?.close());

  test('an extract of another page answers while 300 requests to the same host are stalled', async () => {
    origin.hits.clear();
    const egress = new Egress({
      allowlist: ['127.0.0.1'],
      responseTimeoutMs: 30_000,
      idleTimeoutMs: 30_000,
      hostLimits: { stallAfterMs: 100 },
    });
    gw = await buildGateway({ deps: { egress } });
    const stop = new AbortController();
    setMaxListeners(0, stop.signal); // one signal cancels every stalled request
    try {
      const stalled = await stall(egress, 300, 300, stop.signal);
      const settled: string[] = [];
      for (const p of stalled) void p.then((how) => settled.push(String(how)));
      const started = Date.now();
      const res = await request(gw.app)
        .post('/api/v1/extract')
        .send({ url: origin.url('/page') });
      expect(res.status).toBe(200);
      expect(res.body.data.title).toBe('Still fast');
      // Not queued behind them: every stalled request is still waiting, and the extract took far
      // less than the origin's 30 s response timeout it would have waited for before.
      expect(settled).toEqual([]);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(egress.hosts.usage(`127.0.0.1:${origin.port}`).queued).toBe(0);
    } finally {
      stop.abort();
    }
  });

  test('when a host holds every slot, a new extract waits at most the queue timeout and answers upstream_timeout', async () => {
    const egress = new Egress({
      allowlist: ['127.0.0.1'],
      responseTimeoutMs: 30_000,
      hostLimits: { fresh: 2, held: 3, stallAfterMs: 50, queueTimeoutMs: 300 },
    });
    const small = await buildGateway({ deps: { egress } });
    const stop = new AbortController();
    setMaxListeners(0, stop.signal); // one signal cancels every stalled request
    try {
      origin.hits.clear();
      await stall(egress, 5, 5, stop.signal);
      const res = await request(small.app)
        .post('/api/v1/extract')
        .send({ url: origin.url('/page') });
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 504, code: 'upstream_timeout' });
      expect(res.body.error.message).toMatch(/Too many requests to 127\.0\.0\.1:\d+ are in progress/);
      expect(origin.hits.get('/page') ?? 0).toBe(0); // refused before it was sent
    } finally {
      stop.abort();
      await small.close();
    }
  });
});
