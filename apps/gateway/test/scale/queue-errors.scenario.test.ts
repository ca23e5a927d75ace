// The gateway's job queue during a Redis outage: one short warning per problem in the log, not an
// unhandled 'error' event with a raw stack trace.
import { expect, test } from '@jest/globals';
import { Writable } from 'node:stream';
import { createLogger } from '@reelay/observability';
import { startRedis } from '@reelay/testkit';
import { connectRedis, redisReady } from '@reelay/redis';
import { createGateway } from '../../src/index.js';
import { testConfig } from '../helpers.js';

test("a Redis outage shows in the gateway's log as short queue warnings, without stack traces", async () => {
  const redis = await startRedis();
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const client = connectRedis(redis.url);
  client.on('error', () => {});
  await redisReady(client);
  const gateway = createGateway({
    config: testConfig({ REDIS_URL: redis.url }),
    redis: client,
    logger: createLogger({ name: 'gateway-test', level: 'warn', destination }),
    queuePrefix: 'errors',
  });
  try {
    await gateway.queue.getJobCounts(); // the queue has connected
    await redis.stop();
    const deadline = Date.now() + 5000;
    while (!lines.some((l) => l.includes('job queue: redis connection problem')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const warnings = lines.map((l) => JSON.parse(l) as { msg: string; err?: unknown });
    expect(warnings.some((w) => w.msg === 'job queue: redis connection problem' && typeof w.err === 'string')).toBe(
      true,
    );
    expect(lines.join('\n')).not.toMatch(/\n?\s+at .+\(.+:\d+:\d+\)/);
  } finally {
    await gateway.close().catch(() => undefined);
    client.disconnect();
  }
});
