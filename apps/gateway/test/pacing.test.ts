import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { startOrigin, type Origin } from '@reelay/testkit';
import { buildGateway, type TestGateway } from './helpers.js';

// Platform pacing end to end: a Streamable API fixture on 127.0.0.1 (PLATFORM_STREAMABLE_API)
// answers rate limits and slow answers; the gateway builds its own egress from the config, so
// PACING_CONCURRENCY_PER_PLATFORM and the platform metrics are the real ones.
let gw: TestGateway;
let origin: Origin;
let inFlight = 0;
let maxInFlight = 0;

const video = (origin: Origin, id: string) =>
  JSON.stringify({
    status: 2,
    title: `Video ${id}`,
    files: {
      mp4: { url: origin.url(`/video/${id}.mp4`), width: 640, height: 360, bitrate: 500000, duration: 3, size: 1000 },
    },
  });

/** Answers `status` with Retry-After `retryAfter` the first time, the video after. */
function limitedOnce(path: string, id: string, status: number, retryAfter?: string): void {
  let n = 0;
  origin.route(path, (_req, res) => {
    if (n++ === 0)
      return void res
        .writeHead(status, retryAfter ? { 'retry-after': retryAfter } : {})
        .end('{"error":"Too Many Requests"}');
    res.writeHead(200, { 'content-type': 'application/json' }).end(video(origin, id));
  });
}

beforeAll(async () => {
  origin = await startOrigin();
  limitedOnce('/videos/short1', 'short1', 429, '1');
  limitedOnce('/videos/long1', 'long1', 429, '60');
  limitedOnce('/videos/bare1', 'bare1', 503);
  for (let i = 0; i < 30; i++) {
    origin.route(`/videos/burst${i}`, (_req, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'application/json' }).end(video(origin, `burst${i}`));
      }, 100);
    });
  }
  gw = await buildGateway({
    env: { PLATFORM_STREAMABLE_API: origin.base, PACING_CONCURRENCY_PER_PLATFORM: '3' },
    // Not the helper's egress: the one the gateway builds from the config, with pacing and metrics.
    deps: { egress: undefined },
  });
});

afterAll(async () => {
  await gw.close();
  await origin.close();
});

const extract = (id: string) =>
  request(gw.app)
    .post('/api/v1/extract')
    .send({ url: `https://streamable.com/${id}` });

describe('platform pacing through the gateway', () => {
  test('a 429 with Retry-After: 1 is retried once and the extract succeeds', async () => {
    const res = await extract('short1');
    expect(res.status).toBe(200);
    expect(res.body.data.title).toBe('Video short1');
    expect(origin.hits.get('/videos/short1')).toBe(2);
  });

  test('a 429 with Retry-After: 60 answers 503 upstream_rate_limited with Retry-After: 60', async () => {
    const res = await extract('long1');
    expect([res.status, res.body.error.code, res.headers['retry-after']]).toEqual([503, 'upstream_rate_limited', '60']);
    expect(origin.hits.get('/videos/long1')).toBe(1);
  });

  test('a 503 without Retry-After answers 503 upstream_rate_limited without one', async () => {
    const res = await extract('bare1');
    expect([res.status, res.body.error.code, res.headers['retry-after']]).toEqual([
      503,
      'upstream_rate_limited',
      undefined,
    ]);
  });

  test('a burst of 30 extracts never has more than PACING_CONCURRENCY_PER_PLATFORM requests at the platform', async () => {
    maxInFlight = 0;
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => extract(`burst${i}`)));
    expect(answers.map((a) => a.status)).toEqual(Array(30).fill(200));
    expect(maxInFlight).toBe(3);
  });

  test('the metrics count platform requests by platform and outcome', async () => {
    const text = (await request(gw.app).get('/metrics').expect(200)).text;
    const count = (outcome: string) =>
      Number(
        new RegExp(`reelay_platform_requests_total\\{platform="streamable",outcome="${outcome}"[^}]*\\} (\\d+)`).exec(
          text,
        )?.[1],
      );
    expect(count('retried')).toBe(1);
    expect(count('rate_limited')).toBe(2);
    expect(count('ok')).toBe(30);
  });
});
