// This worker's heartbeat in Redis (see @reelay/contracts worker-health.ts): its health, rewritten
// every few seconds with a short TTL, so the gateway's /readyz can tell "no workers", "workers, but
// none can run jobs" and "ready". A failed write is logged and tried again on the next beat.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Redis } from 'ioredis';
import { WORKER_HEALTH_TTL_SECONDS, workerHealthKey, type WorkerHealth } from '@reelay/contracts';
import type { Logger } from '@reelay/observability';
import type { HealthState } from './health-server.js';

export class Heartbeat {
  readonly key: string;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Redis,
    prefix: string | undefined,
    private readonly logger: Logger,
  ) {
    // Host and pid for the operator reading Redis; the random part keeps restarts apart.
    this.key = workerHealthKey(prefix, `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`);
  }

  async beat(state: HealthState): Promise<void> {
    const value: WorkerHealth = { healthy: state.healthy, ...(state.reason ? { reason: state.reason } : {}), at: Date.now() };
    try {
      await this.redis.set(this.key, JSON.stringify(value), 'EX', WORKER_HEALTH_TTL_SECONDS);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not write the heartbeat');
    }
  }

  /** Calls `tick` (which beats) every `intervalMs`, after the first beat the caller awaited. */
  every(intervalMs: number, tick: () => Promise<void>): void {
    this.timer = setInterval(() => void tick().catch((err: unknown) => this.logger.warn({ err }, 'heartbeat failed')), intervalMs);
    this.timer.unref();
  }

  /** Stops beating and removes the key, so /readyz stops counting this worker at once. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.redis.del(this.key).catch(() => undefined);
  }
}
