// `pnpm start` as a user runs it: the real script spawning the built gateway, worker and a private
// redis-server. Signals, a crashing worker, a closed stdout and a second start on the same DATA_DIR.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Queue } from 'bullmq';
import { DOWNLOAD_QUEUE, type JobInput } from '@reelay/contracts';
import {
  freePort,
  runInPty,
  startOrigin,
  testMedia,
  testRedisClient,
  type Origin,
  type TestMedia,
} from '@reelay/testkit';
import { payload, processesMentioning, trickle, until } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = path.join(ROOT, 'scripts/start.mjs');
const started = new Set<ChildProcess>();
const dirs: string[] = [];
let media: TestMedia;
let origin: Origin;

beforeAll(async () => {
  // The script runs dist/: build what is stale once here, then start it with --no-build.
  const build = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'tsconfig.build.json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`the apps do not build:\n${build.stdout}${build.stderr}`);
  media = await testMedia();
  origin = await startOrigin();
  origin.file('/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
}, 180_000);

afterAll(async () => {
  for (const child of started) if (child.pid) stopQuietly(child.pid);
  await origin?.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** SIGTERM, not SIGKILL: the script must get the chance to stop its apps and Redis. */
function stopQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    /* already gone */
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie (exited, not yet reaped) has no command line left.
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').length > 0;
  } catch {
    return false;
  }
}

interface Started {
  proc: ChildProcess;
  dataDir: string;
  port: number;
  /** METRICS_PORT as the test set it (the worker's, with METRICS_PUBLIC on). */
  metricsPort: number;
  stdout: string;
  stderr: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** pids of the gateway and the worker (latest), from their log lines. */
  pids(): { gateway?: number; worker?: number };
  redisUrl(): string | undefined;
}

/** `env` values override the defaults below; undefined removes one (as a user who never set it). */
async function start(
  options: {
    dataDir?: string;
    via?: 'node' | 'pnpm';
    env?: Record<string, string | undefined>;
    waitReady?: boolean;
    ownGroup?: boolean;
    /** Run the script's own build step instead of --no-build. */
    build?: boolean;
  } = {},
): Promise<Started> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-start-'));
  if (!options.dataDir) dirs.push(dataDir);
  const port = await freePort();
  const metricsPort = await freePort();
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH!,
    HOME: process.env.HOME ?? os.tmpdir(),
    DATA_DIR: dataDir,
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    SHUTDOWN_GRACE_SECONDS: '1',
    EGRESS_ALLOWLIST: '127.0.0.1',
    WORKER_CONCURRENCY: '1',
    LOG_LEVEL: 'info',
    ...options.env,
  };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  const flags = options.build ? [] : ['--no-build'];
  const [cmd, args] = options.via === 'pnpm' ? ['pnpm', ['start', ...flags]] : [process.execPath, [SCRIPT, ...flags]];
  // ownGroup: like a terminal's foreground job, so the test can send Ctrl-C to the whole group.
  const proc = spawn(cmd, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.ownGroup ?? false,
  });
  started.add(proc);
  const s: Started = {
    proc,
    dataDir,
    port,
    metricsPort,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal }))),
    pids() {
      const found: { gateway?: number; worker?: number } = {};
      for (const line of s.stdout.split('\n')) {
        const m = /"app":"(gateway|worker)","pid":(\d+)/.exec(line);
        if (m) found[m[1] as 'gateway' | 'worker'] = Number(m[2]);
      }
      return found;
    },
    redisUrl: () => /private redis-server on (\S+)/.exec(s.stderr)?.[1],
  };
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (s.stdout += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (s.stderr += d));
  if (options.waitReady !== false) {
    await until(
      async () => {
        if (proc.exitCode !== null) throw new Error(`start exited with ${proc.exitCode}: ${s.stderr}`);
        const { gateway, worker } = s.pids();
        if (!gateway || !worker || !s.stdout.includes('worker started')) return false;
        return fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
      },
      30_000,
      'the gateway and the worker to start',
    );
  }
  return s;
}

/** What the start script recorded about its Redis: its pid and the script's own (the owner). */
function redisState(dataDir: string): { pid: number; owner: number } {
  return JSON.parse(fs.readFileSync(path.join(dataDir, 'redis', 'reelay-redis.json'), 'utf8')) as {
    pid: number;
    owner: number;
  };
}

