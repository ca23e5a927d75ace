// Worker heartbeats in Redis: each worker keeps one short-lived key saying whether it can run jobs
// (its ffmpeg and ffprobe start), and the gateway's /readyz counts them. A worker that dies simply
// lets its key expire. Keys live under the queue's BullMQ prefix, like the queue itself.
import { z } from 'zod';
import { DOWNLOAD_QUEUE } from './extract.js';

/** How often a worker rewrites its key, and how long the key outlives a silent worker. */
export const WORKER_HEARTBEAT_SECONDS = 10;
export const WORKER_HEALTH_TTL_SECONDS = 30;

export const WorkerHealthSchema = z.object({
  healthy: z.boolean(),
  /** Why the worker takes no jobs (for operators; on the worker's own /healthz). */
  reason: z.string().optional(),
  /** Epoch milliseconds of the write. */
  at: z.number(),
});
export type WorkerHealth = z.infer<typeof WorkerHealthSchema>;

/** BullMQ's default prefix when none is set. */
const DEFAULT_PREFIX = 'bull';

export function workerHealthKey(prefix: string | undefined, workerId: string): string {
  return `${prefix ?? DEFAULT_PREFIX}:${DOWNLOAD_QUEUE}:worker-health:${workerId}`;
}

/** A SCAN pattern for every worker's key (the prefix is escaped: it is the caller's, not a glob). */
export function workerHealthPattern(prefix: string | undefined): string {
  return `${(prefix ?? DEFAULT_PREFIX).replace(/[*?[\]\\]/g, '\\$&')}:${DOWNLOAD_QUEUE}:worker-health:*`;
}
