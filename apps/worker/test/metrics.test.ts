// The worker's job metrics carry the contract's error code, so a dashboard can say why jobs fail.
import { expect, test } from '@jest/globals';
import { createLogger } from '@reelay/observability';
import { WorkerMetrics } from '../src/metrics.js';
import { sample } from './helpers.js';

test('a failed job attempt is counted and timed with its error code; a completed one with error_code none', async () => {
  const metrics = new WorkerMetrics(
    async () => ({ waiting: 2 }),
    createLogger({ name: 'metrics-test', level: 'silent' }),
  );
  metrics.jobFinished('merge', 'failed', 3, 'upstream_error');
  metrics.jobFinished('merge', 'failed', 4, 'upstream_error');
  metrics.jobFinished('merge', 'retried', 1, 'job_timeout');
  metrics.jobFinished('convert', 'completed', 2);
  const text = await metrics.registry.metrics();
  expect(
    sample(text, 'reelay_jobs_total', { operation: 'merge', outcome: 'failed', error_code: 'upstream_error' }),
  ).toBe(2);
  expect(sample(text, 'reelay_jobs_total', { operation: 'merge', outcome: 'retried', error_code: 'job_timeout' })).toBe(
    1,
  );
  expect(sample(text, 'reelay_jobs_total', { operation: 'convert', outcome: 'completed', error_code: 'none' })).toBe(1);
  expect(
    sample(text, 'reelay_job_duration_seconds_sum', {
      operation: 'merge',
      outcome: 'failed',
      error_code: 'upstream_error',
    }),
  ).toBe(7);
  expect(sample(text, 'reelay_queue_jobs', { state: 'waiting' })).toBe(2);
});
