// The worker as a real process (the built dist/, started by test/fixtures/worker-process.mjs with
// short BullMQ lock timings): killed mid-job, its job is finished by the next worker; told to stop,
// it finishes its running job, or hands it back past the grace period, and exits 0.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Job } from 'bullmq';
import { FsArtifactStore } from '@reelay/artifacts';
import type { JobInput } from '@reelay/contracts';
import { probe } from '@reelay/media';
import { logRef } from '@reelay/observability';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import {
  payload,
  processesMentioning,
  serveTestMedia,
  startTestWorker,
  tempDataDir,
  TestQueue,
  trickle,
  until,
} from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ENTRY = fileURLToPath(new URL('./fixtures/worker-process.mjs', import.meta.url));
const PREFIX = `reelay-test-lifecycle-${process.pid}`;
let media: TestMedia;
let origin: Origin;
let queue: TestQueue;
let dataDir: string;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  // The children run dist/: build what is stale (a no-op taking well under a second when current).
  const build = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'apps/worker/tsconfig.json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`apps/worker does not build:\n${build.stdout}${build.stderr}`);
  media = await testMedia();
  origin = await startOrigin();
  serveTestMedia(origin, media);
  dataDir = tempDataDir('lifecycle');
  queue = new TestQueue(PREFIX);
}, 120_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await queue?.close();
  await origin?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface WorkerProcess {
  proc: ChildProcess;
  /** pino lines written so far. */
  logs: { msg?: string }[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  logged(msg: string): boolean;
}

async function spawnWorker(options: { shutdownGraceMs?: number } = {}): Promise<WorkerProcess> {
  const env = {
    PATH: process.env.PATH,
    REDIS_URL: process.env.REDIS_URL,
    DATA_DIR: dataDir,
    EGRESS_ALLOWLIST: '127.0.0.1',
    LOG_LEVEL: 'info',
    WORKER_CONCURRENCY: '1',
    JOB_TIMEOUT_SECONDS: '60',
  };
  const settings = {
    prefix: PREFIX,
    metricsPort: 0,
    lockDuration: 1_500,
    stalledInterval: 1_000,
    shutdownGraceMs: options.shutdownGraceMs ?? 20_000,
  };
  const proc = spawn(process.execPath, [ENTRY, JSON.stringify(settings)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  const logs: { msg?: string }[] = [];
  let stderr = '';
  let partial = '';
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) logs.push(JSON.parse(line) as { msg?: string });
  });
  proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => {
      children.delete(proc);
      resolve({ code, signal });
    }),
  );
  const worker: WorkerProcess = { proc, logs, exited, logged: (msg) => logs.some((l) => l.msg === msg) };
  await until(() => worker.logged('worker started') || proc.exitCode !== null, 15_000, 'the worker process to start');
  if (proc.exitCode !== null) throw new Error(`the worker process exited with ${proc.exitCode}: ${stderr}`);
  return worker;
}

function tempFolders(id: string): string[] {
  const dir = path.join(dataDir, 'tmp');
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => name.startsWith(`${id}-`)) : [];
}

function mergeJob(videoRoute: string): ReturnType<typeof payload> {
  const video: JobInput = { url: origin.url(videoRoute), stream_profile: 'video_only', codecs: 'avc1.64001e' };
  const audio: JobInput = { url: origin.url('/audio-only.m4a'), stream_profile: 'audio_only', codecs: 'mp4a.40.2' };
  return payload([video, audio], { operation: 'merge', duration: 2 });
}

async function expectValidArtifact(id: string): Promise<void> {
  const stored = await new FsArtifactStore(dataDir).get(id);
  expect(stored).toBeDefined();
  const info = await probe(stored!.path);
  expect(info.streams.map((s) => [s.type, s.codec])).toEqual([
    ['video', 'h264'],
    ['audio', 'aac'],
  ]);
  expect(info.durationSeconds).toBeGreaterThan(1.8);
}

