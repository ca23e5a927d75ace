// Operational endpoints: liveness (with which ffmpeg and ffprobe this host resolves), readiness
// (Redis answers, and the workers' heartbeats say some can run jobs), Prometheus metrics.
import type { RedisClient } from '@reelay/redis';
import { z } from 'zod';
import { isFresh, WORKER_HEALTH_TTL_SECONDS, WorkerHealthSchema, workerHealthKey } from '@reelay/contracts';
import type { BinaryReport } from '@reelay/media';
import type { RouteSpec } from '../http/route.js';
import type { GatewayMetrics } from '../metrics.js';

const BinarySchema = z.object({
  path: z.string(),
  source: z
    .enum(['FFMPEG_PATH', 'FFPROBE_PATH', 'ffmpeg-static', 'PATH'])
    .meta({ description: 'The setting, the ffmpeg-static download, or the PATH lookup' }),
  version: z.string().optional(),
});
const HealthSchema = z
  .object({
    status: z.string(),
    ffmpeg: BinarySchema.optional().meta({
      description: 'The ffmpeg this host resolves: FFMPEG_PATH → ffmpeg-static where its download succeeded → PATH',
    }),
    ffprobe: BinarySchema.optional().meta({ description: 'The ffprobe this host resolves: FFPROBE_PATH → PATH' }),
  })
  .meta({ id: 'Health' });
const WorkerHealthCountsSchema = z.object({ healthy: z.number().int(), unhealthy: z.number().int() });
const ReadySchema = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    redis: z.enum(['ok', 'down']),
    workers: z.number().int().optional().meta({ description: 'Workers connected to the queue.' }),
    worker_health: WorkerHealthCountsSchema.optional().meta({
      description:
        'Workers by their last heartbeat: unhealthy ones cannot run ffmpeg or ffprobe (their /healthz says why).',
    }),
    reason: z.string().optional().meta({ description: 'Why the gateway is not ready, for the operator.' }),
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
export async function readWorkerHealth(redis: RedisClient, prefix: string | undefined): Promise<WorkerHealthCounts> {
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
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why the gateway is not ready, or undefined when it is. With no healthy worker a download would sit
 * in the queue forever, so that is not ready either: a gateway deployed without workers says so here.
 * Unknown worker health (no probe, or it timed out) does not block readiness.
 */
function notReadyReason(redisOk: boolean, health: WorkerHealthCounts | undefined): string | undefined {
  if (!redisOk) return 'Redis does not answer.';
  if (health === undefined || health.healthy > 0) return undefined;
  if (health.unhealthy > 0)
    return `Every worker (${health.unhealthy}) cannot run ffmpeg or ffprobe; each worker's /healthz says why.`;
  return `No worker has sent a heartbeat in the last ${WORKER_HEALTH_TTL_SECONDS} s: downloads would wait in the queue. Start one (pnpm start does, or node apps/worker/dist/main.js).`;
}

export function healthRoutes(
  redis: RedisClient,
  metrics: GatewayMetrics,
  probe: ReadinessProbe = {},
  tools?: { ffmpeg: BinaryReport; ffprobe: BinaryReport },
): RouteSpec[] {
  return [
    {
      method: 'get',
      path: '/healthz',
      tag: 'Operations',
      summary: 'The process is alive',
      responses: { 200: { description: 'alive', schema: HealthSchema } },
      handler: (_req, res) => res.json({ status: 'ok', ...tools }),
    },
    {
      method: 'get',
      path: '/readyz',
      tag: 'Operations',
      summary: 'Ready to serve: Redis answers, and at least one worker can run jobs',
      responses: {
        200: { description: 'ready', schema: ReadySchema },
        503: {
          description:
            'Redis is unreachable, or no worker with a fresh heartbeat can run ffmpeg (none running, or all broken); `reason` says which',
          schema: ReadySchema,
        },
      },
      handler: async (_req, res) => {
        const redisOk = await withTimeout(redis.ping(), 1000).then(
          () => true,
          () => false,
        );
        const [workers, health] = redisOk
          ? await Promise.all([
              probe.workers ? withTimeout(probe.workers(), 1000).catch(() => undefined) : undefined,
              probe.workerHealth ? withTimeout(probe.workerHealth(), 1000).catch(() => undefined) : undefined,
            ])
          : [undefined, undefined];
        const reason = notReadyReason(redisOk, health);
        const ready = reason === undefined;
        const body = {
          status: ready ? 'ready' : 'not_ready',
          redis: redisOk ? 'ok' : 'down',
          ...(workers !== undefined ? { workers } : {}),
          ...(health !== undefined ? { worker_health: health } : {}),
          ...(reason ? { reason } : {}),
        };
        res.status(ready ? 200 : 503).json(body);
      },
    },
    {
      method: 'get',
      path: '/metrics',
      tag: 'Operations',
      summary: 'Prometheus metrics',
      responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain' } },
      handler: async (_req, res) => {
        res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
      },
    },
  ];
}
