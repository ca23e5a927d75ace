// Cancel and stop signals (DESIGN.md "Live streams, stopping and cancelling"). The gateway that gets
// DELETE /api/v1/jobs/{id} or POST .../stop is not the process running the job, so a signal travels
// through Redis twice: a key that says it was asked for (read by a worker when it starts the job, so
// a message sent before it listened is never lost) and a message on one pub/sub channel that every
// worker process subscribes to once (so a running job hears it at once). Names and formats live here
// so the gateway (sender) and the worker (listener) cannot disagree.
import { z } from 'zod';
import { decodeJobError, type JobView } from './download.js';

export const JobSignalSchema = z.enum(['cancel', 'stop']);
/** cancel: end now and keep nothing; stop: end gracefully and keep what was recorded (recordings only). */
export type JobSignal = z.infer<typeof JobSignalSchema>;

/** The one channel every worker process subscribes to; messages name the job and the signal. */
export const JOB_SIGNAL_CHANNEL = 'reelay:job-signals';
export const JobSignalMessageSchema = z.object({ id: z.string(), signal: JobSignalSchema });
export type JobSignalMessage = z.infer<typeof JobSignalMessageSchema>;

/** The key that records a signal for a job: set before the message is published. */
export const jobSignalKey = (signal: JobSignal, id: string): string => `reelay:job-${signal}:${id}`;

/**
 * How long a signal key is kept: past any life the job can still have in the queue (a stalled job
 * comes back after its lock, a retry after its backoff), so a late start still sees it.
 */
export const JOB_SIGNAL_TTL_SECONDS = 2 * 86_400;

/**
 * A job cancelled while queued is removed from the queue; what remains of it is this record, read
 * wherever the job would have been (the Job view, its event stream, its webhook, the client's
 * slots). Kept as long as BullMQ keeps a failed job (removeOnFail).
 */
export const cancelledJobKey = (id: string): string => `reelay:job-cancelled:${id}`;
export const CANCELLED_RECORD_TTL_SECONDS = 86_400;

export const CancelledRecordSchema = z.object({
  view: z.custom<JobView>((v) => typeof v === 'object' && v !== null && (v as JobView).status === 'cancelled'),
  webhook_url: z.string().optional(),
  /** Attempts started before the cancel, plus one: its event id sorts after every earlier state's. */
  attempts: z.number().int().nonnegative().default(1),
});
export type CancelledRecord = z.infer<typeof CancelledRecordSchema>;

/** The error code a worker fails a cancelled job with: the Job view shows status `cancelled` for it. */
export const CANCELLED_CODE = 'cancelled';
export const CANCELLED_MESSAGE = 'The job was cancelled.';

/** Whether a BullMQ failedReason is a cancellation (encodeJobError of CANCELLED_CODE). */
export function isCancelledReason(reason: string | undefined): boolean {
  return reason !== undefined && decodeJobError(reason).code === CANCELLED_CODE;
}

/** Statuses after which a job changes no more. */
export const TERMINAL_STATUSES: ReadonlySet<JobView['status']> = new Set([
  'completed',
  'failed',
  'expired',
  'cancelled',
]);
