// The worker app: a BullMQ Worker on the `downloads` queue, the egress proxy ffmpeg fetches through,
// artifact housekeeping, a heartbeat in Redis, and /healthz and /metrics. Dependencies are passed in
// so tests start real workers against real Redis; stop() is the SIGTERM path.
//
// A worker whose ffmpeg or ffprobe cannot be run stays up but takes no jobs: its /healthz answers 503
// with the reason and its heartbeat says unhealthy (so the gateway's /readyz shows it), and it checks
// again on every beat, starting to take jobs once the binaries run. Exiting instead would leave the
// reason in the logs of a restart loop, and each restart would look healthy for a moment.
import { Queue, Worker, type Job } from 'bullmq';
import { createArtifactStore, type ArtifactStore } from '@reelay/artifacts';
import { hasRedis, type Config } from '@reelay/config';
import {
  COLLECTION_QUEUE,
  DOWNLOAD_QUEUE,
  WEBHOOK_QUEUE,
  webhookRetryDelay,
  WORKER_HEARTBEAT_SECONDS,
  type JobResult,
} from '@reelay/contracts';
import { createCollectionProcessor } from './collection.js';
import { releaseNext } from './collection-gate.js';
import { CookieFile, Egress } from '@reelay/egress';
import { locateBinaries, reportBinaries } from '@reelay/media';
import { countWorkerErrors, logRef, type Logger } from '@reelay/observability';
import { connectRedis, defaultQueuePrefix, WAIT_OUT_OUTAGES } from '@reelay/redis';
import { startHealthServer, type HealthState } from './health-server.js';
import { Heartbeat } from './heartbeat.js';
import { ArtifactReuse } from './reuse.js';
import { QUEUE_STATES, WorkerMetrics } from './metrics.js';
import { ActiveJobs } from './active-jobs.js';
import { JobSignalListener } from './job-signals.js';
import { createProcessor } from './process.js';
import { startJobProxy } from './proxy.js';
import { checkTools } from './toolcheck.js';
import { createWebhookProcessor } from './webhook-delivery.js';

// What an idle worker costs Redis (docs/redis-cost.md): each BullMQ Worker re-polls its empty queue
// every drainDelay seconds (a BZPOPMIN, then a moveToActive script) and runs its stalled-job check
// every stalledInterval. A new job wakes the BZPOPMIN at once through the queue's marker, so a longer
// wait costs no pick-up time; 10 s is the longest block BullMQ allows itself.
const IDLE_POLL_SECONDS = 10;
// Deliveries retry on a schedule of seconds to hours: one from a killed worker may come back half a
// minute later instead of a few seconds, and the check then runs 2 times a minute instead of 15.
const WEBHOOK_STALLED_CHECK_MS = 30_000;

export interface WorkerDeps {
  config: Config;
  logger: Logger;
  /** Port for /healthz and /metrics (default config.METRICS_PORT; 0 picks a free one). */
  metricsPort?: number;
  /** Default config.DATA_DIR. */
  dataDir?: string;
  /** BullMQ key prefix (default `bull`, or `{reelay}` on a Redis Cluster); tests use one per file. */
  prefix?: string;
  /** BullMQ lock and stalled-check timings in ms (default JOB_LOCK_SECONDS, JOB_STALLED_CHECK_SECONDS): how soon a dead worker's job returns. */
  lockDuration?: number;
  stalledInterval?: number;
  /** How long stop() lets running jobs finish before handing them back (default 30 s). */
  shutdownGraceMs?: number;
  /** Default: an Egress with config.EGRESS_ALLOWLIST. */
  egress?: Egress;
  /** Default: the store ARTIFACT_STORE names (under dataDir for fs). */
  artifacts?: ArtifactStore;
  /** Artifact sweep and temp clean-up period (default 60 s). */
  housekeepingMs?: number;
  /** Heartbeat period, which is also how often a broken ffmpeg is checked again (default 10 s). */
  heartbeatMs?: number;
  /** Tests: one fixed wait between webhook attempts instead of webhookRetryDelay's schedule. */
  webhookRetryDelayMs?: number;
  /** Tests: a webhook attempt's deadline (default WEBHOOK_TIMEOUT_MS, 10 s). */
  webhookTimeoutMs?: number;
}

export interface RunningWorker {
  worker: Worker<unknown, JobResult>;
  metricsUrl: string;
  /** Whether it can run jobs, and why not. */
  health(): HealthState;
  /** Stops taking jobs, lets running ones finish within the grace period, hands back the rest, closes. */
  stop(): Promise<void>;
}

