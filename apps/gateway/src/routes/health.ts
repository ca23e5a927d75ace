// Operational endpoints: liveness, readiness (Redis answers), Prometheus metrics.
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { RouteSpec } from '../http/route.js';
import type { GatewayMetrics } from '../metrics.js';

const HealthSchema = z.object({ status: z.string() }).meta({ id: 'Health' });
const ReadySchema = z
  .object({ status: z.enum(['ready', 'not_ready']), redis: z.enum(['ok', 'down']), workers: z.number().int().optional() })
  .meta({ id: 'Readiness' });

export interface ReadinessProbe {
  /** Number of connected workers, when the queue can tell. */
  workers?: () => Promise<number>;
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
      summary: 'Ready to serve: Redis answers (and how many workers are connected)',
      responses: { 200: { description: 'ready', schema: ReadySchema }, 503: { description: 'Redis is unreachable', schema: ReadySchema } },
      handler: async (_req, res) => {
        const redisOk = await withTimeout(redis.ping(), 1000).then(() => true, () => false);
        const workers = redisOk && probe.workers ? await withTimeout(probe.workers(), 1000).catch(() => undefined) : undefined;
        const body = { status: redisOk ? 'ready' : 'not_ready', redis: redisOk ? 'ok' : 'down', ...(workers !== undefined ? { workers } : {}) };
        res.status(redisOk ? 200 : 503).json(body);
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
