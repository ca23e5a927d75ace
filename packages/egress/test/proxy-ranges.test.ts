// When a large file is worth fetching in parts: the decision from the pace the open answer showed
// while it was probed (proxy-ranges.ts). The parts themselves are tested end to end with real
// ffmpeg and throttled origins in apps/worker/test/parallel-fetch.scenario.test.ts.
import { describe, expect, test } from '@jest/globals';
import {
  FAST_BYTES_PER_SECOND,
  partSize,
  PROBE_BYTES,
  PROBE_MS,
  RANGE_CHUNK_BYTES,
  WORTH_MS,
  worthSplitting,
} from '../src/proxy-ranges.js';

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
    // 200 KiB in 50 ms (4 MB/s): 2,000 KiB more takes 500 ms (not split), 2,500 KiB 625 ms (split).
    expect(worthSplitting(200 * 1024, 50, 2000 * 1024)).toBe(false);
    expect(worthSplitting(200 * 1024, 50, 2500 * 1024)).toBe(true);
    expect(WORTH_MS).toBe(500);
  });

  test('a connection at FAST_BYTES_PER_SECOND or more keeps one connection, however large the file', () => {
    // A 49 MB file on a busy loopback: its first MiB took 34 ms (30 MB/s). By WORTH_MS alone the
    // rest would take 1.6 s and be split, adding requests and CPU where CPU is the limit.
    expect(worthSplitting(MB, 34, 47 * MB)).toBe(false);
    expect(worthSplitting(MB, 34, 4000 * MB)).toBe(false);
    // The line itself: 1 MiB in 62.5 ms is 16 MiB/s; a little slower is split.
    expect(FAST_BYTES_PER_SECOND).toBe(16 * MB);
    expect(worthSplitting(MB, 62.5, 100 * MB)).toBe(false);
    expect(worthSplitting(MB, 64, 100 * MB)).toBe(true);
  });

  test('an answer that sent nothing during the probe is slow, and is split', () => {
    expect(worthSplitting(0, PROBE_MS, 10 * MB)).toBe(true);
  });

  test('nothing left, nothing to split; a 0 ms probe is read as 1 ms, never a division by zero', () => {
    expect(worthSplitting(MB, 10, 0)).toBe(false);
    expect(worthSplitting(100_000, 0, 100 * MB)).toBe(false); // 100 MB/s: fast
    expect(worthSplitting(10_000, 0, 100 * MB)).toBe(true); // 10 MB/s, 10 s for the rest
  });
});

describe('partSize', () => {
  /** Transfers in all: the open answer and the parts after it. */
  const transfers = (rest: number, size: number) => 1 + Math.ceil(rest / size);

  test('the open answer and the parts make whole waves of `concurrency` transfers, no part over the chunk', () => {
    // The realistic bench's video: 35 MiB after the open answer, 8 connections. 0.9 MiB parts
    // (40 of them) made 41 transfers: five waves and a sixth of one part alone.
    const rest = 37_756_436 - MB;
    const size = partSize(rest, RANGE_CHUNK_BYTES, 8);
    expect(size).toBeLessThanOrEqual(RANGE_CHUNK_BYTES);
    expect(transfers(rest, size)).toBe(40);
  });

  test('a rest of whole chunks that would leave one part over gets smaller parts, not a wave of one', () => {
    const size = partSize(32 * MB, RANGE_CHUNK_BYTES, 8);
    expect(size).toBeLessThan(RANGE_CHUNK_BYTES);
    expect(transfers(32 * MB, size) % 8).toBe(0);
  });

  test('a rest that fills whole waves beside the open answer keeps the chunk size', () => {
    expect(partSize(31 * MB, RANGE_CHUNK_BYTES, 8)).toBe(RANGE_CHUNK_BYTES);
  });

  test('a rest smaller than one wave is shared by the connections beside the open answer', () => {
    expect(partSize(7 * MB, RANGE_CHUNK_BYTES, 8)).toBe(MB);
    expect(partSize(3.5 * MB, RANGE_CHUNK_BYTES, 8)).toBe(MB / 2);
  });

  test('never zero, however small the rest', () => {
    expect(partSize(3, RANGE_CHUNK_BYTES, 8)).toBe(1);
    expect(partSize(1, RANGE_CHUNK_BYTES, 2)).toBe(1);
  });
});
