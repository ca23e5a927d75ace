// The recorder's refresh cadence (record/refresh.ts) against simulated live streams: segments come
// out once a second with jitter, faster or slower than they claim, and the timers fire late. Each
// run counts the reads per segment and the lag from a segment coming out to the read that lists it,
// without a clock: the two figures bench/record.mjs pays for in CPU and in its lag goal.
import { expect, test } from '@jest/globals';
import { MIN_REFRESH_MS, RefreshCadence } from '../src/record/refresh.js';

interface Stream {
  /** Milliseconds between two segments coming out; each claims 1 s. */
  intervalMs?: number;
  /** Each segment comes out up to this much later than its turn. */
  jitterMs?: number;
  /** Each timer fires up to this much late. */
  lateMs?: number;
  segments?: number;
}

/** A small fixed-seed generator, so a failure is the same on every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function simulate({ intervalMs = 1000, jitterMs = 80, lateMs = 10, segments = 600 }: Stream) {
  const rand = random(7);
  const outAt = Array.from({ length: segments + 40 }, (_, k) => k * intervalMs + rand() * jitterMs);
  const newestAt = (t: number) => outAt.findLastIndex((at) => at <= t);
  const cadence = new RefreshCadence();
  let t = outAt[3] + rand() * intervalMs;
  let newest = newestAt(t);
  const first = newest;
  let advanced = 1;
  let reads = 1;
  const lags: number[] = [];
  const gaps: number[] = [];
  while (newest < first + segments) {
    const wait = cadence.next(advanced, 1000);
    gaps.push(wait);
    t += wait + rand() * lateMs;
    reads++;
    const now = newestAt(t);
    advanced = now - newest;
    for (let k = newest + 1; k <= now; k++) lags.push(t - outAt[k]);
    newest = now;
  }
  lags.sort((a, b) => a - b);
  return {
    readsPerSegment: reads / segments,
    p50: lags[Math.floor(lags.length / 2)],
    p99: lags[Math.floor(lags.length * 0.99)],
    shortestWait: Math.min(...gaps),
  };
}

test('a stream of one-second segments is read about once per segment, and each is listed at most about half a segment before a read finds it', () => {
  const run = simulate({});
  expect(run.readsPerSegment).toBeLessThan(1.25); // half-segment polling reads twice per segment
  expect(run.p99).toBeLessThan(600); // RFC 8216's whole target duration after a change ratchets to ~1000
  expect(run.shortestWait).toBeGreaterThanOrEqual(MIN_REFRESH_MS);
});

test('segments coming out 3% faster or slower than they claim, or very unevenly, keep the lag under a segment without more reads', () => {
  for (const stream of [{ intervalMs: 970 }, { intervalMs: 1030 }, { jitterMs: 300 }, { lateMs: 60 }]) {
    const run = simulate(stream);
    expect({ stream, fewReads: run.readsPerSegment < 1.25, lagUnderASegment: run.p99 < 800 }).toEqual({
      stream,
      fewReads: true,
      lagUnderASegment: true,
    });
  }
});

test('the first read, a read with nothing new and a read with several new segments are followed by one half a segment later', () => {
  const cadence = new RefreshCadence();
  expect(cadence.next(1, 2000)).toBe(1000); // the first: when its newest came out is not known
  expect(cadence.next(1, 2000)).toBe(2000 * (15 / 16));
  expect(cadence.next(0, 2000)).toBe(1000);
  expect(cadence.next(3, 2000)).toBe(1000);
});

test('a playlist that claims tiny or huge durations is still read between twice a second and every 30 s', () => {
  const cadence = new RefreshCadence();
  expect(cadence.next(0, 10)).toBe(MIN_REFRESH_MS);
  expect(cadence.next(1, 10)).toBe(MIN_REFRESH_MS);
  expect(cadence.next(1, 3_600_000)).toBe(30_000);
});
