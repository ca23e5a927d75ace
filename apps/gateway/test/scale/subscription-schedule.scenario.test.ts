// Subscriptions checked on their schedule by the real stack, with nobody asking: the built apps as
// processes on a Redis of this file's own, with SUBSCRIPTION_MIN_EVERY_SECONDS lowered to 5 and
// every other setting (REDIS_COMMAND_TIMEOUT_MS included) at its default. Whichever app runs the
// checks, the contract holds: a check runs on time, exactly one per period across replicas, and a
// restart (of one replica, or of all) loses none and doubles none. Observed from outside: the
// listings the origin serves, the API's view, and the check jobs' record in Redis.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { freePort, startOrigin, startRedis, testRedisClient, type Origin, type RedisHandle } from '@reelay/testkit';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const PERIOD_MS = 5_000;
/** Where BullMQ keeps the checks (the default prefix): read to tell a check run twice from two checks. */
const CHECKS = 'bull:subscription-checks';
const RSS = 'application/rss+xml';

let origin: Origin;
let redis: RedisHandle;
const running = new Set<ChildProcess>();
/** Every app started, stopped ones too, for their logs. */
const started: App[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  const build = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'tsconfig.build.json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`the apps do not build:\n${build.stdout}${build.stderr}`);
  origin = await startOrigin();
}, 180_000);

afterAll(async () => {
  await Promise.all([...running].map((child) => stopChild(child)));
  await redis?.stop();
  await origin?.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Settings of every process: the defaults, but for the lowered minimum and the local origin. */
function baseEnv(): Record<string, string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-sched-'));
  dirs.push(dataDir);
  return {
    PATH: process.env.PATH!,
    HOME: process.env.HOME ?? os.tmpdir(),
    REDIS_URL: redis.url,
    DATA_DIR: dataDir,
    EGRESS_ALLOWLIST: '127.0.0.1',
    SUBSCRIPTION_MIN_EVERY_SECONDS: '5',
    SHUTDOWN_GRACE_SECONDS: '1',
    WORKER_CONCURRENCY: '1',
    LOG_LEVEL: 'info',
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  running.delete(child);
}

interface App {
  child: ChildProcess;
  /** The app's log lines so far. */
  lines: string[];
  port: number;
  stop(): Promise<void>;
}

/** Spawns `node <script>` and resolves once a log line matches `ready` (its first group: a port). */
async function spawnApp(args: string[], env: Record<string, string>, ready: RegExp): Promise<App> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const lines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!])
    readline.createInterface({ input: stream }).on('line', (line) => lines.push(line));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not start:\n${lines.join('\n')}`)), 60_000);
    const look = setInterval(() => {
      const m = lines.map((line) => ready.exec(line)).find(Boolean);
      if (m) {
        clearTimeout(timer);
        clearInterval(look);
        resolve(Number(m[1] ?? 0));
      }
    }, 50);
    child.once('exit', (code) => {
      clearTimeout(timer);
      clearInterval(look);
      reject(new Error(`${args[0]} exited with ${code}:\n${lines.join('\n')}`));
    });
  });
  const app = { child, lines, port, stop: () => stopChild(child) };
  started.push(app);
  return app;
}

const startGateway = async () =>
  spawnApp(['apps/gateway/dist/main.js'], { ...baseEnv(), PORT: '0' }, /"port":(\d+).*gateway listening/);
const startWorkerApp = async () =>
  spawnApp(['apps/worker/dist/main.js'], { ...baseEnv(), METRICS_PORT: '0' }, /"port":(\d+).*worker started/);

/** Polls `check` every 100 ms until it holds, or fails after `ms` naming `what`. */
async function until(what: string, ms: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A new account's API key, through the API as a user gets one. */
async function apiKey(base: string): Promise<string> {
  const email = `sched-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const signup = await fetch(`${base}/account/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery staple' }),
  });
  expect(signup.status).toBe(201);
  const cookie = signup.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const key = await fetch(`${base}/account/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name: 'schedule test' }),
  });
  expect(key.status).toBe(201);
  return ((await key.json()) as { data: { secret: string } }).data.secret;
}

/** A feed whose listings the test counts, subscribed every PERIOD_MS; returns the listing times. */
async function subscribe(base: string, route: string): Promise<{ id: string; key: string; checks: number[] }> {
  const checks: number[] = [];
  let counting = false;
  origin.route(route, (_req, res) => {
    if (counting) checks.push(Date.now());
    res
      .writeHead(200, { 'content-type': RSS })
      .end(
        `<?xml version="1.0"?><rss version="2.0"><channel><title>Schedule</title><item><title>One</title><guid>one</guid><enclosure url="${origin.url('/one.m4a')}" type="audio/mp4" length="1"/></item></channel></rss>`,
      );
  });
  const key = await apiKey(base);
  const created = await fetch(`${base}/api/v1/subscriptions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ url: origin.url(route), every: PERIOD_MS / 1000 }),
  });
  const body = (await created.json()) as { data: { id: string; every: number } };
  expect({ status: created.status, every: body.data.every }).toEqual({ status: 201, every: PERIOD_MS / 1000 });
  counting = true; // the creation's own listing is not a check
  return { id: body.data.id, key, checks };
}

async function view(base: string, key: string, id: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}/api/v1/subscriptions/${id}`, { headers: { 'x-api-key': key } });
  return ((await res.json()) as { data: Record<string, unknown> }).data;
}

