// The worker's ear for cancel and stop, on the run's real Redis: a signal sent while a run listens
// arrives by pub/sub; one sent before it listened is found in its key when it starts; other jobs'
// signals and garbage on the channel are ignored. This is the path a recording will use for "stop".
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { JOB_SIGNAL_CHANNEL, jobSignalKey, type JobSignal } from '@reelay/contracts';
import { createLogger } from '@reelay/observability';
import { JobSignalListener } from '../src/job-signals.js';
import { until } from './helpers.js';
import { testRedisClient } from '@reelay/testkit';
import type { RedisClient } from '@reelay/redis';

let commands: RedisClient;
let listener: JobSignalListener;
const newId = () => randomBytes(16).toString('base64url');

/** What the gateway's JobControl.signal does: the key first, then the message. */
async function send(id: string, signal: JobSignal): Promise<void> {
  await commands.set(jobSignalKey(signal, id), String(Date.now()), 'EX', 60);
  await commands.publish(JOB_SIGNAL_CHANNEL, JSON.stringify({ id, signal }));
}

beforeAll(async () => {
  commands = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
  listener = new JobSignalListener(
    testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: null }),
    commands,
    createLogger({ name: 'signals-test', level: 'silent' }),
  );
  await listener.start();
});

afterAll(async () => {
  await listener?.close();
  await commands?.quit();
});

test('a stop and a cancel sent while a run listens reach it through the channel', async () => {
  const id = newId();
  const heard: JobSignal[] = [];
  const unwatch = await listener.watch(id, (s) => heard.push(s));
  expect(heard).toEqual([]);
  await send(id, 'stop');
  await until(() => heard.includes('stop'), 5_000, 'the stop message');
  await send(id, 'cancel');
  await until(() => heard.includes('cancel'), 5_000, 'the cancel message');
  unwatch();
});

test('a cancel sent before the run started is reported by watch() at once, from its key', async () => {
  const id = newId();
  await send(id, 'cancel');
  const heard: JobSignal[] = [];
  const unwatch = await listener.watch(id, (s) => heard.push(s));
  // Heard by the time watch() resolves; the message may come as well (handlers take a repeat).
  expect(heard.length).toBeGreaterThan(0);
  expect(new Set(heard)).toEqual(new Set(['cancel']));
  await expect(listener.recorded(id)).resolves.toEqual(['cancel']);
  unwatch();
});

test("another job's signal, a malformed message and a signal after unwatch reach no one", async () => {
  const id = newId();
  const heard: JobSignal[] = [];
  const unwatch = await listener.watch(id, (s) => heard.push(s));
  await send(newId(), 'cancel');
  await commands.publish(JOB_SIGNAL_CHANNEL, 'not json');
  await commands.publish(JOB_SIGNAL_CHANNEL, JSON.stringify({ id, signal: 'explode' }));
  // A marker sent last: once it arrived, everything before it was handled.
  const marker = newId();
  const markerHeard: JobSignal[] = [];
  const unwatchMarker = await listener.watch(marker, (s) => markerHeard.push(s));
  await send(marker, 'stop');
  await until(() => markerHeard.length > 0, 5_000, 'the marker');
  expect(heard).toEqual([]);
  unwatch();
  unwatchMarker();
  await send(id, 'cancel');
  const second = newId();
  const secondHeard: JobSignal[] = [];
  const unwatchSecond = await listener.watch(second, (s) => secondHeard.push(s));
  await send(second, 'stop');
  await until(() => secondHeard.length > 0, 5_000, 'the second marker');
  expect(heard).toEqual([]);
  unwatchSecond();
});