function expectAllGone(s: Started, pids: number[]): void {
  for (const pid of pids) expect({ pid, alive: alive(pid) }).toEqual({ pid, alive: false });
  expect(fs.existsSync(path.join(s.dataDir, 'redis', 'reelay-redis.json'))).toBe(false);
}

test('Ctrl-C (SIGINT to the whole process group) stops the gateway, the worker and the private Redis, and a running job goes back to the queue instead of failing', async () => {
  let pace = 0; // the job cannot finish while the first start runs
  trickle(origin, '/slow-start.mp4', media.videoOnlyMp4, 'video/mp4', () => pace);
  const first = await start({ ownGroup: true });
  const redisUrl = first.redisUrl()!;
  const connection = testRedisClient(redisUrl, { maxRetriesPerRequest: 1 });
  const queue = new Queue(DOWNLOAD_QUEUE, { connection });
  const video: JobInput = { url: origin.url('/slow-start.mp4'), stream_profile: 'video_only', codecs: 'avc1.64001e' };
  const audio: JobInput = { url: origin.url('/audio-only.m4a'), stream_profile: 'audio_only', codecs: 'mp4a.40.2' };
  const job = payload([video, audio], { operation: 'merge', duration: 2 });
  await queue.add('download', job, { jobId: job.id, attempts: 1 });
  await until(() => processesMentioning(job.id).length > 0, 15_000, 'ffmpeg to start on the job');
  const pids = [
    first.pids().gateway!,
    first.pids().worker!,
    redisState(first.dataDir).pid,
    ...processesMentioning(job.id),
  ];
  await queue.close();
  connection.disconnect();

  const stopAt = Date.now();
  process.kill(-first.proc.pid!, 'SIGINT'); // what the terminal does: every process in the group
  expect(await first.exited).toEqual({ code: 0, signal: null });
  expect(Date.now() - stopAt).toBeLessThan(10_000); // grace 1 s: nobody waited for a hard kill
  expect(first.stdout).toContain('job handed back to the queue at shutdown');
  expectAllGone(first, pids);

  // The job survived in Redis's AOF; the next start on the same DATA_DIR completes it.
  pace = Infinity;
  const second = await start({ dataDir: first.dataDir });
  const again = testRedisClient(second.redisUrl()!, { maxRetriesPerRequest: 1 });
  const queue2 = new Queue(DOWNLOAD_QUEUE, { connection: again });
  try {
    await until(
      async () => (await queue2.getJobState(job.id)) === 'completed',
      20_000,
      'the handed-back job to complete',
    );
  } finally {
    await queue2.close();
    again.disconnect();
  }
  second.proc.kill('SIGINT');
  expect(await second.exited).toEqual({ code: 0, signal: null });
}, 90_000);

test('a second start on a DATA_DIR whose Redis is still running refuses with a clear message', async () => {
  const first = await start();
  const second = await start({ dataDir: first.dataDir, waitReady: false });
  expect((await second.exited).code).toBe(1);
  expect(second.stderr).toMatch(/a redis-server \(pid \d+, redis:\/\/127\.0\.0\.1:\d+\) is still running on/);
  expect(second.stderr).not.toContain('started a private redis-server');
  // The first one is untouched.
  expect((await fetch(`http://127.0.0.1:${first.port}/healthz`)).status).toBe(200);
  first.proc.kill('SIGTERM');
  expect((await first.exited).code).toBe(0);
}, 60_000);

test('a crashed worker is restarted while the gateway keeps serving', async () => {
  const s = await start();
  const { gateway, worker } = s.pids();
  process.kill(worker!, 'SIGKILL');
  await until(
    () => s.pids().worker !== worker && s.stdout.split('worker started').length > 2,
    20_000,
    'a new worker to start',
  );
  expect(s.stderr).toContain('the worker exited with SIGKILL; restarting it');
  expect(s.pids().gateway).toBe(gateway);
  expect((await fetch(`http://127.0.0.1:${s.port}/healthz`)).status).toBe(200);
  const pids = [gateway!, s.pids().worker!, redisState(s.dataDir).pid];
  s.proc.kill('SIGTERM');
  expect((await s.exited).code).toBe(0);
  expectAllGone(s, pids);
}, 60_000);

