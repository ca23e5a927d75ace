import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { startOrigin, type Origin } from '@reelay/testkit';
import { Egress } from '../src/egress.js';
import { parseRetryAfter, type PlatformOutcome } from '../src/pacing.js';

let origin: Origin;
const outcomes: [string, PlatformOutcome][] = [];
const egress = new Egress({
  allowlist: ['127.0.0.1'],
  pacing: { concurrency: 4, onOutcome: (platform, outcome) => outcomes.push([platform, outcome]) },
});
/** Requests the slow route holds right now, and the most it ever held. */
let inFlight = 0;
let maxInFlight = 0;

/** A route that answers `statuses` in turn (then 200), each error with the given Retry-After. */
function busy(path: string, statuses: number[], retryAfter?: string): void {
  let n = 0;
  origin.route(path, (_req, res) => {
    const status = statuses[n++] ?? 200;
    if (status === 200) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    res.writeHead(status, retryAfter ? { 'retry-after': retryAfter } : {}).end('slow down');
  });
}

async function failure(promise: Promise<unknown>): Promise<ReelayError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ReelayError);
    return err as ReelayError;
  }
  throw new Error('expected the request to fail');
}

beforeAll(async () => {
  origin = await startOrigin();
  busy('/short', [429], '1');
  busy('/long', [429], '60');
  busy('/bare', [503]);
  busy('/twice', [429, 429], '1');
  busy('/post', [429], '1');
  busy('/plain', [429], '1');
  // Routes that always answer the status (busy() answers 200 after its list).
  const always = (path: string, status: number, retryAfter?: string) => busy(path, [status, status], retryAfter);
  always('/plain-bare', 429);
  always('/plain-503', 503, '120');
  always('/plain-503-bare', 503);
  always('/plain-forever', 429, '999999999');
  always('/plain-date', 503, new Date(Date.now() + 90_000).toUTCString());
  origin.route('/slow', (_req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    setTimeout(() => {
      inFlight--;
      res.writeHead(200, { 'content-type': 'text/plain' }).end('done');
    }, 100);
  });
});

afterAll(() => origin.close());

describe('platform pacing', () => {
  test('a 429 with Retry-After: 1 is asked again once after it, and the second answer is the result', async () => {
    const started = Date.now();
    const res = await egress.fetchText(origin.url('/short'), { platform: 'p-short' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('{"ok":true}');
    expect(origin.hits.get('/short')).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950); // it waited for the Retry-After
    expect(outcomes).toContainEqual(['p-short', 'retried']);
  });

  test('a 429 with Retry-After: 60 is not waited for: 503 upstream_rate_limited passes the 60 on', async () => {
    const err = await failure(egress.fetchText(origin.url('/long'), { platform: 'p-long', allowErrorStatus: true }));
    expect([err.code, err.status, err.headers['Retry-After']]).toEqual(['upstream_rate_limited', 503, '60']);
    expect(err.message).toMatch(/p-long is rate limiting requests \(429\)/);
    expect(origin.hits.get('/long')).toBe(1);
    expect(outcomes).toContainEqual(['p-long', 'rate_limited']);
  });

  test('a 503 without Retry-After is upstream_rate_limited at once, with no Retry-After of its own', async () => {
    const err = await failure(egress.fetchText(origin.url('/bare'), { platform: 'p-bare' }));
    expect([err.code, err.headers['Retry-After']]).toEqual(['upstream_rate_limited', undefined]);
    expect(origin.hits.get('/bare')).toBe(1);
  });

  test('only one retry: a platform that is still limiting after it gives upstream_rate_limited', async () => {
    const err = await failure(egress.fetchText(origin.url('/twice'), { platform: 'p-twice' }));
    expect([err.code, err.headers['Retry-After']]).toEqual(['upstream_rate_limited', '1']);
    expect(origin.hits.get('/twice')).toBe(2);
  });

  test('a POST is not repeated, whatever the Retry-After', async () => {
    const err = await failure(
      egress.fetchText(origin.url('/post'), { platform: 'p-post', method: 'POST', body: '{}' }),
    );
    expect(err.code).toBe('upstream_rate_limited');
    expect(origin.hits.get('/post')).toBe(1);
  });

  test('a request that names no platform is not paced, yet its 429 is upstream_rate_limited too, Retry-After passed on', async () => {
    const err = await failure(egress.fetchText(origin.url('/plain')));
    expect([err.code, err.message, err.headers]).toEqual([
      'upstream_rate_limited',
      'The origin is rate limiting requests (429) for 1 s; try again later.',
      { 'Retry-After': '1' },
    ]);
    expect(origin.hits.get('/plain')).toBe(1);
  });

  // Any origin (a page, a manifest, a media file): 429, or 503 with a Retry-After, is a rate limit;
  // the Retry-After is passed on, at most an hour; a 503 without one is an outage.
  test.each([
    ['/plain-bare', 'upstream_rate_limited', {}],
    ['/plain-503', 'upstream_rate_limited', { 'Retry-After': '120' }],
    ['/plain-forever', 'upstream_rate_limited', { 'Retry-After': '3600' }],
    ['/plain-date', 'upstream_rate_limited', { 'Retry-After': expect.stringMatching(/^[6-9][0-9]$/) }],
    ['/plain-503-bare', 'upstream_error', {}],
  ])('without a platform, %s is %s with Retry-After %j', async (path, code, headers) => {
    const err = await failure(egress.fetchText(origin.url(path)));
    expect([err.code, err.headers]).toEqual([code, headers]);
    // open() (streams) tells the same from the status and headers.
    const opened = await failure(egress.open(origin.url(path)));
    expect(opened.code).toBe(code);
  });

  test('a burst of 30 requests to one platform never has more than its 4 slots in flight at the origin', async () => {
    maxInFlight = 0;
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => egress.fetchText(origin.url('/slow'), { platform: 'p-slow' })),
    );
    expect(answers.every((a) => a.text === 'done')).toBe(true);
    expect(maxInFlight).toBe(4); // reached, never passed
    expect(egress.pacer.usage('p-slow')).toEqual({ running: 0, queued: 0 });
  });

  test('without a platform the same burst is not held to 4 (the cap is the pacing, not the host lanes)', async () => {
    maxInFlight = 0;
    await Promise.all(Array.from({ length: 30 }, () => egress.fetchText(origin.url('/slow'))));
    expect(maxInFlight).toBeGreaterThan(4);
  });

  test('a caller that gives up while waiting for a slot leaves the queue', async () => {
    const held = Array.from({ length: 4 }, () => egress.fetchText(origin.url('/slow'), { platform: 'p-leave' }));
    const abort = new AbortController();
    const waiting = egress.fetchText(origin.url('/slow'), { platform: 'p-leave', signal: abort.signal });
    expect(egress.pacer.usage('p-leave')).toEqual({ running: 4, queued: 1 });
    abort.abort();
    await expect(waiting).rejects.toBeInstanceOf(ReelayError);
    expect(egress.pacer.usage('p-leave').queued).toBe(0);
    await Promise.all(held);
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  test.each([
    ['1', 1],
    ['60', 60],
    [' 0 ', 0],
    ['Thu, 01 Jan 2026 00:00:30 GMT', 30],
    ['Wed, 31 Dec 2025 23:00:00 GMT', 0],
    ['soon', undefined],
    ['-5', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%j reads as %j seconds', (value, seconds) => {
    expect(parseRetryAfter(value, now)).toBe(seconds);
  });
});
