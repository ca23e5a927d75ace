// Worker heartbeats in Redis: one hash under the queue's BullMQ prefix, a field per worker saying
// whether it can run jobs (its ffmpeg and ffprobe start) and when it last said so. The gateway's
// /readyz reads the one hash (never a scan of the keyspace) and ignores entries older than the TTL,
// which is how a worker that died drops out; workers prune such entries as they beat.
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

/** The hash holding every worker's heartbeat, field = worker id. */
export function workerHealthKey(prefix: string | undefined): string {
  return `${prefix ?? DEFAULT_PREFIX}:${DOWNLOAD_QUEUE}:worker-health`;
}

/** A heartbeat entry still counts while it is younger than WORKER_HEALTH_TTL_SECONDS. */
export function isFresh(health: WorkerHealth, now = Date.now()): boolean {
  return now - health.at < WORKER_HEALTH_TTL_SECONDS * 1000;
}
