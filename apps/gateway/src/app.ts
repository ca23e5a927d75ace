// The gateway app factory: every dependency is passed in, so tests build the real app with a real
// Redis and no globals. main.ts does the wiring for production.
import { FlowProducer, Queue } from 'bullmq';
import express, { type Express } from 'express';
import { defaultQueuePrefix, withoutHashTags, type RedisClient } from '@reelay/redis';
import { z } from 'zod';
import {
  createAccountServices,
  GithubProvider,
  Mailer,
  OidcProvider,
  PasskeyStore,
  relyingParty,
  SocialFlows,
  type SocialProvider,
} from '@reelay/accounts';
import { createArtifactStore, type ArtifactStore } from '@reelay/artifacts';
import { COLLECTION_QUEUE, DOWNLOAD_QUEUE, SubscriptionEverySchema, WEBHOOK_QUEUE } from '@reelay/contracts';
import { CollectionDownloads } from './services/collection-download.js';
import type { Config } from '@reelay/config';
import { CookieFile, Egress } from '@reelay/egress';
import {
  createRegistry,
  locateYtdlp,
  YTDLP_TIMEOUT_MS,
  type ExtractorRegistry,
  type YtdlpOptions,
} from '@reelay/extractors';
import { locateBinaries, reportBinaries } from '@reelay/media';
import type { Logger } from '@reelay/observability';
import { SourceRegistry } from '@reelay/sources';
import { accessLog } from './http/access-log.js';
import { bodyErrors, jsonBody, requireJson } from './http/body.js';
import { errorHandler, notFound } from './http/errors.js';
import { allowedMethods, methodNotAllowed, type AllowedMethods } from './http/methods.js';
import { requestId } from './http/request-id.js';
import { responseCheck, type MismatchReporter } from './http/response-check.js';
import { surfaceGate } from './http/surface-gate.js';
import { countKeyUsage } from './http/key-usage.js';
import { expressPath, refuseUnknownFields, type RouteSpec } from './http/route.js';
import { GatewayMetrics } from './metrics.js';
import { buildOpenApi } from './openapi.js';
import { statedLimits } from './openapi-limits.js';
import { attachExamples } from './openapi-examples.js';
import { accountRoutes } from './routes/account.js';
import { accountLifecycleRoutes } from './routes/account-lifecycle.js';
import { accountPasswordRoutes } from './routes/account-password.js';
import { AccountMail } from './services/account-mail.js';
import { oauthRoutes } from './routes/account-oauth.js';
import { passkeyRoutes } from './routes/account-passkeys.js';
import { egressFetch } from './services/egress-fetch.js';
import { downloadRoutes } from './routes/download.js';
import { downloadStreamRoute } from './routes/download-stream.js';
import { docsRoutes } from './routes/docs.js';
import { extractRoutes } from './routes/extract.js';
import { jobEventRoutes } from './routes/job-events.js';
import { jobControlRoutes } from './routes/job-control.js';
import { JobControl } from './services/job-control.js';
import { JobGrants } from './services/job-grants.js';
import type { EventStreamOptions } from './http/sse.js';
import { JobEventHub } from './services/job-events.js';
import { platformRoutes } from './routes/platforms.js';
import { healthRoutes, readWorkerHealth, type ReadinessProbe } from './routes/health.js';
import { surfaceARoutes } from './routes/surface-a.js';
import { notFoundPage, webRoutes } from './routes/web.js';
import { ClientJobs } from './services/client-jobs.js';
import { DownloadService } from './services/download.js';
import { ExtractService } from './services/extract.js';
import { ExtractCache } from './services/extract-cache.js';
import { CursorSigner } from './services/collection-cursor.js';
import { JobService } from './services/jobs.js';
import { subscriptionRoutes } from './routes/subscriptions.js';
import { SubscriptionChecker } from './services/subscription-check.js';
import { SUBSCRIPTION_QUEUE, SubscriptionStore } from './services/subscriptions.js';

