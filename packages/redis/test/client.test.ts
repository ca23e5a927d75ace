// The connections on the run's real Redis (one server, or a cluster with REELAY_TEST_REDIS=cluster):
// every command is bounded by REDIS_COMMAND_TIMEOUT_MS, while a duplicate, where blocking reads run,
// waits as long as it is asked to; so a BullMQ Worker takes a job that falls due later than the
// timeout. A fail-fast client refuses at once while Redis is away; one that waits out outages
// finishes its command when Redis is back.
import { randomBytes } from 'node:crypto';
import { afterAll, expect, test } from '@jest/globals';
import { Queue, Worker } from 'bullmq';
import { parseConfig } from '@reelay/config';
import { startRedis } from '@reelay/testkit';
import { connectRedis, duplicateRedis, hashTag, redisReady, WAIT_OUT_OUTAGES, type RedisClient } from '../src/index.js';

const TIMEOUT_MS = 300;
const config = parseConfig({ REDIS_URL: process.env.REDIS_URL, REDIS_COMMAND_TIMEOUT_MS: String(TIMEOUT_MS) });
const opened: RedisClient[] = [];
const open = async (client: RedisClient): Promise<RedisClient> => {
  opened.push(client);
  client.on('error', () => {}); // the outage test stops a server on purpose
  await redisReady(client);
  return client;
};
const key = () => `test:redis:${randomBytes(6).toString('hex')}`;
/** What BullMQ does for its blocking connection, and a subscriber does: client.duplicate(). */
const duplicate = (client: RedisClient): RedisClient => ('nodes' in client ? client.duplicate() : client.duplicate());

afterAll(() => {
  for (const client of opened) client.disconnect();
});

/** How a BLPOP of `seconds` on an empty list ends: its answer, or its error's message. */
async function blockFor(client: RedisClient, seconds: number): Promise<string | null> {
  return client.blpop(key(), seconds).then(
    (reply) => (reply === null ? null : JSON.stringify(reply)),
    (err: Error) => err.message,
  );
}

test('a command waits at most the command timeout; a duplicate, where blocking reads run, waits as asked', async () => {
  const client = await open(connectRedis(config));
  expect(await blockFor(client, 1)).toBe('Command timed out');
  // A subscriber or BullMQ's blocking connection: BLPOP runs its whole second and answers "nothing".
  const started = Date.now();
  expect(await blockFor(await open(duplicate(client)), 1)).toBeNull();
  expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  // A connection with other options (a Worker's own) keeps the timeout; its duplicates do not.
  const workerConnection = await open(duplicateRedis(client, WAIT_OUT_OUTAGES));
  expect(await blockFor(workerConnection, 1)).toBe('Command timed out');
  expect(await blockFor(await open(duplicate(workerConnection)), 1)).toBeNull();
  // Dropping the timeout on purpose (a QueueEvents reader) is still possible.
  expect(await blockFor(await open(duplicateRedis(client, { commandTimeout: undefined })), 1)).toBeNull();
});

test('a BullMQ Worker on such a connection takes a job that falls due later than the command timeout', async () => {
  const client = await open(connectRedis(config));
  const prefix = hashTag(`test-redis-${randomBytes(4).toString('hex')}`);
  const queue = new Queue('later', { connection: client, prefix });
  const connection = await open(duplicateRedis(client, WAIT_OUT_OUTAGES));
  const errors: string[] = [];
  let done!: (at: number) => void;
  const ran = new Promise<number>((resolve) => (done = resolve));
  const worker = new Worker('later', async () => done(Date.now()), { connection, prefix });
  worker.on('error', (err) => errors.push(err.message));
  try {
    await worker.waitUntilReady();
    // The worker is idle in its blocking fetch, which waits for the delayed job: 5 command timeouts.
    const added = Date.now();
    await queue.add('check', {}, { delay: 5 * TIMEOUT_MS });
    const at = await ran;
    expect(at - added).toBeGreaterThanOrEqual(5 * TIMEOUT_MS - 50);
    expect(errors).toEqual([]);
  } finally {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
  }
});

test('while Redis is away a fail-fast client refuses at once, and one that waits out outages finishes when it is back', async () => {
  let server = await startRedis();
  const own = parseConfig({ REDIS_URL: server.url });
  const failFast = await open(connectRedis(own));
  const patient = await open(connectRedis(own, WAIT_OUT_OUTAGES));
  await server.stop();
  const asked = Date.now();
  await expect(failFast.get('x')).rejects.toThrow();
  expect(Date.now() - asked).toBeLessThan(own.REDIS_COMMAND_TIMEOUT_MS);
  const waiting = patient.set('back', 'yes');
  server = await startRedis({ port: server.port });
  try {
    expect(await waiting).toBe('OK');
    expect(await patient.get('back')).toBe('yes');
  } finally {
    await server.stop();
  }
});
