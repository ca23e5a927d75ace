// Rate limiting looks the same from any origin, not only a platform's API: a page or a media file
// whose origin answers 429, or 503 with a Retry-After, is 503 upstream_rate_limited with the
// origin's Retry-After (at most an hour) on extract and on a direct stream; a 503 without one is an
// outage, 502 upstream_error. Origins on 127.0.0.1; the gateway's own egress from its config.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { startOrigin, testMedia, serveFile, type Origin } from '@reelay/testkit';
import { buildGateway, type TestGateway } from './helpers.js';

let gw: TestGateway;
let origin: Origin;
/** What /media/limited.mp4 answers next: the file, or a rate limit. */
let mediaLimited = false;

function answers(path: string, status: number, retryAfter?: string): void {
  origin.route(path, (_req, res) => {
    res
      .writeHead(status, { 'content-type': 'text/html', ...(retryAfter ? { 'retry-after': retryAfter } : {}) })
      .end('<html><body>slow down</body></html>');
  });
}

beforeAll(async () => {
  const media = await testMedia();
  origin = await startOrigin();
  answers('/page/429', 429, '30');
  answers('/page/429-bare', 429);
  answers('/page/503', 503, '120');
  answers('/page/503-bare', 503);
  answers('/page/429-a-year', 429, '31536000');
  answers('/page/503-garbled', 503, 'soon');
  origin.route('/media/limited.mp4', (req, res) => {
    if (mediaLimited) return void res.writeHead(429, { 'retry-after': '45' }).end('Too Many Requests');
    serveFile(req, res, media.muxedMp4, 'video/mp4');
  });
  gw = await buildGateway({ deps: { egress: undefined } });
});

afterAll(async () => {
  await gw.close();
  await origin.close();
});

describe('extract of a page whose origin limits requests', () => {
  test.each([
    ['/page/429', 503, 'upstream_rate_limited', '30'],
    ['/page/429-bare', 503, 'upstream_rate_limited', undefined],
    ['/page/503', 503, 'upstream_rate_limited', '120'],
    ['/page/429-a-year', 503, 'upstream_rate_limited', '3600'],
    ['/page/503-bare', 502, 'upstream_error', undefined],
    ['/page/503-garbled', 502, 'upstream_error', undefined],
  ])('%s answers %d %s with Retry-After %s', async (path, status, code, retryAfter) => {
    const res = await request(gw.app)
      .post('/api/v1/extract')
      .set('cache-control', 'no-cache')
      .send({ url: origin.url(path) });
    expect([res.status, res.body.success, res.body.error?.code, res.headers['retry-after']]).toEqual([
      status,
      false,
      code,
      retryAfter,
    ]);
    expect(typeof res.body.error.message).toBe('string');
  });
});

describe('a direct stream whose origin starts limiting after the extract', () => {
  test("the download answers 503 upstream_rate_limited with the origin's Retry-After", async () => {
    const url = origin.url('/media/limited.mp4');
    mediaLimited = false;
    const extracted = await request(gw.app).post('/api/v1/extract').send({ url }).expect(200);
    expect(extracted.body.data.media[0].sources[0].url).toBe(url);
    mediaLimited = true;
    const res = await request(gw.app).post('/api/v1/download').send({ url });
    expect([res.status, res.body.error?.code, res.headers['retry-after']]).toEqual([
      503,
      'upstream_rate_limited',
      '45',
    ]);
    expect(res.body.error.message).toBe('The origin is rate limiting requests (429) for 45 s; try again later.');
  });
});