export const VERSION = '0.1.0';

const OpenApiDocumentSchema = z
  .looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) })
  .meta({ id: 'OpenApiDocument' });

export interface GatewayDeps {
  config: Config;
  redis: RedisClient;
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
  /** Job event streams: heartbeat interval and unsent-bytes bound (tests shorten them). */
  eventStream?: Partial<EventStreamOptions>;
  /** How long a collection download's request may spend resolving entries that name no files (default 60 s; tests shorten it). */
  collectionResolveMs?: number;
}

export interface Gateway {
  app: Express;
  /** Which ffmpeg and ffprobe this host resolves (for /healthz and the start-up log). */
  binaries: ReturnType<typeof reportBinaries>;
  metrics: GatewayMetrics;
  routes: RouteSpec[];
  queue: Queue;
  /** The methods each path serves (405's Allow header), for the server's CONNECT answer too. */
  allowedMethods: AllowedMethods;
  /** The one reader of job changes that all event streams of this process share. */
  events: JobEventHub;
  /** Closes what the gateway opened itself (the queue, yt-dlp's proxy); the Redis client is the caller's. */
  close(): Promise<void>;
  /** A collection's entries, page by page (for collection downloads and subscriptions). */
  collections: Pick<ExtractService, 'listCollection'>;
  /** Subscriptions: their store and the check that startSubscriptionChecks runs on schedule. */
  subscriptions: { store: SubscriptionStore; checker: SubscriptionChecker };
  /** The BullMQ prefix of every queue (undefined: BullMQ's `bull`), for workers started beside it. */
  queuePrefix?: string;
}

