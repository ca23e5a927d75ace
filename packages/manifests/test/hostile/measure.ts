// Shared by the hostile-input tests of the readers: a run of one reader on a hostile text, reported
// with its time and peak memory (and kept for the before/after table when HOSTILE_REPORT is set).
import { expect } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { measurePeak, recordFigure, type Measured } from '@reelay/testkit';

/** Peak memory a reader may add over what the process held before it, in MiB. */
export const GROWTH_BOUND_MB = 64;
export const TIME_BOUND_MS = 5_000;

/** Runs `read` (the text is built before, so only the reading is measured). */
export async function hostileRead<T>(name: string, read: () => T): Promise<Measured<T>> {
  const m = await measurePeak(async () => read());
  const outcome =
    'error' in m.outcome
      ? m.outcome.error instanceof ReelayError
        ? m.outcome.error.code
        : String(m.outcome.error)
      : 'success';
  recordFigure(name, m, outcome);
  return m;
}

/** The ReelayError a measured run ended with (fails the test when it succeeded or threw anything else). */
export function failureOf(m: Measured<unknown>): ReelayError {
  expect('error' in m.outcome).toBe(true);
  const error = (m.outcome as { error: unknown }).error;
  expect(error).toBeInstanceOf(ReelayError);
  return error as ReelayError;
}

/** What a measured run returned (fails the test when it threw). */
export function valueOf<T>(m: Measured<T>): T {
  if ('error' in m.outcome) throw m.outcome.error;
  return m.outcome.value;
}

/** The bounds every hostile read is held to. */
export function withinBounds(m: Measured<unknown>): void {
  expect(m.ms).toBeLessThan(TIME_BOUND_MS);
  expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
}