test('closing the output early (`pnpm start | head`) stops everything cleanly, with no EPIPE crash and no orphan', async () => {
  const s = await start();
  const pids = [s.pids().gateway!, s.pids().worker!, redisState(s.dataDir).pid];
  s.proc.stdout!.destroy(); // the reader is gone, as when `head` has its lines
  // Any request makes the gateway log a line, which meets the closed pipe.
  await fetch(`http://127.0.0.1:${s.port}/api/v1/platforms`).catch(() => undefined);
  const { code } = await s.exited;
  expect(code).toBe(0);
  expect(s.stderr).toContain('stopping (output closed)');
  expect(s.stderr).not.toMatch(/EPIPE|Unhandled|Error:/);
  expectAllGone(s, pids);
}, 60_000);

test("SIGTERM sent to pnpm's own pid (`pnpm start`) still stops everything", async () => {
  const s = await start({ via: 'pnpm' });
  const { pid: redisPid, owner: script } = redisState(s.dataDir);
  const pids = [s.pids().gateway!, s.pids().worker!, redisPid];
  s.proc.kill('SIGTERM');
  await s.exited;
  await until(
    () => !alive(script) && pids.every((pid) => !alive(pid)),
    15_000,
    'the start script, the apps and Redis to stop',
  );
  expectAllGone(s, pids);
}, 60_000);

test('Ctrl-C typed into `pnpm start` in a terminal stops cleanly and exits 0, without pnpm calling it a failure', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-start-pty-'));
  dirs.push(dataDir);
  const run = runInPty('pnpm', ['start', '--no-build'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME ?? os.tmpdir(),
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      SHUTDOWN_GRACE_SECONDS: '1',
      WORKER_CONCURRENCY: '1',
    },
  });
  try {
    await run.waitFor('reelay: ready:', 40_000);
    run.type('\x03'); // the terminal sends SIGINT to pnpm, its shell and the script at once
    const { code, signal, output } = await run.done;
    // pnpm reports its script's status: a script that was asked to stop and did is a success.
    expect({ code, signal }).toEqual({ code: 0, signal: undefined });
    expect(output).toContain('reelay: stopped');
    expect(output).not.toContain('ELIFECYCLE');
    expect(output).not.toContain('Command failed');
    // One Ctrl-C is one stop: pnpm passing the SIGINT on is not a second Ctrl-C.
    expect(output).not.toContain('SIGINT again');
  } finally {
    run.kill();
  }
}, 60_000);

/** Holds a port on 127.0.0.1 as another program would; resolves undefined when one already holds it. */
async function holdPort(port: number): Promise<net.Server | undefined> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

test('a second start, with the default METRICS_PORT taken, gives its worker a free port instead of crash-looping', async () => {
  // 9464 held here stands for the first `pnpm start`'s worker (or is already held by one).
  const held = await holdPort(9464);
  try {
    const s = await start({ env: { METRICS_PORT: undefined } });
    expect(s.stderr).toContain('port 9464 (the default METRICS_PORT) is taken');
    const startedLine = s.stdout.split('\n').find((line) => line.includes('worker started'))!;
    const port = Number(/"port":(\d+)/.exec(startedLine)?.[1]);
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(9464);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    await until(
      async () => (await fetch(`http://127.0.0.1:${s.port}/readyz`)).status === 200,
      15_000,
      'readyz to count the worker',
    );
    expect(s.stdout.split('worker started').length).toBe(2);
    expect(s.stderr).not.toContain('restarting');
    s.proc.kill('SIGTERM');
    expect((await s.exited).code).toBe(0);
  } finally {
    held?.close();
  }
}, 60_000);

test('a METRICS_PORT that is set and taken stops the start once, with a message naming METRICS_PORT', async () => {
  const port = await freePort();
  const held = (await holdPort(port))!;
  try {
    const s = await start({ env: { METRICS_PORT: String(port) }, waitReady: false });
    expect((await s.exited).code).toBe(1);
    expect(s.stderr).toContain(`worker failed to start: METRICS_PORT ${port} is already in use on 127.0.0.1`);
    expect(s.stderr.split('worker failed to start').length).toBe(2);
    expect(s.stderr).not.toContain('restarting');
    expect(s.stderr).toContain('worker exited with code 2');
  } finally {
    held.close();
  }
}, 60_000);

