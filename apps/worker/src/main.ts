// Worker entry point: read config, connect Redis, consume the `downloads` queue, serve /healthz and
// /metrics on METRICS_PORT; on SIGTERM stop taking jobs and finish or hand back the running ones.
import { loadConfig } from '@reelay/config';
import { createLogger } from '@reelay/observability';
import { startWorker } from './worker.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ name: 'worker', level: config.LOG_LEVEL });
  if (!config.REDIS_URL) {
    logger.fatal('REDIS_URL is not set. Set it to a Redis >= 6.2, or run `pnpm start`, which starts a private redis-server.');
    process.exit(2);
  }
  const worker = await startWorker({ config, logger });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: taking no new jobs');
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

main().catch((err) => {
  process.stderr.write(`worker failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
