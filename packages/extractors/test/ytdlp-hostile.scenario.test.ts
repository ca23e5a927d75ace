// yt-dlp against hostile pages: a 1 MB gzip of a 1 GiB page, sent with Content-Encoding gzip though
// the proxy asked for identity (before, yt-dlp inflated it to 2 GB), and a page too big for yt-dlp's
// memory bound. The first is refused as too large by the proxy, counted decoded; the second is
// killed at its bound and answers 422 resource_limit. Both with yt-dlp's peak memory asserted.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { Egress } from '@reelay/egress';
import { gzipBomb, samplePeaks, startOrigin, type Origin, type Peaks } from '@reelay/testkit';
import { createRegistry, type ExtractorRegistry, type YtdlpOptions } from '../src/index.js';
import { realYtdlp } from './ytdlp-helpers.js';

const ytdlp = await realYtdlp();
const describeReal = ytdlp ? describe : describe.skip;
const egress = new Egress({ allowlist: ['127.0.0.1'], responseTimeoutMs: 5_000, idleTimeoutMs: 5_000 });
const GiB = 1024 ** 3;
const ENDS_WITHIN_S = 30;
let origin: Origin;
const registries: ExtractorRegistry[] = [];

beforeAll(async () => {
  origin = await startOrigin();
});

afterAll(async () => {
  for (const r of registries) await r.close();
  await origin?.close();
});

/** The URL sent straight to yt-dlp (a YTDLP_HOSTS host), the error it ended with, its time and peaks. */
async function hostile(
  name: string,
  path: string,
  options: Partial<YtdlpOptions>,
): Promise<{ error: ReelayError; seconds: number; peaks: Peaks }> {
  const registry = createRegistry({
    ytdlp: { binary: ytdlp, hosts: ['127.0.0.1'], egress, baseEnv: { PATH: process.env.PATH }, ...options },
  });
  registries.push(registry);
  const sampler = samplePeaks(origin.base);
  const started = Date.now();
  const error = await registry.extract(new URL(origin.url(path)), { egress, endpoints: {} }).then(
    () => undefined,
    (e: unknown) => e,
  );
  const seconds = (Date.now() - started) / 1000;
  const peaks = sampler.stop();
  if (!(error instanceof ReelayError)) throw new Error(`expected a ReelayError, got ${String(error)}`);
  if (process.env.HOSTILE_FIGURES)
    process.stderr.write(
      `HOSTILE ${name}: ${error.code} in ${seconds.toFixed(1)} s, yt-dlp ${peaks.childrenMb} MB (${peaks.childrenFileMb} MB of it code; ${peaks.children}), self ${peaks.selfMb} MB: ${error.message}\n`,
    );
  return { error, seconds, peaks };
}

describeReal('yt-dlp against hostile pages', () => {
  test('a gzip bomb page is refused as too large, counted decoded, and yt-dlp stays small', async () => {
    const bomb = await gzipBomb(Buffer.from('<html><head><title>bomb</title></head><body>'), GiB, 0x20);
    origin.body('/bomb.html', bomb, 'text/html', { 'content-encoding': 'gzip' });
    const maxBytes = 16 * 1024 * 1024;
    const { error, seconds, peaks } = await hostile('gzip bomb (yt-dlp)', '/bomb.html', {
      maxBytes,
      limits: { memoryMb: 1024, cpuSeconds: 60 },
    });
    expect(error.code).toBe('upstream_error');
    expect(error.message).toMatch(/fetched more than this server allows/);
    expect(seconds).toBeLessThan(ENDS_WITHIN_S);
    // yt-dlp holds at most the capped page (16 MiB) a few times over, far under its 1024 MB bound.
    expect(peaks.childrenMb).toBeLessThan(256);
  });

  test('a page larger than yt-dlp can hold under JOB_MAX_MEMORY_MB is killed at the bound: 422 resource_limit', async () => {
    const page = Buffer.concat([
      Buffer.from('<html><body>'),
      Buffer.alloc(48 * 1024 * 1024, 0x61),
      Buffer.from('</body></html>'),
    ]);
    origin.body('/huge.html', page, 'text/html');
    const memoryMb = 100;
    const { error, seconds, peaks } = await hostile('yt-dlp over its memory bound', '/huge.html', {
      limits: { memoryMb, cpuSeconds: 60 },
    });
    expect([error.code, error.status]).toEqual(['resource_limit', 422]);
    expect(error.message).toMatch(`memory bound of ${memoryMb} MB`);
    expect(seconds).toBeLessThan(ENDS_WITHIN_S);
    // The bound is on data (RLIMIT_DATA, and the watchdog's kill): resident memory past it is
    // yt-dlp's code and libraries (Python's are some 14-20 MB), which the bound does not count.
    expect(peaks.childrenMb - peaks.childrenFileMb).toBeLessThan(memoryMb);
    expect(peaks.childrenMb).toBeLessThan(memoryMb + 64);
  });
});
