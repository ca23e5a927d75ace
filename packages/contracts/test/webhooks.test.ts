import { expect, test } from '@jest/globals';
import { DownloadRequestSchema, WEBHOOK_ATTEMPTS, webhookKey, webhookRetryDelay } from '../src/index.js';

test('the retry schedule meets DESIGN.md: first retry within 30 s, at least 6 attempts over at least an hour', () => {
  const waits = Array.from({ length: WEBHOOK_ATTEMPTS - 1 }, (_, i) => webhookRetryDelay(i + 1));
  expect(waits).toEqual([15_000, 60_000, 240_000, 960_000, 3_840_000, 7_200_000, 7_200_000]);
  expect(waits[0]).toBeLessThanOrEqual(30_000);
  expect(WEBHOOK_ATTEMPTS).toBeGreaterThanOrEqual(6);
  const span = waits.reduce((a, b) => a + b, 0);
  expect(span).toBeGreaterThanOrEqual(3600_000);
  expect(span).toBe(19_515_000); // docs/api.md's "about 5 h 25 min"
  // Exponential: each wait at least the one before.
  for (let i = 1; i < waits.length; i++) expect(waits[i]).toBeGreaterThanOrEqual(waits[i - 1]);
});

test('a webhook secret is whsec_ and the base64 of 24 to 64 bytes', () => {
  const of = (n: number) => `whsec_${Buffer.alloc(n, 7).toString('base64')}`;
  expect(webhookKey(of(24))).toEqual(Buffer.alloc(24, 7));
  expect(webhookKey(of(64))?.length).toBe(64);
  for (const bad of [of(23), of(65), 'whsec_', 'whsec_!!!!', Buffer.alloc(32).toString('base64'), `${of(32)}x`])
    expect(webhookKey(bad)).toBeUndefined();
});

test('a download request takes a webhook_url only as an absolute http(s) URL, and a webhook_secret only with one', () => {
  const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
  const ok = (body: object) => DownloadRequestSchema.safeParse({ url: 'https://example.com/a.mp4', ...body }).success;
  expect(ok({ webhook_url: 'https://hooks.example/x', webhook_secret: secret })).toBe(true);
  expect(ok({ webhook_url: 'http://hooks.example/x' })).toBe(true);
  expect(ok({ webhook_url: 'https://user:pw@hooks.example/x' })).toBe(false);
  expect(ok({ webhook_url: 'javascript:alert(1)' })).toBe(false);
  expect(ok({ webhook_url: `https://hooks.example/${'a'.repeat(2048)}` })).toBe(false);
  expect(ok({ webhook_secret: secret })).toBe(false);
});
