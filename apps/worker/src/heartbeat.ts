// This worker's heartbeat in Redis (see @reelay/contracts worker-health.ts): its health, rewritten
// every few seconds in the shared hash, so the gateway's /readyz can tell "no workers", "workers, but
// none can run jobs" and "ready". A failed write is logged and tried again on the next beat.
// Pruning dead workers' entries reads the whole hash: done on every beat by every worker it would
// cost Redis workers² reads (docs/redis-cost.md), so each worker prunes on its first beat and then
// on every PRUNE_EVERY-th; /readyz ignores stale entries meanwhile.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { RedisClient } from '@reelay/redis';
import {
  isFresh,
  WORKER_HEALTH_TTL_SECONDS,
  WorkerHealthSchema,
  workerHealthKey,
  type WorkerHealth,
} from '@reelay/contracts';
import type { Logger } from '@reelay/observability';
import type { HealthState } from './health-server.js';

/** With WORKER_HEARTBEAT_SECONDS = 10: a prune a minute per worker. */
export const PRUNE_EVERY = 6;

export class Heartbeat {
  /** The shared hash, and this worker's field in it. */
  readonly key: string;
  readonly id: string;
  private timer: NodeJS.Timeout | undefined;
  private beats = 0;

  constructor(
    private readonly redis: RedisClient,
    prefix: string | undefined,
    private readonly logger: Logger,
  ) {
    // Host and pid for the operator reading Redis; the random part keeps restarts apart.
    this.key = workerHealthKey(prefix);
    this.id = `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  }

  async beat(state: HealthState): Promise<void> {
    const value: WorkerHealth = {
      healthy: state.healthy,
      ...(state.reason ? { reason: state.reason } : {}),
      at: Date.now(),
    };
    const prune = this.beats++ % PRUNE_EVERY === 0;
    try {
      // The hash outlives its last writer by the TTL, so it is gone once every worker has stopped.
      if (!prune) {
        await this.redis
          .multi()
          .hset(this.key, this.id, JSON.stringify(value))
          .expire(this.key, WORKER_HEALTH_TTL_SECONDS)
          .exec();
        return;
      }
      const [, [, entries]] = (await this.redis
        .multi()
        .hset(this.key, this.id, JSON.stringify(value))
        .hgetall(this.key)
        .expire(this.key, WORKER_HEALTH_TTL_SECONDS)
        .exec()) as [unknown, [unknown, Record<string, string>]];
      const stale = Object.entries(entries ?? {}).filter(([, raw]) => {
        const parsed = WorkerHealthSchema.safeParse(parseOrNull(raw));
        return !parsed.success || !isFresh(parsed.data);
      });
      if (stale.length > 0) await this.redis.hdel(this.key, ...stale.map(([id]) => id));
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not write the heartbeat');
    }
  }

  /** Calls `tick` (which beats) every `intervalMs`, after the first beat the caller awaited. */
  every(intervalMs: number, tick: () => Promise<void>): void {
    this.timer = setInterval(
      () => void tick().catch((err: unknown) => this.logger.warn({ err }, 'heartbeat failed')),
      intervalMs,
    );
    this.timer.unref();
  }

  /** Stops beating and removes this worker's entry, so /readyz stops counting it at once. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.redis.hdel(this.key, this.id).catch(() => undefined);
  }
}

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
