// Runs one hostile job on a test stack and reports how it ended: its error, how long it took, and
// the peak memory of the processes it started (and of this process, where the worker's proxy runs).
// With HOSTILE_FIGURES set, each run also prints one line, for docs/security.md's table of figures.
import { decodeJobError, type JobPayload } from '@reelay/contracts';
import { samplePeaks, type Peaks } from '@reelay/testkit';
import type { TestQueue } from '../helpers.js';

export interface HostileOutcome {
  state: 'completed' | 'failed';
  code: string | undefined;
  message: string;
  seconds: number;
  peaks: Peaks;
}

export async function runHostile(
  name: string,
  queue: TestQueue,
  job: JobPayload,
  marker: string,
  timeoutMs = 60_000,
): Promise<HostileOutcome> {
  const sampler = samplePeaks(marker);
  const started = Date.now();
  let finished: Awaited<ReturnType<TestQueue['finished']>>;
  let peaks: Peaks;
  try {
    await queue.add(job);
    finished = await queue.finished(job.id, timeoutMs);
  } finally {
    peaks = sampler.stop();
  }
  const seconds = (Date.now() - started) / 1000;
  const error = finished.failedReason ? decodeJobError(finished.failedReason) : undefined;
  const outcome: HostileOutcome = {
    state: finished.failedReason ? 'failed' : 'completed',
    code: error?.code,
    message: error?.message ?? '',
    seconds,
    peaks,
  };
  if (process.env.HOSTILE_FIGURES) {
    process.stderr.write(
      `HOSTILE ${name}: ${outcome.state} ${outcome.code ?? ''} in ${seconds.toFixed(1)} s, children ${peaks.childrenMb} MB (${peaks.children}), self ${peaks.selfMb} MB (+${peaks.selfGrowthMb}): ${outcome.message}\n`,
    );
  }
  return outcome;
}
