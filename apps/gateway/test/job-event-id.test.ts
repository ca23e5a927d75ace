// Event ids come from the job's state: a job's life, retries and hand-backs included, only ever
// moves them up, and a state that looks the same to a client keeps its id.
import { expect, test } from '@jest/globals';
import { jobEventId } from '../src/services/job-event-id.js';

test('every later state of a job has a greater id, through a retry and a hand-back to the queue', () => {
  const life = [
    jobEventId({ status: 'queued', progress: 0 }, 0),
    jobEventId({ status: 'processing', progress: 0 }, 1),
    jobEventId({ status: 'processing', progress: 40 }, 1),
    jobEventId({ status: 'queued', progress: 0 }, 1), // the attempt failed and will be retried
    jobEventId({ status: 'processing', progress: 10 }, 2),
    jobEventId({ status: 'processing', progress: 99 }, 2),
    jobEventId({ status: 'queued', progress: 0 }, 2), // handed back at a worker's shutdown
    jobEventId({ status: 'processing', progress: 5 }, 3),
    jobEventId({ status: 'completed', progress: 100 }, 3),
    jobEventId({ status: 'expired', progress: 0 }, 3),
  ];
  expect(life).toEqual([...life].sort((a, b) => a - b));
  expect(new Set(life).size).toBe(life.length);
  expect(jobEventId({ status: 'processing', progress: 100 }, 1)).toBeLessThan(
    jobEventId({ status: 'failed', progress: 0 }, 1),
  );
});

test('a cancel ends the life with a greater id: running (same attempt) or queued (the record counts one more attempt)', () => {
  expect(jobEventId({ status: 'processing', progress: 100 }, 1)).toBeLessThan(
    jobEventId({ status: 'cancelled', progress: 0 }, 1),
  );
  expect(jobEventId({ status: 'queued', progress: 0 }, 1)).toBeLessThan(
    jobEventId({ status: 'cancelled', progress: 0 }, 2),
  );
});

test('the same status and percent keep the same id, so a repeated state is not sent twice', () => {
  expect(jobEventId({ status: 'processing', progress: 30 }, 1)).toBe(
    jobEventId({ status: 'processing', progress: 30 }, 1),
  );
});

test('a recording (percent 0 for hours) gets a greater id as its recorded seconds grow, through a resume by another worker, up to its end', () => {
  const rec = (status: 'queued' | 'processing' | 'completed' | 'cancelled', seconds: number, attempts: number) =>
    jobEventId({ status, progress: 0, operation: 'record', recording: { seconds, bytes: 0, gaps: [] } }, attempts);
  const life = [
    rec('queued', 0, 0),
    rec('processing', 0, 1),
    rec('processing', 1.2, 1),
    rec('processing', 2.4, 1),
    rec('queued', 2.4, 1),
    rec('processing', 2.4, 2),
    rec('processing', 604_800, 2),
    rec('completed', 604_800, 2),
  ];
  expect(life).toEqual([...life].sort((a, b) => a - b));
  expect(new Set(life).size).toBe(life.length);
  expect(life.every(Number.isSafeInteger)).toBe(true);
  expect(rec('processing', 5, 1)).toBeLessThan(rec('cancelled', 0, 1));
});
