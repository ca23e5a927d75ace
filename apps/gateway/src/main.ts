// Gateway entry point: read config, connect Redis, listen, and on SIGTERM/SIGINT stop accepting,
// let in-flight requests finish within a grace period, then close connections and exit 0.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import { hasRedis, loadConfig } from '@reelay/config';
import { createLogger } from '@reelay/observability';
import { createGateway } from './app.js';
import { startSubscriptionChecks } from './services/subscription-check.js';
import { answerClientErrors } from './http/client-error.js';
import { serveMetrics } from './metrics.js';
import { connectRedis, FAIL_FAST, redisReady } from '@reelay/redis';

const GRACE_MS = 10_000;

// The old generation may grow to 2× what the last full GC kept, not V8's default of up to 4×:
// under the extract benchmark the gateway's RSS peaks at ~185 MB instead of ~260 MB, at the same
// throughput. A growth factor, not a cap (--max-old-space-size): a burst of large pages still gets
// the memory it needs instead of a fatal out-of-memory. 1.5× kept ~165 MB but made direct streams
// cost 40% more CPU (their socket buffers trigger GCs sooner); at 2× they cost what they do without
// the flag. Read by V8 at every GC, so setting it here, before the gateway allocates, takes effect
// (bench/extract.mjs and bench/download.mjs measure both sides).
v8.setFlagsFromString('--heap-growing-percent=100');

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ name: 'gateway', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  if (!hasRedis(config)) {
    logger.fatal(
      'REDIS_URL (or REDIS_SENTINELS) is not set. Set it to a Redis >= 6.2, or run `pnpm start`, which starts a private redis-server.',
    );
    process.exit(2);
  }
  const redis = connectRedis(config, FAIL_FAST); // a request answers 503 at once while Redis is away
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection problem'));
  await redisReady(redis).catch((err: Error) => {
    logger.fatal(
      { err: err.message, redis: config.REDIS_URL ? redactUrl(config.REDIS_URL) : config.REDIS_SENTINELS },
      'cannot reach Redis',
    );
    process.exit(1);
  });

  const gateway = createGateway({ config, redis, logger });
  // Every replica takes a share of the subscriptions' scheduled checks (one runs each period).
  const checks = startSubscriptionChecks(gateway.subscriptions.checker, {
    redis,
    logger,
    prefix: gateway.queuePrefix,
    errors: gateway.metrics.queueWorkerErrors,
  });
  // Node checks the headers and request timeouts only every connectionsCheckingInterval (30 s by
  // default), so a client trickling its headers held a connection 20-50 s; checked each second it
  // is cut at 20-21 s with the 408 envelope (answerClientErrors).
  const server = http.createServer(
    { headersTimeout: 20_000, requestTimeout: 30_000, keepAliveTimeout: 5_000, connectionsCheckingInterval: 1_000 },
    gateway.app,
  );
  server.listen(config.PORT, config.HOST);
  answerClientErrors(server, gateway.allowedMethods);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const metricsServer = config.METRICS_PUBLIC
    ? undefined
    : await serveMetrics(gateway.metrics.registry, config.HOST, config.METRICS_PORT);
  if (metricsServer)
    logger.info(
      { port: (metricsServer.address() as AddressInfo).port },
      'metrics served on their own port only (METRICS_PUBLIC=false)',
    );
  logger.info(
    { host: config.HOST, port, ...gateway.binaries },
    `gateway listening on http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`,
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: no new connections, finishing requests in flight');
    const force = setTimeout(() => {
      logger.warn('grace period over; closing remaining connections');
      server.closeAllConnections();
    }, GRACE_MS);
    force.unref();
    server.close(async () => {
      clearTimeout(force);
      // The clean-up talks to Redis, which may be gone: it never holds the exit past 10 s.
      setTimeout(() => {
        logger.warn('clean-up did not finish in 10 s; exiting');
        process.exit(0);
      }, 10_000).unref();
      await checks.close().catch(() => undefined);
      await redis.quit().catch(() => redis.disconnect());
      logger.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
    void gateway.events.close(); // open event streams end; their clients resume on another replica
    metricsServer?.close();
    metricsServer?.closeAllConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

main().catch((err) => {
  process.stderr.write(`gateway failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
