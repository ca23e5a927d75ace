// The worker app: a BullMQ Worker on the `downloads` queue plus its metrics server. Dependencies are
// passed in so tests start real workers against real Redis.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Config } from '@reelay/config';
import { DOWNLOAD_QUEUE } from '@reelay/contracts';
import { createRegistry, type Logger } from '@reelay/observability';

export interface WorkerDeps {
  config: Config;
  logger: Logger;
  /** Port for /healthz and /metrics (default config.METRICS_PORT; 0 picks a free one). */
  metricsPort?: number;
}

export interface RunningWorker {
  worker: Worker;
  metricsUrl: string;
  stop(): Promise<void>;
}

export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const { config, logger } = deps;
  // BullMQ workers block on Redis: they need maxRetriesPerRequest null (BullMQ throws otherwise).
  const connection = new Redis(config.REDIS_URL!, { maxRetriesPerRequest: null });
  connection.on('error', (err) => logger.warn({ err: err.message }, 'redis connection problem'));
  const registry = createRegistry({ app: 'worker' });

  const worker = new Worker(
    DOWNLOAD_QUEUE,
    async (job: Job) => {
      logger.info({ jobId: job.id, name: job.name }, 'job received');
      throw new Error('download jobs are not implemented yet');
    },
    { connection, concurrency: config.WORKER_CONCURRENCY, autorun: true },
  );
  worker.on('error', (err) => logger.error({ err }, 'worker error'));

  const server = http.createServer(async (req, res) => {
    if (req.url === '/healthz') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    if (req.url === '/metrics') return void res.writeHead(200, { 'content-type': registry.contentType }).end(await registry.metrics());
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"success":false,"error":{"code":"not_found","message":"No such route."}}');
  });
  await new Promise<void>((resolve) => server.listen(deps.metricsPort ?? config.METRICS_PORT, config.HOST, resolve));
  const { port } = server.address() as AddressInfo;
  logger.info({ port, concurrency: config.WORKER_CONCURRENCY }, 'worker started');

  return {
    worker,
    metricsUrl: `http://${config.HOST}:${port}`,
    stop: async () => {
      await worker.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
