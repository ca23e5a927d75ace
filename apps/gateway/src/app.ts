// The gateway app factory: every dependency is passed in, so tests build the real app with a real
// Redis and no globals. main.ts does the wiring for production.
import { Queue } from 'bullmq';
import express, { type Express } from 'express';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { createAccountServices } from '@reelay/accounts';
import { createArtifactStore, type ArtifactStore } from '@reelay/artifacts';
import { DOWNLOAD_QUEUE } from '@reelay/contracts';
import type { Config } from '@reelay/config';
import { Egress } from '@reelay/egress';
import { createRegistry, locateYtdlp, YTDLP_TIMEOUT_MS, type ExtractorRegistry, type YtdlpOptions } from '@reelay/extractors';
import type { Logger } from '@reelay/observability';
import { SourceRegistry } from '@reelay/sources';
import { accessLog } from './http/access-log.js';
import { bodyErrors, jsonBody, requireJson } from './http/body.js';
import { errorHandler, notFound } from './http/errors.js';
import { requestId } from './http/request-id.js';
import { responseCheck, type MismatchReporter } from './http/response-check.js';
import { expressPath, type RouteSpec } from './http/route.js';
import { GatewayMetrics } from './metrics.js';
import { buildOpenApi } from './openapi.js';
import { accountRoutes } from './routes/account.js';
import { downloadRoutes } from './routes/download.js';
import { extractRoutes } from './routes/extract.js';
import { platformRoutes } from './routes/platforms.js';
import { healthRoutes, readWorkerHealth, type ReadinessProbe } from './routes/health.js';
import { surfaceARoutes } from './routes/surface-a.js';
import { webRoutes } from './routes/web.js';
import { DownloadService } from './services/download.js';
import { ExtractService } from './services/extract.js';
import { JobService } from './services/jobs.js';

export const VERSION = '0.1.0';

const OpenApiDocumentSchema = z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }).meta({ id: 'OpenApiDocument' });

export interface GatewayDeps {
  config: Config;
  redis: Redis;
  logger: Logger;
  registry?: ExtractorRegistry;
  egress?: Egress;
  metrics?: GatewayMetrics;
  readiness?: ReadinessProbe;
  artifacts?: ArtifactStore;
  /** BullMQ key prefix (tests isolate themselves with their own). */
  queuePrefix?: string;
  /** Called for each response that its route spec does not document (tests fail on any). */
  onResponseMismatch?: MismatchReporter;
}

export interface Gateway {
  app: Express;
  metrics: GatewayMetrics;
  routes: RouteSpec[];
  queue: Queue;
  /** Closes what the gateway opened itself (the queue, yt-dlp's proxy); the Redis client is the caller's. */
  close(): Promise<void>;
}