test('once ready, one human line says where the gateway, the web app and the API docs are, and each answers', async () => {
  const s = await start();
  await until(() => s.stderr.includes('reelay: ready:'), 20_000, 'the ready line');
  const base = `http://127.0.0.1:${s.port}`;
  const lines = s.stderr.split('\n').filter((line) => line.startsWith('reelay: ready:'));
  // The test's environment names the binaries (FFMPEG_PATH/FFPROBE_PATH) or leaves them to PATH.
  expect(lines).toHaveLength(1);
  const workerMetrics = `http://127.0.0.1:${s.metricsPort}/metrics`;
  expect(lines[0]).toMatch(
    new RegExp(
      `^reelay: ready: gateway ${base} · web app ${base}/ · API docs ${base}/docs · worker metrics ${workerMetrics} · ffmpeg \\S+ \\((FFMPEG_PATH|ffmpeg-static|PATH)\\) · ffprobe \\S+ \\((FFPROBE_PATH|PATH)\\)$`,
    ),
  );
  expect(await (await fetch(workerMetrics)).text()).toContain('reelay_worker_');
  // The README shows this line as it reads with the default ports and binaries from PATH.
  const asDefault = lines[0]
    .replaceAll(`127.0.0.1:${s.port}`, '127.0.0.1:8080')
    .replaceAll(`127.0.0.1:${s.metricsPort}`, '127.0.0.1:9464')
    .replace(/ · ffmpeg .*$/, ' · ffmpeg ffmpeg (PATH) · ffprobe ffprobe (PATH)');
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const samples = readme.split('\n').filter((line) => line.includes('reelay: ready:'));
  expect(samples.length).toBeGreaterThan(0);
  for (const sample of samples) expect(sample.replace(/^# /, '')).toBe(asDefault);
  for (const url of [`${base}/readyz`, `${base}/`, `${base}/docs`, `${base}/api/openapi.json`])
    expect({ url, status: (await fetch(url)).status }).toEqual({ url, status: 200 });
  s.proc.kill('SIGTERM');
  expect((await s.exited).code).toBe(0);
}, 60_000);

test('the build step says which project it builds, one line each, instead of half a minute of silence', async () => {
  // The CLI's build record made older than its inputs: tsc -b builds that project again (a few seconds).
  const stamp = new Date('2000-01-01T00:00:00Z');
  fs.utimesSync(path.join(ROOT, 'packages/cli/dist/.tsbuildinfo'), stamp, stamp);
  const s = await start({ build: true, waitReady: false });
  await until(() => s.stderr.includes('reelay: ready:'), 60_000, 'the ready line');
  const lines = s.stderr.split('\n');
  const building = lines.filter((line) => line.startsWith('reelay: building '));
  expect(building[0]).toMatch(/^reelay: building what changed since the last build \(tsc -b; .*\)…$/);
  // As many projects as the build's references name (each package and app).
  const projects = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')).references.length;
  expect(building).toContainEqual(
    expect.stringMatching(new RegExp(`^reelay: building packages/cli \\(\\d+ of ${projects}\\)…$`)),
  );
  expect(lines).toContainEqual(
    expect.stringMatching(new RegExp(`^reelay: built \\d+ of ${projects} projects in \\d+ s$`)),
  );
  // The steps come before anything starts.
  expect(s.stderr.indexOf('reelay: built ')).toBeLessThan(s.stderr.indexOf('reelay: started a private redis-server'));
  s.proc.kill('SIGTERM');
  expect((await s.exited).code).toBe(0);
}, 90_000);

test('LOG_FORMAT=pretty prints log lines for people instead of JSON', async () => {
  const s = await start({ env: { LOG_FORMAT: 'pretty' }, waitReady: false });
  await until(
    () => s.stderr.includes('reelay: ready:') && s.stdout.includes('worker: worker started'),
    20_000,
    'the ready line',
  );
  const lines = s.stdout.split('\n').filter((line) => /^\[\d\d:\d\d:\d\d\]/.test(line));
  expect(
    lines.some((line) =>
      /^\[\d\d:\d\d:\d\d\] INFO: gateway: gateway listening on http:\/\/127\.0\.0\.1:\d+ {"host":"127\.0\.0\.1","port":\d+,.*}$/.test(
        line,
      ),
    ),
  ).toBe(true);
  expect(s.stdout).not.toContain('{"level"');
  s.proc.kill('SIGTERM');
  expect((await s.exited).code).toBe(0);
}, 60_000);