export function createGateway(deps: GatewayDeps): Gateway {
  const { config, redis, logger } = deps;
  const queuePrefix = deps.queuePrefix ?? defaultQueuePrefix(config);
  const metrics = deps.metrics ?? new GatewayMetrics();
  const cookies = config.COOKIES_FILE
    ? new CookieFile(config.COOKIES_FILE, { onProblem: (problem) => logger.warn(problem) })
    : undefined;
  const egress =
    deps.egress ??
    new Egress({
      allowlist: config.EGRESS_ALLOWLIST,
      client: config.EGRESS_CLIENT,
      proxies: {
        all: config.PROXY_URLS,
        extract: config.EXTRACT_PROXY_URLS,
        media: config.MEDIA_PROXY_URLS,
        ca: config.PROXY_CA_FILE,
      },
      onProxySkip: (proxy, reason) => logger.warn({ proxy, reason }, 'outbound proxy unreachable, skipped for 30 s'),
      cookies,
      pacing: {
        concurrency: config.PACING_CONCURRENCY_PER_PLATFORM,
        onOutcome: (platform, outcome) => metrics.platformRequests.inc({ platform, outcome }),
      },
    });
  const sources = new SourceRegistry(redis, config.SOURCE_TTL_SECONDS);
  const registry = deps.registry ?? createRegistry({ ytdlp: { ...ytdlpOptions(config, egress, logger), cookies } });
  // A yt-dlp run may take its whole time limit after the page was fetched.
  const extractTimeoutMs = registry.fallback?.takesLeftovers ? YTDLP_TIMEOUT_MS + 15_000 : 30_000;
  // Waiters give a fetch on another replica its whole deadline, plus the lock's lapse if it died.
  const extractCache = new ExtractCache(redis, {
    ttlSeconds: config.EXTRACT_CACHE_SECONDS,
    waitMs: extractTimeoutMs + 5_000,
    logger,
  });
  const extractService = new ExtractService({
    registry,
    timeoutMs: extractTimeoutMs,
    cache: extractCache,
    egress,
    sources,
    metrics,
    logger,
    endpoints: config.platformEndpoints,
    maxSegments: config.MAX_SEGMENTS,
    maxEntries: config.MAX_COLLECTION_ENTRIES,
    cursors: new CursorSigner(config.COLLECTION_CURSOR_SECRET),
  });
  const accounts = createAccountServices(redis, {
    limits: {
      keyPerMinute: config.RATE_LIMIT_KEY_PER_MIN,
      publicPerMinute: config.RATE_LIMIT_PUBLIC_PER_MIN,
      v1PerMinute: config.RATE_LIMIT_V1_PER_MIN,
      subscriptionsPerMinute: config.RATE_LIMIT_SUBSCRIPTIONS_PER_MIN,
    },
  });
  // Account mail (verification, reset, notices) when SMTP is configured; config makes PUBLIC_URL required then.
  const accountMail =
    config.SMTP_URL && config.MAIL_FROM && config.PUBLIC_URL
      ? new AccountMail(
          new Mailer({ smtpUrl: config.SMTP_URL, from: config.MAIL_FROM }),
          accounts,
          config.PUBLIC_URL,
          logger.child({ component: 'account-mail' }),
        )
      : undefined;
  const social = socialProviders(config, egress);
  // Passkeys need the relying party's id and origin: PUBLIC_URL.
  const passkeys = config.PUBLIC_URL ? new PasskeyStore(redis, relyingParty(config.PUBLIC_URL)) : undefined;
  if (passkeys) {
    accounts.deletionHooks.push((account) => passkeys.removeAll(account.id));
    // Anyone signed in before an address is proven could have added one (@reelay/accounts proof.ts).
    accounts.proofHooks.push((account) => passkeys.removeAll(account.id));
  }
  const gateDeps = { gate: accounts.gate, metrics, logger };
  // Surface B's limit per client address; 0 turns it off (no middleware, no Redis round trip).
  const v1Limit = config.RATE_LIMIT_V1_PER_MIN > 0 ? surfaceGate('v1', gateDeps) : undefined;
  // The subscriptions API's, the same way (RATE_LIMIT_SUBSCRIPTIONS_PER_MIN).
  const subscriptionLimit =
    config.RATE_LIMIT_SUBSCRIPTIONS_PER_MIN > 0 ? surfaceGate('subscriptions', gateDeps) : undefined;

  // The queue shares the gateway's fail-fast client: producers never block, and a Redis outage
  // answers 503 at once.
  const queue = new Queue(DOWNLOAD_QUEUE, { connection: redis, prefix: queuePrefix });
  // Without a listener an 'error' (Redis down) is printed as a raw stack trace on every retry.
  queue.on('error', (err: Error) => logger.warn({ err: err.message }, 'job queue: redis connection problem'));
  const artifacts = deps.artifacts ?? createArtifactStore(config);
  // Webhook deliveries: added with their job as one flow, read for the Job's webhook field.
  const flows = new FlowProducer({ connection: redis, prefix: queuePrefix });
  flows.on('error', (err: Error) => logger.warn({ err: err.message }, 'job flows: redis connection problem'));
  const webhooks = new Queue(WEBHOOK_QUEUE, { connection: redis, prefix: queuePrefix });
  webhooks.on('error', (err: Error) => logger.warn({ err: err.message }, 'webhook queue: redis connection problem'));
  // Collection parents: each waits in COLLECTION_QUEUE for its children (collection-download.ts).
  const collectionQueue = new Queue(COLLECTION_QUEUE, { connection: redis, prefix: queuePrefix });
  collectionQueue.on('error', (err: Error) =>
    logger.warn({ err: err.message }, 'collection queue: redis connection problem'),
  );
  const jobs = new JobService(queue, artifacts, webhooks, redis, { queue: collectionQueue, prefix: queuePrefix });
  // A job's control record outlives any job: the longest recording, its attempts' timeouts and a day
  // of waiting in the queue (collection entries behind the gate included).
  const grants = new JobGrants(
    redis,
    config.MAX_RECORD_SECONDS + 3 * config.JOB_TIMEOUT_SECONDS + config.ARTIFACT_TTL_SECONDS + 86_400,
  );
  const control = new JobControl(queue, redis, jobs, grants, {
    onCancel: (state) => metrics.jobCancels.inc({ state }),
  });
  const events = new JobEventHub(queue, redis, jobs, logger, collectionQueue);
  // Kept past any job's life: the queue's wait is unbounded, so a day beyond its attempts' timeouts.
  const clientJobs =
    config.MAX_ACTIVE_JOBS_PER_CLIENT > 0
      ? new ClientJobs(redis, queue, {
          limit: config.MAX_ACTIVE_JOBS_PER_CLIENT,
          expirySeconds: 3 * config.JOB_TIMEOUT_SECONDS + 86_400,
          others: [collectionQueue],
          prefix: clientJobsPrefix(queuePrefix),
        })
      : undefined;
  const downloads = new DownloadService({
    sources,
    queue,
    redis,
    jobTimeoutSeconds: config.JOB_TIMEOUT_SECONDS,
    artifactTtlSeconds: config.ARTIFACT_TTL_SECONDS,
    jobAlive: (id) => jobs.alive(id),
    flows,
    maxRecordSeconds: config.MAX_RECORD_SECONDS,
    clientJobs,
    grants,
  });
  const collectionDownloads = new CollectionDownloads({
    extracts: extractService,
    downloads,
    flows,
    queue,
    redis,
    prefix: queuePrefix,
    maxEntries: config.MAX_COLLECTION_ENTRIES,
    concurrency: config.COLLECTION_CONCURRENCY,
    resolveBudgetMs: deps.collectionResolveMs,
    jobTimeoutSeconds: config.JOB_TIMEOUT_SECONDS,
    artifactTtlSeconds: config.ARTIFACT_TTL_SECONDS,
    clientJobs,
    grants,
  });
  // Subscriptions: one job scheduler each on their own queue (services/subscriptions.ts).
  const subscriptionQueue = new Queue(SUBSCRIPTION_QUEUE, { connection: redis, prefix: queuePrefix });
  subscriptionQueue.on('error', (err: Error) =>
    logger.warn({ err: err.message }, 'subscription queue: redis connection problem'),
  );
  const subscriptionStore = new SubscriptionStore(redis, subscriptionQueue, jobs);
  // DESIGN.md: deleting an account removes its subscriptions (their seen entries and schedules too).
  accounts.deletionHooks.push(async (account) => void (await subscriptionStore.deleteForAccount(account.id)));
  const subscriptionChecker = new SubscriptionChecker({
    store: subscriptionStore,
    extracts: extractService,
    downloads,
    maxItemsPerCheck: config.MAX_ITEMS_PER_CHECK,
    maxEntries: config.MAX_COLLECTION_ENTRIES,
    logger: logger.child({ component: 'subscriptions' }),
  });
  // The gateway runs no ffmpeg itself; its /healthz says what this host would run (no version).
  const binaries = reportBinaries(locateBinaries(config));
  const readiness: ReadinessProbe = deps.readiness ?? {
    workers: async () => (await queue.getWorkers()).length,
    workerHealth: () => readWorkerHealth(redis, queuePrefix),
  };

  // What the OpenAPI document states as the limits: this server's own numbers.
  const stated = statedLimits(config);
  const routes: RouteSpec[] = [
    // METRICS_PUBLIC=false: /metrics only on METRICS_PORT (main.ts), not on the public port.
    ...healthRoutes(redis, metrics, readiness, binaries).filter((r) => config.METRICS_PUBLIC || r.path !== '/metrics'),
    ...extractRoutes(extractService, v1Limit, stated),
    ...platformRoutes(registry),
    ...surfaceARoutes(extractService, gateDeps, stated),
    ...accountRoutes(accounts, metrics, {
      mailEnabled: Boolean(accountMail),
      onSignup: (account) => accountMail?.verification(account),
      providerName: (id) => social.find((p) => p.id === id)?.name ?? id,
    }),
    ...accountLifecycleRoutes(accounts, metrics),
    ...accountPasswordRoutes(accounts, metrics, accountMail),
    ...oauthRoutes({
      services: accounts,
      providers: social,
      flows: new SocialFlows(redis),
      publicUrl: config.PUBLIC_URL ?? '',
      metrics,
      logger,
      mail: accountMail,
      passkeyCount: (id) => passkeys?.count(id) ?? Promise.resolve(0),
      features: { mail: Boolean(accountMail), passkeys: Boolean(passkeys) },
    }),
    ...passkeyRoutes(accounts, metrics, passkeys),
    ...downloadRoutes({
      downloads,
      jobs,
      egress,
      metrics,
      webhookSecret: config.WEBHOOK_SECRET.length > 0,
      maxMediaBytes: config.MAX_MEDIA_BYTES,
      artifacts,
      artifactDelivery: config.ARTIFACT_DELIVERY,
      limit: v1Limit,
      extracts: extractService,
      collections: collectionDownloads,
      maxCollectionEntries: config.MAX_COLLECTION_ENTRIES,
      owners: { redis, sessions: accounts.sessions },
      stated,
    }),
    downloadStreamRoute({
      downloads,
      egress,
      metrics,
      maxMediaBytes: config.MAX_MEDIA_BYTES,
      extracts: extractService,
      limit: v1Limit,
    }),
    ...jobEventRoutes({ jobs, hub: events, metrics, logger, stream: deps.eventStream }),
    ...jobControlRoutes(control, { redis, sessions: accounts.sessions }),
    ...subscriptionRoutes({
      store: subscriptionStore,
      checker: subscriptionChecker,
      extracts: extractService,
      egress,
      redis,
      sessions: accounts.sessions,
      maxPerAccount: config.MAX_SUBSCRIPTIONS_PER_ACCOUNT,
      limit: subscriptionLimit,
      minEvery: config.SUBSCRIPTION_MIN_EVERY_SECONDS,
      webhookSecret: config.WEBHOOK_SECRET.length > 0,
    }),
    ...webRoutes(),
    ...docsRoutes(),
  ];
  let openapi: unknown;
  routes.push({
    method: 'get',
    path: '/api/openapi.json',
    tag: 'Operations',
    summary: 'This OpenAPI document',
    responses: { 200: { description: 'OpenAPI 3.1 document', schema: OpenApiDocumentSchema } },
    handler: (_req, res) =>
      res.json(
        (openapi ??= buildOpenApi(routes, {
          version: VERSION,
          limits: stated,
          settings: new Map([[SubscriptionEverySchema, { minimum: config.SUBSCRIPTION_MIN_EVERY_SECONDS }]]),
        })),
      ),
  });

  attachExamples(routes);
  metrics.knownRoutes(routes);

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY);
  app.set('etag', false);
  app.use(requestId);
  app.use(accessLog(logger, { routeOf: (method, path) => metrics.routeOf(method, path) }));
  app.use(metrics.middleware);
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  if (deps.onResponseMismatch) {
    for (const route of routes)
      app[route.method](expressPath(route.path), responseCheck(route, deps.onResponseMismatch));
  }
  // Every request made with an API key to a route that takes one counts for the key, refused or not.
  const keyUsage = countKeyUsage({ usage: accounts.usage, logger });
  // A route that takes a key among other ways in (download, cancel, stop) counts the requests made with one.
  const takesKey = (auth: RouteSpec['auth']) => auth === 'apiKey' || (Array.isArray(auth) && auth.includes('apiKey'));
  for (const route of routes) if (takesKey(route.auth)) app[route.method](expressPath(route.path), keyUsage);
  // Route guards (keys, limits, sessions, same-origin) run before the body is read: a refusal costs
  // no parsing and answers the same whatever the body.
  for (const route of routes) if (route.before?.length) app[route.method](expressPath(route.path), ...route.before);
  app.use(requireJson, jsonBody, bodyErrors);
  // Every route with a body refuses fields its schema does not take, as the document says.
  for (const route of routes)
    if (route.body) app[route.method](expressPath(route.path), refuseUnknownFields(route.body));
  for (const route of routes) app[route.method](expressPath(route.path), route.handler);
  const allowed = allowedMethods(routes);
  app.use(methodNotAllowed(allowed));
  app.use(notFoundPage());
  app.use(notFound);
  app.use(errorHandler(logger));
  const close = async () => {
    await events.close();
    await queue.close();
    await webhooks.close();
    await subscriptionQueue.close();
    await collectionQueue.close();
    await flows.close();
    await extractCache.close(); // its subscriber connection, opened on the first shared wait
    accountMail?.close();
    if (!deps.artifacts) artifacts.close?.(); // an S3 client's sockets; a store passed in is the caller's
    if (!deps.registry) await registry.close(); // yt-dlp's proxy; a registry passed in is the caller's
  };
  return {
    app,
    binaries,
    metrics,
    routes,
    queue,
    allowedMethods: allowed,
    events,
    close,
    collections: extractService,
    subscriptions: { store: subscriptionStore, checker: subscriptionChecker },
    queuePrefix,
  };
}

