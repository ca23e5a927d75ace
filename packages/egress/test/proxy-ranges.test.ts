// When a large file is worth fetching in parts: the decision from the pace the open answer showed
// while it was probed (proxy-ranges.ts). The parts themselves are tested end to end with real
// ffmpeg and throttled origins in apps/worker/test/parallel-fetch.scenario.test.ts.
import { describe, expect, test } from '@jest/globals';
import { PROBE_BYTES, PROBE_MS, WORTH_MS, worthSplitting } from '../src/proxy-ranges.js';

const MB = 1024 * 1024;

describe('worthSplitting', () => {
  test('a loopback-fast answer (its probe filled in 2 ms) keeps one connection for a 28 MB file', () => {
    // 1 MiB in 2 ms: the other 27 MiB in 54 ms, far under WORTH_MS.
    expect(worthSplitting(PROBE_BYTES, 2, 27 * MB)).toBe(false);
  });

  test('a CDN at 2 MB/s per connection is split: the rest would take seconds', () => {
    expect(worthSplitting(100_000, PROBE_MS, 40 * MB)).toBe(true);
  });

  test('the line is WORTH_MS of projected time for the rest', () => {
    // 1 MiB in 20 ms: 25 MiB more takes 500 ms (not split), 26 MiB 520 ms (split).
    expect(worthSplitting(MB, 20, 25 * MB)).toBe(false);
    expect(worthSplitting(MB, 20, 26 * MB)).toBe(true);
    expect(WORTH_MS).toBe(500);
  });

  test('an answer that sent nothing during the probe is slow, and is split', () => {
    expect(worthSplitting(0, PROBE_MS, 10 * MB)).toBe(true);
  });

  test('nothing left, nothing to split; a 0 ms probe is read as 1 ms, never a division by zero', () => {
    expect(worthSplitting(MB, 10, 0)).toBe(false);
    expect(worthSplitting(MB, 0, 100 * MB)).toBe(false);
    expect(worthSplitting(MB, 0, 600 * MB)).toBe(true);
  });
});