test("a worker killed mid-job loses nothing: the next worker finishes the job and clears the dead one's temp folder", async () => {
  let pace = 2_000; // bytes per 50 ms: the 443 KB input would take 11 s
  trickle(origin, '/slow-kill.mp4', media.videoOnlyMp4, 'video/mp4', () => pace);
  const job = mergeJob('/slow-kill.mp4');
  const first = await spawnWorker();
  await queue.add(job, { attempts: 3 });
  await until(
    () => tempFolders(job.id).length === 1 && processesMentioning(job.id).length > 0,
    10_000,
    'the first worker to run ffmpeg',
  );

  first.proc.kill('SIGKILL');
  expect((await first.exited).signal).toBe('SIGKILL');
  expect(await queue.state(job.id)).toBe('active'); // until the dead worker's lock expires
  pace = Infinity;

  const second = await spawnWorker();
  const done = await queue.finished(job.id, 20_000);
  expect(await done.getState()).toBe('completed');
  await expectValidArtifact(job.id);
  expect(second.logged('removed the temporary files of an earlier attempt')).toBe(true);
  expect(tempFolders(job.id)).toEqual([]);
  // The dead worker's ffmpeg lost its proxy with it and exits on its own.
  await until(() => processesMentioning(job.id).length === 0, 5_000, 'the orphaned ffmpeg to exit');

  second.proc.kill('SIGTERM');
  expect(await second.exited).toEqual({ code: 0, signal: null });
  // The logs tell the story without the proxy credentials ffmpeg was given.
  const logs = JSON.stringify([...first.logs, ...second.logs]);
  // Named by its log reference, never by the id itself (a capability: issue 32).
  expect(logs).toContain(logRef(job.id));
  expect(logs).not.toContain(job.id);
  expect(logs).not.toMatch(/[0-9a-f]{24}:[0-9a-f]{48}@|http_proxy/);
}, 45_000);

test('a worker told to stop finishes its running job, then exits 0', async () => {
  let pace = 0; // held until the worker has been told to stop
  trickle(origin, '/slow-finish.mp4', media.videoOnlyMp4, 'video/mp4', () => pace);
  const job = mergeJob('/slow-finish.mp4');
  const worker = await spawnWorker({ shutdownGraceMs: 20_000 });
  await queue.add(job);
  await until(() => processesMentioning(job.id).length > 0, 10_000, 'ffmpeg to start');

  worker.proc.kill('SIGTERM');
  await until(() => worker.logged('stopping: taking no new jobs'), 5_000, 'the worker to start stopping');
  pace = 40_000;
  expect(await worker.exited).toEqual({ code: 0, signal: null });
  expect(await queue.state(job.id)).toBe('completed');
  await expectValidArtifact(job.id);
}, 30_000);

test('past the grace period a stopping worker hands its job back to the queue and exits 0; the next worker completes it', async () => {
  let pace = 0; // the job cannot finish until the test lets it
  trickle(origin, '/slow-back.mp4', media.videoOnlyMp4, 'video/mp4', () => pace);
  const job = mergeJob('/slow-back.mp4');
  const worker = await spawnWorker({ shutdownGraceMs: 500 });
  await queue.add(job, { attempts: 1 });
  await until(() => processesMentioning(job.id).length > 0, 10_000, 'ffmpeg to start');

  const stopped = Date.now();
  worker.proc.kill('SIGTERM');
  expect(await worker.exited).toEqual({ code: 0, signal: null });
  expect(Date.now() - stopped).toBeLessThan(8_000);
  expect(worker.logged('job handed back to the queue at shutdown')).toBe(true);
  expect(processesMentioning(job.id)).toEqual([]);
  expect(await queue.state(job.id)).toBe('waiting');
  expect((await Job.fromId(queue.queue, job.id))?.attemptsMade).toBe(0); // its one attempt is still there

  pace = Infinity;
  const next = await startTestWorker({ prefix: PREFIX, dataDir });
  try {
    expect(await (await queue.finished(job.id)).getState()).toBe('completed');
    await expectValidArtifact(job.id);
  } finally {
    await next.stop();
  }
}, 30_000);
