// The id of a job's state in its event stream, derived from the state itself: every gateway replica
// gives the same state the same id without sharing a counter, and a later state always has a greater
// id, so `Last-Event-ID` resumes on any replica by comparing numbers. States that look the same to a
// client (the same status and percent) share an id and are sent once.
import type { JobView } from '@reelay/contracts';

// Each attempt owns a block of ids: processing at 1..101 (1 + percent), the terminal states after it,
// and "queued again" (a retry or a hand-back) last, below the next attempt's processing.
const BLOCK = 200;
const TERMINAL = { completed: 110, expired: 120, failed: 130, cancelled: 140 } as const;
const QUEUED = 199;

/** `attempts`: how many times the job has been started (BullMQ's attemptsStarted). */
export function jobEventId(view: Pick<JobView, 'status' | 'progress'>, attempts: number): number {
  const base = Math.max(0, attempts) * BLOCK;
  switch (view.status) {
    case 'queued':
      return base + QUEUED;
    case 'processing':
      return base + 1 + view.progress;
    default:
      return base + TERMINAL[view.status];
  }
}

export const isTerminal = (status: JobView['status']): boolean => status === 'completed' || status === 'failed' || status === 'expired' || status === 'cancelled';
