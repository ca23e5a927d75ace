// Operational endpoints: liveness, readiness (Redis answers, and the workers' heartbeats say some
// can run jobs), Prometheus metrics.
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { isFresh, WorkerHealthSchema, workerHealthKey } from '@reelay/contracts';
import type { RouteSpec } from '../http/route.js';
import type { GatewayMetrics } from '../metrics.js';

const HealthSchema = z.object({ status: z.string() }).meta({ id: 'Health' });
const WorkerHealthCountsSchema = z.object({ healthy: z.number().int(), unhealthy: z.number().int() });
const ReadySchema = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    redis: z.enum(['ok', 'down']),
    workers: z.number().int().optional().meta({ description: 'Workers connected to the queue.' }),
    worker_health: WorkerHealthCountsSchema.optional().meta({
      description: 'Workers by their last heartbeat: unhealthy ones cannot run ffmpeg or ffprobe (their /healthz says why).',
    }),
  })
  .meta({ id: 'Readiness' });

export type WorkerHealthCounts = z.infer<typeof WorkerHealthCountsSchema>;

export interface ReadinessProbe {
  /** Number of connected workers, when the queue can tell. */
  workers?: () => Promise<number>;
  /** Workers by heartbeat (readWorkerHealth). */
  workerHealth?: () => Promise<WorkerHealthCounts>;
}

/** Counts the fresh heartbeats under a BullMQ prefix: one HGETALL of the shared hash. */
export async function readWorkerHealth(redis: Redis, prefix: string | undefined): Promise<WorkerHealthCounts> {
  const counts = { healthy: 0, unhealthy: 0 };
  const now = Date.now();
  for (const value of Object.values(await redis.hgetall(workerHealthKey(prefix)))) {
    const parsed = WorkerHealthSchema.safeParse(safeJson(value));
    if (parsed.success && isFresh(parsed.data, now)) counts[parsed.data.healthy ? 'healthy' : 'unhealthy']++;
  }
  return counts;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(redis: Redis, metrics: GatewayMetrics, probe: ReadinessProbe = {}): RouteSpec[] {
  return [
    {
      method: 'get',
      path: '/healthz',
      tag: 'operations',
      summary: 'The process is alive',
      responses: { 200: { description: 'alive', schema: HealthSchema } },
      handler: (_req, res) => res.json({ status: 'ok' }),
    },
    {
      method: 'get',
      path: '/readyz',
      tag: 'operations',
      summary: 'Ready to serve: Redis answers, and workers (if any) can run jobs',
      responses: {
        200: { description: 'ready', schema: ReadySchema },
        503: { description: 'Redis is unreachable, or workers have a heartbeat but none of them can run ffmpeg', schema: ReadySchema },
      },
      handler: async (_req, res) => {
        const redisOk = await withTimeout(redis.ping(), 1000).then(() => true, () => false);
        const [workers, health] = redisOk
          ? await Promise.all([
              probe.workers ? withTimeout(probe.workers(), 1000).catch(() => undefined) : undefined,
              probe.workerHealth ? withTimeout(probe.workerHealth(), 1000).catch(() => undefined) : undefined,
            ])
          : [undefined, undefined];
        // No workers at all is not a gateway fault (they may be starting, or scaled to zero): jobs
        // wait in the queue. Workers that are all broken will never run them, so that is not ready.
        const workersBroken = health !== undefined && health.unhealthy > 0 && health.healthy === 0;
        const ready = redisOk && !workersBroken;
        const body = {
          status: ready ? 'ready' : 'not_ready',
          redis: redisOk ? 'ok' : 'down',
          ...(workers !== undefined ? { workers } : {}),
          ...(health !== undefined ? { worker_health: health } : {}),
        };
        res.status(ready ? 200 : 503).json(body);
      },
    },
    {
      method: 'get',
      path: '/metrics',
      tag: 'operations',
      summary: 'Prometheus metrics',
      responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain' } },
      handler: async (_req, res) => {
        res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
      },
    },
  ];
}
