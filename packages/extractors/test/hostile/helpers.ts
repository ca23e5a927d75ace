// Shared by the hostile-input tests of the extractors: one registry and a guarded client allowed
// to reach the local origin, and a run that reports the outcome with its time and peak memory.
import { expect } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { Egress } from '@reelay/egress';
import { measurePeak, recordFigure, type Measured } from '@reelay/testkit';
import { createRegistry, type Extraction } from '../../src/index.js';

export const egress = new Egress({ allowlist: ['127.0.0.1'] });
const registry = createRegistry();

/** Extracts `url` as the gateway would (MAX_SEGMENTS at its default unless given). */
export async function hostileExtract(name: string, url: string, maxSegments = 20_000): Promise<Measured<Extraction>> {
  const m = await measurePeak(() => registry.extract(new URL(url), { egress, endpoints: {}, maxSegments }));
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
