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

// A recording changes for hours with its percent at 0 (no live.duration): its processing ids count
// tenths of a recorded second instead, in blocks large enough for MAX_RECORD_SECONDS' ceiling.
const RECORDING_BLOCK = 2 ** 32;

/** `attempts`: how many times the job has been started (BullMQ's attemptsStarted). */
export function jobEventId(
  view: Pick<JobView, 'status' | 'progress'> & Partial<Pick<JobView, 'operation' | 'recording'>>,
  attempts: number,
): number {
  if (view.operation === 'record') {
    const start = Math.max(0, attempts) * RECORDING_BLOCK;
    if (view.status === 'queued') return start + RECORDING_BLOCK - 1;
    if (view.status === 'processing')
      return start + 1 + Math.min(RECORDING_BLOCK - 1000, Math.floor((view.recording?.seconds ?? 0) * 10));
    return start + RECORDING_BLOCK - 1000 + TERMINAL[view.status];
  }
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

export const isTerminal = (status: JobView['status']): boolean =>
  status === 'completed' || status === 'failed' || status === 'expired' || status === 'cancelled';