/** reelay_queue_worker_errors_total summed over every series of these /metrics pages. */
async function workerErrors(urls: string[]): Promise<number> {
  let sum = 0;
  for (const url of urls) {
    const text = await (await fetch(url)).text();
    for (const m of text.matchAll(/^reelay_queue_worker_errors_total\{[^}]*\} (\S+)$/gm)) sum += Number(m[1]);
  }
  return sum;
}

test('under `pnpm start`, a subscription is checked on its schedule with nobody asking, and no queue worker fails', async () => {
  redis = await startRedis();
  const env = { ...baseEnv(), PORT: String(await freePort()), METRICS_PORT: String(await freePort()) };
  const start = await spawnApp([path.join(ROOT, 'scripts/start.mjs'), '--no-build'], env, /reelay: ready: ()/);
  try {
    const base = `http://127.0.0.1:${env.PORT}`;
    const sub = await subscribe(base, '/start.xml');
    const before = await view(base, sub.key, sub.id);
    expect(before.last_checked_at).toBeUndefined();
    const due = Date.parse(String(before.next_check_at));
    expect(due - Date.now()).toBeLessThanOrEqual(PERIOD_MS);
    await until('the first scheduled check', 4 * PERIOD_MS, () => sub.checks.length >= 1);
    expect(sub.checks[0]).toBeGreaterThanOrEqual(due - 50);
    await until('the second scheduled check', 4 * PERIOD_MS, () => sub.checks.length >= 2);
    expect((await view(base, sub.key, sub.id)).last_checked_at).toBeDefined();
    // The gateway's and the worker's metrics (METRICS_PUBLIC: the gateway's on its own port).
    const metrics = [`${base}/metrics`, `http://127.0.0.1:${env.METRICS_PORT}/metrics`];
    expect(await workerErrors(metrics)).toBe(0);
    expect(start.lines.filter((line) => /worker problem|worker error|Command timed out/.test(line))).toEqual([]);
  } finally {
    await start.stop();
    await redis.stop();
  }
}, 120_000);

test('two gateways and two workers: one check per period through a rolling restart, and a full restart loses none and doubles none', async () => {
  redis = await startRedis();
  const admin = testRedisClient(redis.url);
  try {
    const gateways = [await startGateway(), await startGateway()];
    const workers = [await startWorkerApp(), await startWorkerApp()];
    const base = (i: number) => `http://127.0.0.1:${gateways[i]!.port}`;
    const sub = await subscribe(base(0), '/replicas.xml');
    await until('the first scheduled check', 4 * PERIOD_MS, () => sub.checks.length >= 1);

    // A rolling restart: one gateway and one worker at a time, the others keep running.
    await gateways[0]!.stop();
    gateways[0] = await startGateway();
    await workers[0]!.stop();
    workers[0] = await startWorkerApp();
    await until('a check after the rolling restart', 4 * PERIOD_MS, () => sub.checks.length >= 3);

    // Everything stops for longer than a period: a check falls due while nothing runs.
    await Promise.all([...gateways, ...workers].map((app) => app.stop()));
    const listedBefore = sub.checks.length;
    await new Promise((r) => setTimeout(r, 2 * PERIOD_MS));
    expect(sub.checks.length).toBe(listedBefore);
    const restartAt = Date.now();
    gateways.splice(0, 2, await startGateway(), await startGateway());
    workers.splice(0, 2, await startWorkerApp(), await startWorkerApp());
    await until('the overdue check and the next one', 4 * PERIOD_MS, () => sub.checks.length >= listedBefore + 2);
    await Promise.all([...gateways, ...workers].map((app) => app.stop())); // nothing mid-check while counted

    // Redis's record of the checks: each job is one scheduled time (repeat:<subscription>:<ms>), and
    // the next one is made when one starts, so they ran in the order of their times.
    const slots = (await admin.zrange(`${CHECKS}:completed`, '0', '-1'))
      .map((id) => {
        expect(id).toMatch(new RegExp(`^repeat:${sub.id}:\\d+$`));
        return Number(id.split(':').pop());
      })
      .sort((a, b) => a - b);
    expect(await admin.zcard(`${CHECKS}:failed`)).toBe(0);
    // None doubled: the origin listed once per completed check, and no two checks share a period.
    expect(sub.checks.length).toBe(slots.length);
    for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBeGreaterThanOrEqual(PERIOD_MS);
    // None lost while a replica ran: the checks before the full stop were one period apart.
    const beforeStop = slots.slice(0, listedBefore);
    expect(beforeStop.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < beforeStop.length; i++) expect(beforeStop[i]! - beforeStop[i - 1]!).toBe(PERIOD_MS);
    // The check that fell due while everything was stopped ran once after the restart (not lost, not
    // run again for each period missed), and the schedule went on from there.
    const afterRestart = slots.slice(listedBefore);
    expect(afterRestart.filter((at) => at < restartAt)).toHaveLength(1);
    expect(afterRestart.length).toBeGreaterThanOrEqual(2);
    // One next check waits, whatever ran the others.
    expect(await admin.zcard(`${CHECKS}:delayed`)).toBe(1);
    const logs = started.flatMap((app) => app.lines);
    expect(logs.filter((line) => line.includes('Command timed out'))).toEqual([]);
  } finally {
    admin.disconnect();
    await redis.stop();
  }
}, 180_000);
