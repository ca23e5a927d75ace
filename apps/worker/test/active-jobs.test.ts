// Two runs of one job on one worker (the queue gave the job out again after its lock lapsed) stay
// apart: the old run's end does not forget the new one, and a lapsed lock stops only the old one.
import { expect, test } from '@jest/globals';
import { ActiveJobs } from '../src/active-jobs.js';

test("the old run's end leaves a new run of the same job tracked for shutdown", () => {
  const active = new ActiveJobs();
  const old = active.start('job');
  const fresh = active.start('job');
  old.finish();
  expect(active.size).toBe(1);
  expect(active.handBackAll()).toBe(1);
  expect(fresh.handedBack()).toBe(true);
  expect(fresh.signal.aborted).toBe(true);
  fresh.finish();
  expect(active.size).toBe(0);
});

test('a lapsed lock stops the older run of the job, not the one that took it over', () => {
  const active = new ActiveJobs();
  const old = active.start('job');
  const fresh = active.start('job');
  expect(active.lose(['job'])).toBe(1);
  expect(old.lost()).toBe(true);
  expect(old.signal.aborted).toBe(true);
  expect(fresh.lost()).toBe(false);
  expect(fresh.signal.aborted).toBe(false);
  expect(active.lose(['other'])).toBe(0);
});
