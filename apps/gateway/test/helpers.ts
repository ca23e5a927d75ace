// Builds the real gateway for tests: real Redis (the run's private server), silent logs, the local
// origin allow-listed.
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type request from 'supertest';
import { parseConfig, type Config } from '@reelay/config';
import { Egress } from '@reelay/egress';
import { createLogger } from '@reelay/observability';
import { connectRedis, hashTag, redisReady, type RedisClient } from '@reelay/redis';
import { createGateway, type Gateway, type GatewayDeps } from '../src/index.js';

export interface TestGateway extends Gateway {
  redis: RedisClient;
  config: Config;
  close(): Promise<void>;
}

/**
 * The limits per client address are off (surface B's and the subscriptions API's) or out of reach (the playground's and a
 * keyless /api's, 1000 a minute) unless a test sets them: every test file is the same address
 * (127.0.0.1) on one shared Redis, so a whole run would add up to one client's minute, and a test
 * would meet 429 for what other files did in the same minute. Tests of the limits themselves give
 * each request an address of its own (TRUST_PROXY and X-Forwarded-For) and set the limit.
 * The extract cache is off too: elsewhere a second extract of a URL must reach its origin.
 */
export function testConfig(env: Record<string, string> = {}): Config {
  return parseConfig({
    PATH: process.env.PATH,
    REDIS_URL: process.env.REDIS_URL,
    EGRESS_ALLOWLIST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_V1_PER_MIN: '0',
    RATE_LIMIT_SUBSCRIPTIONS_PER_MIN: '0',
    RATE_LIMIT_PUBLIC_PER_MIN: '1000',
    MAX_ACTIVE_JOBS_PER_CLIENT: '0',
    EXTRACT_CACHE_SECONDS: '0',
    ...env,
  });
}

/** A client with the production options, ready before it is returned. */
export async function testRedis(url = process.env.REDIS_URL!): Promise<RedisClient> {
  const redis = connectRedis(url);
  redis.on('error', () => {}); // fault tests stop servers on purpose
  await redisReady(redis);
  return redis;
}

export async function buildGateway(
  options: { env?: Record<string, string>; redis?: RedisClient; deps?: Partial<GatewayDeps> } = {},
): Promise<TestGateway> {
  const config = testConfig(options.env);
  const redis = options.redis ?? (await testRedis());
  const logger = createLogger({ name: 'gateway-test', level: 'silent' });
  const egress = new Egress({ allowlist: config.EGRESS_ALLOWLIST, responseTimeoutMs: 1500, idleTimeoutMs: 1500 });
  // Each gateway gets its own queue prefix, so tests of different files never share jobs. Braces:
  // a hash tag, so that the queues work on a Redis Cluster too (REELAY_TEST_REDIS=cluster).
  const queuePrefix = options.deps?.queuePrefix ?? hashTag(`test-${randomBytes(4).toString('hex')}`);
  // Every response a test receives is also checked against what its route documents (status and
  // schema); closing the gateway fails the test file when any was not.
  const mismatches = new Set<string>();
  const gateway = createGateway({
    config,
    redis,
    logger,
    egress,
    queuePrefix,
    onResponseMismatch: (problem) => mismatches.add(problem),
    ...options.deps,
  });
  return {
    ...gateway,
    redis,
    config,
    close: async () => {
      await gateway.close().catch(() => undefined);
      await redis.quit().catch(() => redis.disconnect());
      if (mismatches.size)
        throw new Error(`responses that the OpenAPI document does not describe:\n${[...mismatches].join('\n')}`);
    },
  };
}

/** supertest parser that keeps any body as raw bytes: `.buffer(true).parse(binary)`. */
export function binary(res: request.Response, cb: (err: Error | null, body: Buffer) => void): void {
  const stream = res as unknown as http.IncomingMessage;
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => cb(null, Buffer.concat(chunks)));
}