export function createGateway(deps: GatewayDeps): Gateway {
  const { config, redis, logger } = deps;
  const metrics = deps.metrics ?? new GatewayMetrics();
  const egress = deps.egress ?? new Egress({ allowlist: config.EGRESS_ALLOWLIST });
  const sources = new SourceRegistry(redis, config.SOURCE_TTL_SECONDS);
  const registry = deps.registry ?? createRegistry({ ytdlp: ytdlpOptions(config, egress, logger) });
  const extractService = new ExtractService({
    registry,
    // A yt-dlp run may take its whole time limit after the page was fetched.
    timeoutMs: registry.fallback?.takesLeftovers ? YTDLP_TIMEOUT_MS + 15_000 : undefined,
    egress,
    sources,
    metrics,
    logger,
    endpoints: config.platformEndpoints,
  });
  const accounts = createAccountServices(redis, {
    limits: { keyPerMinute: config.RATE_LIMIT_KEY_PER_MIN, publicPerMinute: config.RATE_LIMIT_PUBLIC_PER_MIN },
  });

  // The queue shares the gateway's fail-fast client: producers never block, and a Redis outage
  // answers 503 at once.
  const queue = new Queue(DOWNLOAD_QUEUE, { connection: redis, prefix: deps.queuePrefix });
  // Without a listener an 'error' (Redis down) is printed as a raw stack trace on every retry.
  queue.on('error', (err: Error) => logger.warn({ err: err.message }, 'job queue: redis connection problem'));
  const artifacts = deps.artifacts ?? createArtifactStore(config);
  const jobs = new JobService(queue, artifacts);
  const downloads = new DownloadService({
    sources,
    queue,
    redis,
    jobTimeoutSeconds: config.JOB_TIMEOUT_SECONDS,
    artifactTtlSeconds: config.ARTIFACT_TTL_SECONDS,
    jobAlive: (id) => jobs.alive(id),
  });
  const readiness: ReadinessProbe = deps.readiness ?? { workers: async () => (await queue.getWorkers()).length, workerHealth: () => readWorkerHealth(redis, deps.queuePrefix) };

  const routes: RouteSpec[] = [
    // METRICS_PUBLIC=false: /metrics only on METRICS_PORT (main.ts), not on the public port.
    ...healthRoutes(redis, metrics, readiness).filter((r) => config.METRICS_PUBLIC || r.path !== '/metrics'),
    ...extractRoutes(extractService),
    ...platformRoutes(registry),
    ...surfaceARoutes(extractService, { gate: accounts.gate, usage: accounts.usage, metrics, logger }),
    ...accountRoutes(accounts, metrics),
    ...downloadRoutes({ downloads, jobs, egress, metrics, maxMediaBytes: config.MAX_MEDIA_BYTES, artifacts, artifactDelivery: config.ARTIFACT_DELIVERY }),
    ...webRoutes(),
  ];
  let openapi: unknown;
  routes.push({
    method: 'get',
    path: '/api/openapi.json',
    tag: 'operations',
    summary: 'This OpenAPI document',
    responses: { 200: { description: 'OpenAPI 3.1 document', schema: OpenApiDocumentSchema } },
    handler: (_req, res) => res.json((openapi ??= buildOpenApi(routes, { version: VERSION }))),
  });

  metrics.knownRoutes(routes);

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY);
  app.set('etag', false);
  app.use(requestId);
  app.use(accessLog(logger));
  app.use(metrics.middleware);
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  if (deps.onResponseMismatch) {
    for (const route of routes) app[route.method](expressPath(route.path), responseCheck(route, deps.onResponseMismatch));
  }
  // Route guards (keys, limits, sessions, same-origin) run before the body is read: a refusal costs
  // no parsing and answers the same whatever the body.
  for (const route of routes) if (route.before?.length) app[route.method](expressPath(route.path), ...route.before);
  app.use(requireJson, jsonBody, bodyErrors);
  for (const route of routes) app[route.method](expressPath(route.path), route.handler);
  app.use(notFound);
  app.use(errorHandler(logger));
  const close = async () => {
    await queue.close();
    if (!deps.artifacts) artifacts.close?.(); // an S3 client's sockets; a store passed in is the caller's
    if (!deps.registry) await registry.close(); // yt-dlp's proxy; a registry passed in is the caller's
  };
  return { app, metrics, routes, queue, close };
}

/** yt-dlp as the registry's fallback: YTDLP_PATH, else `yt-dlp` on PATH, for YTDLP_HOSTS and leftovers. */
function ytdlpOptions(config: Config, egress: Egress, logger: Logger): YtdlpOptions {
  const found = locateYtdlp(config.YTDLP_PATH, config.childEnv.PATH ?? '');
  if (found.problem) logger.warn(`${found.problem}: URLs that need yt-dlp will answer no_media_found`);
  else if (!found.binary) logger.info('yt-dlp not found: YTDLP_HOSTS URLs will answer no_media_found');
  return { binary: found.binary, hosts: config.YTDLP_HOSTS, baseEnv: config.childEnv, egress, logger: logger.child({ component: 'ytdlp-proxy' }) };
}

export function createApp(deps: GatewayDeps): Express {
  return createGateway(deps).app;
}