/** The social sign-in providers of OIDC_PROVIDERS and GITHUB_CLIENT_ID, reached through the guarded egress. */
function socialProviders(config: Config, egress: Egress): SocialProvider[] {
  const fetch = egressFetch(egress);
  const providers: SocialProvider[] = (config.OIDC_PROVIDERS ?? []).map(
    (settings) => new OidcProvider(settings, fetch),
  );
  if (config.GITHUB_CLIENT_ID && config.GITHUB_CLIENT_SECRET) {
    providers.push(
      new GithubProvider(
        {
          clientId: config.GITHUB_CLIENT_ID,
          clientSecret: config.GITHUB_CLIENT_SECRET,
          oauthUrl: config.GITHUB_OAUTH_URL,
          apiUrl: config.GITHUB_API_URL,
        },
        fetch,
      ),
    );
  }
  return providers;
}

/** yt-dlp as the registry's fallback: YTDLP_PATH, else `yt-dlp` on PATH, for YTDLP_HOSTS and leftovers. */
function ytdlpOptions(config: Config, egress: Egress, logger: Logger): YtdlpOptions {
  const found = locateYtdlp(config.YTDLP_PATH, config.childEnv.PATH ?? '');
  if (found.problem) logger.warn(`${found.problem}: URLs that need yt-dlp will answer no_media_found`);
  else if (!found.binary) logger.info('yt-dlp not found: YTDLP_HOSTS URLs will answer no_media_found');
  return {
    binary: found.binary,
    hosts: config.YTDLP_HOSTS,
    baseEnv: config.childEnv,
    limits: { memoryMb: config.JOB_MAX_MEMORY_MB, cpuSeconds: config.JOB_MAX_CPU_SECONDS },
    egress,
    logger: logger.child({ component: 'ytdlp-proxy' }),
  };
}

export function createApp(deps: GatewayDeps): Express {
  return createGateway(deps).app;
}

/**
 * Each deployment's job slots beside its queues: a client's ids are pruned against this queue prefix's
 * jobs, so slots shared across prefixes would count another deployment's jobs as never enqueued.
 */
function clientJobsPrefix(queuePrefix: string | undefined): string | undefined {
  // Without the prefix's braces: on a cluster each client's set is a key of its own slot, not one
  // more key in the queues' slot.
  return queuePrefix && queuePrefix !== 'bull' ? `reelay:${withoutHashTags(queuePrefix)}:client-jobs:` : undefined;
}
