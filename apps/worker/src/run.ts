// The worker process: configuration from the environment, the worker, and signals. SIGTERM or SIGINT
// stops taking jobs, finishes or hands back the running ones, and exits 0.
import { hasRedis, loadConfig } from '@reelay/config';
import { createLogger } from '@reelay/observability';
import { startWorker, type WorkerDeps } from './worker.js';

/** What a caller may set besides the environment (the test entry script sets short BullMQ timings). */
export type WorkerProcessOptions = Pick<
  WorkerDeps,
  | 'metricsPort'
  | 'prefix'
  | 'lockDuration'
  | 'stalledInterval'
  | 'shutdownGraceMs'
  | 'webhookRetryDelayMs'
  | 'webhookTimeoutMs'
>;

export async function runWorkerProcess(options: WorkerProcessOptions = {}): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ name: 'worker', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  if (!hasRedis(config)) {
    logger.fatal(
      'REDIS_URL (or REDIS_SENTINELS) is not set. Set it to a Redis >= 6.2, or run `pnpm start`, which starts a private redis-server.',
    );
    process.exit(2);
  }
  const worker = await startWorker({
    config,
    logger,
    shutdownGraceMs: config.SHUTDOWN_GRACE_SECONDS * 1000,
    ...options,
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'signal received');
    worker.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'unclean stop');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
