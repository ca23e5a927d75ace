// The worker app: a BullMQ Worker on the `downloads` queue, the egress proxy ffmpeg fetches through,
// artifact housekeeping, and /healthz and /metrics. Dependencies are passed in so tests start real
// workers against real Redis; stop() is the SIGTERM path.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { FsArtifactStore } from '@reelay/artifacts';
import type { Config } from '@reelay/config';
import { DOWNLOAD_QUEUE, type JobResult } from '@reelay/contracts';
import { Egress } from '@reelay/egress';
import { resolveFfmpeg, resolveFfprobe } from '@reelay/media';
import type { Logger } from '@reelay/observability';
import { QUEUE_STATES, WorkerMetrics } from './metrics.js';
import { ActiveJobs, createProcessor } from './process.js';
import { startJobProxy } from './proxy.js';

export interface WorkerDeps {
  config: Config;
  logger: Logger;
  /** Port for /healthz and /metrics (default config.METRICS_PORT; 0 picks a free one). */
  metricsPort?: number;
  /** Default config.DATA_DIR. */
  dataDir?: string;
  /** BullMQ key prefix (default BullMQ's `bull`); tests use one per file. */
  prefix?: string;
  /** BullMQ lock and stalled-check timings (defaults 30 s): how soon a dead worker's job returns. */
  lockDuration?: number;
  stalledInterval?: number;
  /** How long stop() lets running jobs finish before handing them back (default 30 s). */
  shutdownGraceMs?: number;
  /** Default: an Egress with config.EGRESS_ALLOWLIST. */
  egress?: Egress;
  /** Artifact sweep and temp clean-up period (default 60 s). */
  housekeepingMs?: number;
}

export interface RunningWorker {
  worker: Worker<unknown, JobResult>;
  metricsUrl: string;
  /** Stops taking jobs, lets running ones finish within the grace period, hands back the rest, closes. */
  stop(): Promise<void>;
}

export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const { config, logger } = deps;
  if (!config.REDIS_URL) throw new Error('REDIS_URL is not set');
  const artifacts = new FsArtifactStore(deps.dataDir ?? config.DATA_DIR);
  const housekeeping = async (): Promise<void> => {
    // A temp folder older than two job timeouts has no live job (a job is killed at one timeout).
    const temp = await artifacts.cleanTemp(2 * config.JOB_TIMEOUT_SECONDS * 1000);
    const expired = await artifacts.sweep();
    if (temp + expired > 0) logger.info({ temp_folders: temp, expired_artifacts: expired }, 'housekeeping');
  };
  await housekeeping();

  // Whatever is opened is closed again if a later step fails, so a failed start leaks no sockets.
  const opened: (() => Promise<unknown>)[] = [];
  const closeOpened = async () => {
    for (const close of [...opened].reverse()) await close().catch((err: unknown) => logger.warn({ err }, 'close failed'));
  };
  try {
    return await start();
  } catch (err) {
    await closeOpened();
    throw err;
  }

  async function start(): Promise<RunningWorker> {
    // The worker blocks on Redis and so needs maxRetriesPerRequest null (BullMQ throws otherwise); the
    // queue used for /metrics fails fast instead, so a scrape never hangs on a Redis outage.
    const connection = new Redis(config.REDIS_URL!, { maxRetriesPerRequest: null });
    const queueConnection = new Redis(config.REDIS_URL!, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    for (const client of [connection, queueConnection]) {
      client.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection problem'));
      // close() on the Worker and Queue does not close connections passed in.
      opened.push(() => client.quit().catch(() => client.disconnect()));
    }
    const queue = new Queue(DOWNLOAD_QUEUE, { connection: queueConnection, prefix: deps.prefix });
    queue.on('error', (err: Error) => logger.warn({ err: err.message }, 'queue error'));
    opened.push(() => queue.close());

    const metrics = new WorkerMetrics(() => queue.getJobCounts(...QUEUE_STATES), logger);
    const proxy = await startJobProxy({
      egress: deps.egress ?? new Egress({ allowlist: config.EGRESS_ALLOWLIST }),
      logger: logger.child({ component: 'proxy' }),
      hooks: { onBytes: (n) => metrics.proxyBytes.inc(n), onBlocked: () => metrics.proxyBlocked.inc() },
    });
    opened.push(() => proxy.close());
    const active = new ActiveJobs();
    const processor = createProcessor({
      config,
      proxy,
      artifacts,
      binaries: { ffmpeg: resolveFfmpeg(config), ffprobe: resolveFfprobe(config) },
      logger,
      metrics,
      active,
    });
    // Only set timings are passed: BullMQ spreads options over its defaults, so an undefined would win.
    const timings = Object.fromEntries(Object.entries({ lockDuration: deps.lockDuration, stalledInterval: deps.stalledInterval }).filter(([, v]) => v !== undefined));
    const worker = new Worker<unknown, JobResult>(DOWNLOAD_QUEUE, processor, {
      connection,
      prefix: deps.prefix,
      concurrency: config.WORKER_CONCURRENCY,
      autorun: true,
      ...timings,
    });
    worker.on('error', (err) => logger.error({ err }, 'worker error'));
    opened.push(() => worker.close());
    const timer = setInterval(() => housekeeping().catch((err: unknown) => logger.error({ err }, 'housekeeping failed')), deps.housekeepingMs ?? 60_000);
    timer.unref();
    opened.push(async () => clearInterval(timer));

    const server = http.createServer((req, res) => {
      if (req.url === '/healthz') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      if (req.url === '/metrics') {
        metrics.registry.metrics().then(
          (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
          (err: unknown) => {
            logger.error({ err }, 'metrics failed');
            res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n');
          },
        );
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"success":false,"error":{"code":"not_found","message":"No such route."}}');
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(deps.metricsPort ?? config.METRICS_PORT, config.HOST, resolve);
    });
    const { port } = server.address() as AddressInfo;
    logger.info({ port, concurrency: config.WORKER_CONCURRENCY }, 'worker started');

    let stopping: Promise<void> | undefined;
    const stop = async (): Promise<void> => {
      const graceMs = deps.shutdownGraceMs ?? 30_000;
      logger.info({ running: active.size, grace_ms: graceMs }, 'stopping: taking no new jobs');
      // close() stops fetching and waits for running jobs. Past the grace period their ffmpeg is
      // stopped and each job is moved back to the wait list with job.moveToWait(token) and the
      // processor throws WaitingError, so BullMQ leaves it there: another worker takes it at once,
      // instead of after a lock expiry, and no attempt is used up.
      const grace = setTimeout(() => {
        const n = active.handBackAll();
        if (n > 0) logger.warn({ jobs: n }, 'grace period over: handing running jobs back to the queue');
      }, graceMs);
      try {
        await worker.close();
      } finally {
        clearTimeout(grace);
      }
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeOpened(); // timer, proxy, queue, then the Redis connections
      logger.info('stopped');
    };

    return {
      worker,
      metricsUrl: `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`,
      stop: () => (stopping ??= stop()),
    };
  }
}