export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const { config, logger } = deps;
  if (!hasRedis(config)) throw new Error('REDIS_URL (or REDIS_SENTINELS) is not set');
  const artifacts: ArtifactStore = deps.artifacts ?? createArtifactStore(config, deps.dataDir ?? config.DATA_DIR);
  // A temp folder older than two job timeouts has no live job (a job is killed at one timeout).
  const cleanTemp = () => artifacts.cleanTemp(2 * config.JOB_TIMEOUT_SECONDS * 1000);
  let sweeping = false;
  const housekeeping = async (): Promise<void> => {
    // One sweep at a time: on a large S3 bucket one may outlast the period.
    if (sweeping) return;
    sweeping = true;
    try {
      const temp = await cleanTemp();
      const expired = await artifacts.sweep();
      if (temp + expired > 0) logger.info({ temp_folders: temp, expired_artifacts: expired }, 'housekeeping');
    } finally {
      sweeping = false;
    }
  };
  // Local temp folders are cleared before any job runs; the store's sweep, which may be a remote
  // listing, runs beside start-up so neither a large bucket nor a store outage holds the worker back.
  await cleanTemp();
  void housekeeping().catch((err: unknown) => logger.error({ err }, 'housekeeping failed'));

  // Whatever is opened is closed again if a later step fails, so a failed start leaks no sockets.
  const opened: (() => Promise<unknown>)[] = [];
  const closeOpened = async () => {
    for (const close of [...opened].reverse())
      await close().catch((err: unknown) => logger.warn({ err }, 'close failed'));
  };
  try {
    return await start();
  } catch (err) {
    await closeOpened();
    throw err;
  }

  async function start(): Promise<RunningWorker> {
    const prefix = deps.prefix ?? defaultQueuePrefix(config);
    // The worker blocks on Redis and so needs maxRetriesPerRequest null (BullMQ throws otherwise); the
    // queue used for /metrics fails fast instead, so a scrape never hangs on a Redis outage.
    const connection = connectRedis(config, WAIT_OUT_OUTAGES);
    const queueConnection = connectRedis(config, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    if (!deps.artifacts) opened.push(async () => artifacts.close?.());
    for (const client of [connection, queueConnection]) {
      client.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection problem'));
      // close() on the Worker and Queue does not close connections passed in.
      opened.push(() => client.quit().catch(() => client.disconnect()));
    }
    const queue = new Queue(DOWNLOAD_QUEUE, { connection: queueConnection, prefix });
    queue.on('error', (err: Error) => logger.warn({ err: err.message }, 'queue error'));
    opened.push(() => queue.close());

    // Read by webhook deliveries of collection parents.
    const collectionQueue = new Queue(COLLECTION_QUEUE, { connection: queueConnection, prefix });
    collectionQueue.on('error', (err: Error) => logger.warn({ err: err.message }, 'collection queue error'));
    opened.push(() => collectionQueue.close());

    const metrics = new WorkerMetrics(() => queue.getJobCounts(...QUEUE_STATES), logger);
    // Everything a worker fetches is media (the job's streams through its proxy, covers): MEDIA_PROXY_URLS.
    const egress =
      deps.egress ??
      new Egress({
        allowlist: config.EGRESS_ALLOWLIST,
        client: config.EGRESS_CLIENT,
        purpose: 'media',
        proxies: {
          all: config.PROXY_URLS,
          extract: config.EXTRACT_PROXY_URLS,
          media: config.MEDIA_PROXY_URLS,
          ca: config.PROXY_CA_FILE,
        },
        onProxySkip: (proxy, reason) => logger.warn({ proxy, reason }, 'outbound proxy unreachable, skipped for 30 s'),
        cookies: config.COOKIES_FILE
          ? new CookieFile(config.COOKIES_FILE, { onProblem: (problem) => logger.warn(problem) })
          : undefined,
      });
    const proxy = await startJobProxy({
      egress,
      logger: logger.child({ component: 'proxy' }),
      hooks: { onBytes: (n) => metrics.proxyBytes.inc(n), onBlocked: () => metrics.proxyBlocked.inc() },
      maxSegments: config.MAX_SEGMENTS,
      fetchConcurrency: config.JOB_FETCH_CONCURRENCY,
    });
    opened.push(() => proxy.close());
    const active = new ActiveJobs();
    // Cancel signals from any gateway: one subscription per process, on a connection of its own.
    const subscriber = connectRedis(config, WAIT_OUT_OUTAGES);
    subscriber.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection problem (job signals)'));
    const signals = new JobSignalListener(subscriber, queueConnection, logger);
    opened.push(() => signals.close());
    await signals.start();
    const located = locateBinaries(config);
    const binaries = { ffmpeg: located.ffmpeg.path, ffprobe: located.ffprobe.path };
    // The versions the last successful check printed, for /healthz and the start-up log.
    let versions: { ffmpeg: string; ffprobe: string } | undefined;
    const toolHealth = async (): Promise<HealthState> => {
      const check = await checkTools(binaries);
      if (!check.ok) return { healthy: false, reason: check.reason };
      versions = check.versions;
      return { healthy: true };
    };
    const tools = () => reportBinaries(located, versions);
    let health = await toolHealth();
    // Set once the BullMQ worker exists; a job can only fail after that.
    let toolFailed: () => Promise<boolean> = async () => false;
    const reuse = new ArtifactReuse({
      redis: queueConnection,
      prefix,
      artifacts,
      artifactTtlSeconds: config.ARTIFACT_TTL_SECONDS,
    });
    const processor = createProcessor({
      config,
      dataDir: deps.dataDir ?? config.DATA_DIR,
      proxy,
      egress,
      artifacts,
      binaries,
      logger,
      metrics,
      active,
      signals,
      onToolFailure: () => toolFailed(),
      healthy: () => health.healthy,
      reuse,
    });
    const worker = new Worker<unknown, JobResult>(DOWNLOAD_QUEUE, processor, {
      connection,
      prefix,
      concurrency: config.WORKER_CONCURRENCY,
      autorun: false, // started below once ffmpeg and ffprobe are known to run
      lockDuration: deps.lockDuration ?? config.JOB_LOCK_SECONDS * 1000,
      stalledInterval: deps.stalledInterval ?? config.JOB_STALLED_CHECK_SECONDS * 1000,
      drainDelay: IDLE_POLL_SECONDS,
    });
    worker.on('error', (err) => logger.error({ err }, 'worker error'));
    countWorkerErrors(worker, DOWNLOAD_QUEUE, metrics.queueWorkerErrors);
    // Completions are counted here, after BullMQ's moveToCompleted succeeded (it checks the lock
    // token), so a job run twice around a Redis outage is counted once.
    worker.on('completed', (job) => {
      const operation = (job.data as { operation?: string } | undefined)?.operation ?? 'unknown';
      const seconds = job.finishedOn && job.processedOn ? (job.finishedOn - job.processedOn) / 1000 : 0;
      metrics.jobFinished(operation, 'completed', seconds);
      logger.info({ job: logRef(String(job.id)), operation, seconds }, 'job completed');
    });
    // A collection's child that ended for good lets the next gated sibling into the queue.
    const gate = { redis: queueConnection, queue, prefix, logger };
    const release = (job: Pick<Job, 'parent'> | undefined) => {
      if (job)
        releaseNext(job, gate).catch((err: unknown) =>
          logger.warn({ err }, 'collection gate: release failed (the delay releases it later)'),
        );
    };
    worker.on('completed', (job) => release(job));
    worker.on('failed', (job) => {
      // A failure that will be retried keeps its place; only the final one releases.
      if (job)
        void job.getState().then(
          (state) => state === 'failed' && release(job),
          () => undefined,
        );
    });
    worker.on('lockRenewalFailed', (ids: string[]) => {
      const n = active.lose(ids);
      if (n > 0)
        logger.warn({ jobs: ids.map(logRef) }, 'job locks lapsed: stopping those runs, the queue gives them out again');
    });
    opened.push(() => worker.close());
    // Deliveries need no ffmpeg: this worker sends them even while it takes no download jobs. A
    // killed worker's delivery returns to the queue when its lock lapses, as a download job does.
    const webhooks = new Worker(
      WEBHOOK_QUEUE,
      createWebhookProcessor({
        egress,
        downloads: queue,
        collections: collectionQueue,
        prefix,
        redis: queueConnection,
        secrets: config.WEBHOOK_SECRET,
        logger: logger.child({ component: 'webhooks' }),
        timeoutMs: deps.webhookTimeoutMs,
        onAttempt: (outcome) => metrics.webhookAttempts.inc({ outcome }),
      }),
      {
        connection,
        prefix,
        concurrency: 8,
        lockDuration: deps.lockDuration ?? config.JOB_LOCK_SECONDS * 1000,
        stalledInterval:
          deps.stalledInterval ?? Math.max(WEBHOOK_STALLED_CHECK_MS, config.JOB_STALLED_CHECK_SECONDS * 1000),
        drainDelay: IDLE_POLL_SECONDS,
        settings: {
          backoffStrategy: (attemptsMade: number) => deps.webhookRetryDelayMs ?? webhookRetryDelay(attemptsMade),
        },
      },
    );
    webhooks.on('error', (err) => logger.error({ err: err.message }, 'webhook worker error'));
    countWorkerErrors(webhooks, WEBHOOK_QUEUE, metrics.queueWorkerErrors);
    opened.push(() => webhooks.close());
    // Collection parents: each runs once its children are done (a flow), needs no ffmpeg, and so is
    // taken like deliveries; a killed worker's parent returns to the queue when its lock lapses.
    const collections = new Worker(
      COLLECTION_QUEUE,
      createCollectionProcessor({
        redis: queueConnection,
        prefix,
        logger: logger.child({ component: 'collections' }),
        artifacts,
        artifactTtlSeconds: config.ARTIFACT_TTL_SECONDS,
        maxBundleBytes: config.MAX_MEDIA_BYTES,
        reuse,
        metrics,
      }),
      {
        connection,
        prefix,
        concurrency: 4,
        lockDuration: deps.lockDuration ?? config.JOB_LOCK_SECONDS * 1000,
        stalledInterval: deps.stalledInterval ?? config.JOB_STALLED_CHECK_SECONDS * 1000,
        drainDelay: IDLE_POLL_SECONDS, // like the other two: BullMQ's 5 s re-polled an empty queue twice as often
      },
    );
    collections.on('error', (err) => logger.error({ err: err.message }, 'collection worker error'));
    countWorkerErrors(collections, COLLECTION_QUEUE, metrics.queueWorkerErrors);
    opened.push(() => collections.close());
    let started = false;
    const takeJobs = () => {
      if (started) return worker.resume();
      started = true;
      worker.run().catch((err: unknown) => logger.error({ err }, 'worker stopped taking jobs'));
    };
    const brokenTools =
      'ffmpeg or ffprobe cannot be run: this worker takes no jobs until they can (GET /healthz says why)';
    if (health.healthy) takeJobs();
    else logger.error({ reason: health.reason }, brokenTools);
    toolFailed = async () => {
      health = await toolHealth();
      if (health.healthy) return false;
      metrics.healthy.set(0);
      logger.error({ reason: health.reason }, brokenTools);
      // Not awaited with its running jobs: this is called from inside one of them.
      void worker.pause(true).catch((err: unknown) => logger.warn({ err }, 'could not pause'));
      return true;
    };

    const heartbeat = new Heartbeat(queueConnection, prefix, logger);
    await heartbeat.beat(health);
    heartbeat.every(deps.heartbeatMs ?? WORKER_HEARTBEAT_SECONDS * 1000, async () => {
      if (!health.healthy) {
        health = await toolHealth();
        if (health.healthy) {
          logger.info('ffmpeg and ffprobe run now: taking jobs');
          takeJobs();
        }
      }
      metrics.healthy.set(health.healthy ? 1 : 0);
      await heartbeat.beat(health);
    });
    opened.push(() => heartbeat.stop());
    const timer = setInterval(
      () => housekeeping().catch((err: unknown) => logger.error({ err }, 'housekeeping failed')),
      deps.housekeepingMs ?? 60_000,
    );
    timer.unref();
    opened.push(async () => clearInterval(timer));

    metrics.healthy.set(health.healthy ? 1 : 0);
    const server = await startHealthServer({
      port: deps.metricsPort ?? config.METRICS_PORT,
      host: config.HOST,
      metrics,
      health: () => health,
      tools,
      logger,
    });
    const { port } = server;
    logger.info(
      { port, concurrency: config.WORKER_CONCURRENCY, healthy: health.healthy, ...tools() },
      'worker started',
    );

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
        await Promise.all([worker.close(), webhooks.close()]);
      } finally {
        clearTimeout(grace);
      }
      await server.close();
      await closeOpened(); // heartbeat, timer, proxy, queue, then the Redis connections
      logger.info('stopped');
    };

    return {
      worker,
      metricsUrl: `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`,
      health: () => health,
      stop: () => (stopping ??= stop()),
    };
  }
}
