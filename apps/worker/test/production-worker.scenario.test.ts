// The worker as production starts it (apps/worker/dist/main.js, settings from the environment only,
// no test entry shortening BullMQ's timings), against a private redis-server: a frozen Redis does
// not crash it or hang its /metrics, and a SIGKILLed worker's jobs are completed by another within
// 15 s with the default JOB_LOCK_SECONDS and JOB_STALLED_CHECK_SECONDS.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Queue } from 'bullmq';
import { DOWNLOAD_QUEUE } from '@reelay/contracts';
import { startOrigin, startRedis, testMedia, testRedisClient, type Origin, type RedisHandle } from '@reelay/testkit';
import { payload, serveTestMedia, sleep, until } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TIMEOUT_MS = 300;

interface WorkerApp {
  child: import('node:child_process').ChildProcess;
  logs: { msg?: string; level?: number; port?: number }[];
  exited: Promise<{ code: number | null; signal: string | null }>;
  started(): Promise<{ port: number }>;
}
interface Recovery {
  takenSeconds: number;
  completedSeconds: number;
  failed: string[];
}
let bench: { spawnWorker(env: Record<string, string>): WorkerApp; runRecovery(o: object): Promise<Recovery> };
let origin: Origin;
let redis: RedisHandle;
const dirs: string[] = [];
const children: WorkerApp[] = [];

beforeAll(async () => {
  // The children run dist/: build what is stale (a no-op when current).
  const build = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'apps/worker/tsconfig.json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`apps/worker does not build:\n${build.stdout}${build.stderr}`);
  bench = (await import(pathToFileURL(path.join(ROOT, 'bench/worker-recovery.mjs')).href)) as typeof bench;
  origin = await startOrigin();
  serveTestMedia(origin, await testMedia());
  redis = await startRedis();
}, 120_000);

afterAll(async () => {
  redis?.process.kill('SIGCONT');
  for (const w of children) w.child.kill('SIGKILL');
  await redis?.stop();
  await origin?.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

test('a worker survives a frozen Redis: /metrics answers meanwhile, and after SIGCONT it runs jobs again', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-freeze-'));
  dirs.push(dir);
  const worker = bench.spawnWorker({
    REDIS_URL: redis.url,
    DATA_DIR: dir,
    EGRESS_ALLOWLIST: '127.0.0.1',
    LOG_LEVEL: 'info',
    METRICS_PORT: '0',
    REDIS_COMMAND_TIMEOUT_MS: String(TIMEOUT_MS),
  });
  children.push(worker);
  const { port } = await worker.started();
  // Production's default prefix, on this file's own Redis.
  const connection = testRedisClient(redis.url, { maxRetriesPerRequest: null });
  const producer = new Queue(DOWNLOAD_QUEUE, { connection });
  try {
    // Frozen for longer than BullMQ's longest blocking fetch (10 s) plus its watchdog.
    redis.process.kill('SIGSTOP');
    const frozenUntil = Date.now() + 12_000;
    let slowestScrape = 0;
    while (Date.now() < frozenUntil) {
      const started = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) });
      await res.text();
      expect(res.status).toBe(200);
      slowestScrape = Math.max(slowestScrape, (performance.now() - started) / 1000);
      await sleep(1000);
    }
    redis.process.kill('SIGCONT');
    const resumed = performance.now();
    expect(slowestScrape).toBeLessThan(TIMEOUT_MS / 1000 + 1);
    expect(worker.child.exitCode).toBeNull();

    const job = payload(
      [{ url: origin.url('/muxed.mp4'), stream_profile: 'muxed_progressive', codecs: 'avc1.42c00d,mp4a.40.2' }],
      { operation: 'convert', format: 'mkv', duration: 2 },
    );
    await producer.add('download', job, { jobId: job.id, attempts: 1 });
    await until(
      async () => (await producer.getJobState(job.id)) === 'completed',
      20_000,
      'the job after SIGCONT to complete',
    );
    process.stderr.write(
      `worker, frozen Redis: slowest /metrics ${slowestScrape.toFixed(2)} s; a job enqueued after SIGCONT completed ${((performance.now() - resumed) / 1000).toFixed(1)} s later\n`,
    );
    expect(worker.child.exitCode).toBeNull();
    expect(worker.logs.filter((l) => (l.level ?? 0) >= 60)).toEqual([]); // nothing fatal logged
  } finally {
    await producer.close();
    connection.disconnect();
  }
}, 60_000);

test("a SIGKILLed worker's jobs are completed by another worker within 15 s, with the production settings", async () => {
  const r = await bench.runRecovery({ jobs: 2 });
  process.stderr.write(
    `dead worker (default settings): jobs taken again ${r.takenSeconds.toFixed(1)} s and completed ${r.completedSeconds.toFixed(1)} s after the SIGKILL\n`,
  );
  expect(r.failed).toEqual([]);
  expect(r.completedSeconds).toBeLessThan(15);
}, 90_000);
