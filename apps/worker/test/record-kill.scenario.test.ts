// A recording survives its worker: the built worker process (fixtures/worker-process.mjs, short
// BullMQ lock timings) records a real live HLS stream made by ffmpeg, is SIGKILLed mid-recording,
// and a second process continues the same job from the parts the first left on the shared data dir,
// appending at the live edge. The file holds both parts in order and `gaps` says what was lost. The
// same for a live DASH stream recorded with its video and audio: both tracks continue, and the
// stretch both lost takes no time in the file.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Job } from 'bullmq';
import { FsArtifactStore } from '@reelay/artifacts';
import { decodeJobError, RecordingProgressSchema, type JobResult } from '@reelay/contracts';
import { probe } from '@reelay/media';
import { startFolderOrigin, startLiveDash, startLiveHls, type FolderOrigin, type LiveStream } from '@reelay/testkit';
import { payload, TestQueue, tempDataDir, until } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ENTRY = fileURLToPath(new URL('./fixtures/worker-process.mjs', import.meta.url));
const PREFIX = `reelay-test-record-kill-${process.pid}`;
let origin: FolderOrigin;
let live: LiveStream;
let dash: LiveStream;
let dataDir: string;
let queue: TestQueue;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  const build = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'apps/worker/tsconfig.json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`apps/worker does not build:\n${build.stdout}${build.stderr}`);
  origin = await startFolderOrigin();
  live = startLiveHls({ listSize: 2 });
  origin.mount('live', live.dir);
  dash = startLiveDash({ windowSize: 3 });
  origin.mount('dash', dash.dir);
  dataDir = tempDataDir('record-kill');
  queue = new TestQueue(PREFIX);
  await live.listed(2);
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  live?.kill();
  dash?.kill();
  await queue?.close();
  await origin?.close();
  for (const s of [live, dash]) if (s) fs.rmSync(s.dir, { recursive: true, force: true });
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function spawnWorker(lock = { lockDuration: 1_500, stalledInterval: 1_000 }): Promise<ChildProcess> {
  const env = {
    PATH: process.env.PATH,
    REDIS_URL: process.env.REDIS_URL,
    DATA_DIR: dataDir,
    EGRESS_ALLOWLIST: '127.0.0.1',
    LOG_LEVEL: 'info',
    WORKER_CONCURRENCY: '1',
  };
  const proc = spawn(process.execPath, [ENTRY, JSON.stringify({ prefix: PREFIX, metricsPort: 0, ...lock })], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  proc.stderr!.resume();
  await until(() => out.includes('"worker started"') || proc.exitCode !== null, 15_000, 'the worker process to start');
  if (proc.exitCode !== null) throw new Error(`the worker exited with ${proc.exitCode}`);
  return proc;
}

test('a worker SIGKILLed mid-recording: another continues the same job at the live edge and appends; gaps says what was lost', async () => {
  const first = await spawnWorker();
  const job = payload([{ url: origin.url('/live/index.m3u8'), stream_profile: 'hls' }], {
    operation: 'record',
    basename: 'survivor',
    live: { duration: 6 },
  });
  await queue.add(job);
  const seconds = async () =>
    RecordingProgressSchema.safeParse((await queue.queue.getJob(job.id))?.progress).data?.recording.seconds ?? 0;
  await until(async () => (await seconds()) >= 2, 15_000, 'two seconds recorded by the first worker');
  const state = JSON.parse(fs.readFileSync(path.join(dataDir, 'recordings', job.id, 'state.json'), 'utf8')) as {
    lastSeq: number;
    seconds: number;
  };
  const exited = new Promise((resolve) => first.once('exit', resolve));
  first.kill('SIGKILL');
  await exited;
  // Wait until what the first worker would have fetched next has left the window: that is lost.
  const killedAt = state.lastSeq;
  await until(() => Math.min(...live.window()) > killedAt + 1, 15_000, 'the next segment to leave the window');
  await spawnWorker();
  const done = await queue.finished(job.id, 30_000);
  if ((await done.getState()) !== 'completed')
    throw new Error(`recording failed: ${JSON.stringify(decodeJobError(done.failedReason))}`);
  const result = (await Job.fromId(queue.queue, job.id))!.returnvalue as JobResult;
  expect(result.ended).toBe('duration');
  expect(result.recording!.seconds).toBeGreaterThanOrEqual(6);
  expect(result.recording!.gaps).toHaveLength(1);
  const [gap] = result.recording!.gaps;
  expect(gap.at).toBeGreaterThanOrEqual(state.seconds); // where the first worker's part ends (it may have added one segment after the read)
  expect(gap.at).toBeLessThan(state.seconds + 1.5);
  expect(gap.seconds).toBeGreaterThanOrEqual(1);
  const stored = await new FsArtifactStore(dataDir).get(job.id);
  expect(stored).toBeDefined();
  const info = await probe(stored!.path);
  expect(Math.abs(info.durationSeconds! - result.recording!.seconds)).toBeLessThanOrEqual(1);
  expect(fs.existsSync(path.join(dataDir, 'recordings', job.id))).toBe(false);
}, 60_000);

test("a worker SIGKILLed mid-recording of a live DASH stream's video and audio: another continues both tracks, the stretch both lost takes no time, and the file has both", async () => {
  // The worker the test before left running would take the job instead of the one this test kills.
  await Promise.all(
    [...children].map((child) => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGKILL')))),
  );
  await dash.listed(2);
  // Locks a little longer than the HLS test's: two tracks and their resume probes on a loaded
  // machine must not miss a renewal (the killed worker's lock still expires long before the window moves on).
  const lock = { lockDuration: 4_000, stalledInterval: 2_000 };
  const first = await spawnWorker(lock);
  const manifest = origin.url('/dash/manifest.mpd');
  const job = payload(
    [
      { url: manifest, stream_profile: 'dash', representation: '0', representation_type: 'video' },
      { url: manifest, stream_profile: 'dash', representation: '1', representation_type: 'audio' },
    ],
    { operation: 'record', basename: 'survivor-av', live: { duration: 6 } },
  );
  await queue.add(job);
  const seconds = async () =>
    RecordingProgressSchema.safeParse((await queue.queue.getJob(job.id))?.progress).data?.recording.seconds ?? 0;
  await until(async () => (await seconds()) >= 2, 15_000, 'two seconds recorded by the first worker');
  const exited = new Promise((resolve) => first.once('exit', resolve));
  first.kill('SIGKILL');
  await exited;
  // The MPD lists three segments (and is written a little after each segment file): six newer
  // files put what the first worker would have fetched next out of reach.
  const newest = Math.max(...dash.window());
  await until(() => Math.max(...dash.window()) >= newest + 6, 15_000, 'the next segments to leave the window');
  await spawnWorker(lock);
  const done = await queue.finished(job.id, 30_000);
  if ((await done.getState()) !== 'completed')
    throw new Error(`recording failed: ${JSON.stringify(decodeJobError(done.failedReason))}`);
  const result = (await Job.fromId(queue.queue, job.id))!.returnvalue as JobResult;
  expect(result.ended).toBe('duration');
  // Each track says what it lost: the stretch the dead worker missed (on a loaded machine in more
  // than one gap, as the window lists three seconds; a track the first worker had not begun yet
  // lost the file's beginning instead).
  const gaps = result.recording!.gaps;
  for (const track of ['video', 'audio'])
    expect(gaps.filter((g) => g.track === track).reduce((sum, g) => sum + g.seconds, 0)).toBeGreaterThanOrEqual(1);
  expect(gaps.reduce((sum, g) => sum + g.seconds, 0)).toBeGreaterThanOrEqual(6);
  const stored = await new FsArtifactStore(dataDir).get(job.id);
  const info = await probe(stored!.path);
  expect(info.streams.map((s) => s.type)).toEqual(['video', 'audio']);
  // The seconds both tracks lost are not in the file.
  expect(Math.abs(info.durationSeconds! - result.recording!.seconds)).toBeLessThanOrEqual(1);
  expect(result.recording!.seconds).toBeLessThan(8);
  expect(fs.existsSync(path.join(dataDir, 'recordings', job.id))).toBe(false);
}, 60_000);
