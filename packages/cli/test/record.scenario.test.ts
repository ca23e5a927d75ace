// `reelay get <live URL>` end to end: the built CLI against a real gateway and worker, recording a
// live HLS stream ffmpeg makes in real time. Ctrl-C (SIGINT) asks the server to stop; the CLI then
// saves the recording and exits 0. --duration ends it by itself.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { probe } from '@reelay/media';
import { startFolderOrigin, startLiveHls, type FolderOrigin, type LiveStream } from '@reelay/testkit';
import { parseDuration } from '../src/options.js';
import { runCli, startCli, until, useCliStack } from './helpers.js';

const stack = useCliStack('record');
let live: LiveStream;
let origin: FolderOrigin;

beforeAll(async () => {
  live = startLiveHls();
  origin = await startFolderOrigin();
  origin.mount('tv', live.dir);
  await live.listed(2);
});
afterAll(async () => {
  live?.kill();
  await origin?.close();
  if (live) fs.rmSync(live.dir, { recursive: true, force: true });
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
const job = async (id: string): Promise<Json> =>
  ((await (await fetch(`${stack.direct}/api/v1/jobs/${id}`)).json()) as Json).data;

test('records until Ctrl-C, then asks the server to stop, saves the file and exits 0', async () => {
  const cwd = stack.workDir();
  const cli = startCli(['get', origin.url('/tv/index.m3u8')], { cwd, server: stack.direct });
  await until(
    () => /recording a live stream/.test(cli.stderr()) || cli.child.exitCode !== null,
    20_000,
    'the recording to start',
  );
  const id = /job ([A-Za-z0-9_-]{22})/.exec(cli.stderr())![1];
  const deadline = Date.now() + 15_000;
  while (((await job(id)).recording?.seconds ?? 0) < 2 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  cli.child.kill('SIGINT');
  const run = await cli.done;
  expect(run.code).toBe(0);
  expect(run.stderr).toMatch(/stopping the recording/);
  expect(run.stderr).toMatch(/recording ended \(stopped\)/);
  const file = run.stdout.trim();
  expect(fs.existsSync(file)).toBe(true);
  const view = await job(id);
  expect(view).toMatchObject({ status: 'completed', ended: 'stopped' });
  expect(Math.abs((await probe(file)).durationSeconds! - view.recording.seconds)).toBeLessThanOrEqual(1);
}, 40_000);

test("one Ctrl-C that arrives twice (the terminal's SIGINT and the one `pnpm reelay` passes on) stops the recording and still saves it", async () => {
  const cwd = stack.workDir();
  // A duration of its own: the same request as the test above would be that test's finished job.
  const cli = startCli(['get', origin.url('/tv/index.m3u8'), '--duration', '300'], { cwd, server: stack.direct });
  await until(
    () => /recording a live stream/.test(cli.stderr()) || cli.child.exitCode !== null,
    20_000,
    'the recording to start',
  );
  const id = /job ([A-Za-z0-9_-]{22})/.exec(cli.stderr())![1];
  const deadline = Date.now() + 15_000;
  while (((await job(id)).recording?.seconds ?? 0) < 1 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  // pnpm's copy comes a moment after the terminal's; sent by a shell of its own, so the gap between
  // the two is not this (busy) test process's timer. The press logic itself: interrupt.test.ts.
  spawnSync('sh', ['-c', `kill -INT ${cli.child.pid}; sleep 0.05; kill -INT ${cli.child.pid}`]);
  const run = await cli.done;
  expect(run.code).toBe(0);
  expect({ stderr: run.stderr, stops: run.stderr.split('stopping the recording').length - 1 }).toMatchObject({
    stops: 1,
  });
  expect(run.stderr).toMatch(/recording ended \(stopped\)/);
  expect(fs.existsSync(run.stdout.trim())).toBe(true);
}, 40_000);

test('--duration records that long by itself and saves the file', async () => {
  const run = await runCli(['get', origin.url('/tv/index.m3u8'), '--duration', '2'], {
    cwd: stack.workDir(),
    server: stack.direct,
  });
  expect(run.code).toBe(0);
  expect(run.stderr).toMatch(/recording ended \(duration\): [23](\.\d+)? s/);
  expect((await probe(run.stdout.trim())).durationSeconds).toBeGreaterThan(1.5);
}, 40_000);

test('--duration takes seconds, units and clock times, and refuses the rest', () => {
  expect([
    parseDuration('90'),
    parseDuration('30m'),
    parseDuration('1h30m'),
    parseDuration('45s'),
    parseDuration('1:30:00'),
  ]).toEqual([90, 1800, 5400, 45, 5400]);
  for (const bad of ['', '0', '1.5h', 'soon', '-3']) expect(() => parseDuration(bad)).toThrow(/--duration/);
});
