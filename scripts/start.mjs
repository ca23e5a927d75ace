#!/usr/bin/env node
// `pnpm start`: builds what is stale, starts a private redis-server when neither REDIS_URL nor
// REDIS_SENTINELS is set (data under DATA_DIR/redis), then runs the gateway and the worker with
// their logs in one stream (JSON; LOG_FORMAT=pretty for people), and says on stderr, in one line,
// where the gateway, the web app, the API docs and the worker's metrics are once /readyz answers
// ready. The build says each project it builds, so a first build is not half a minute of silence.
// SIGINT/SIGTERM/SIGHUP stop both apps gracefully (the worker hands running jobs back to the queue
// after SHUTDOWN_GRACE_SECONDS), then Redis. A crashed worker is restarted; a closed stdout
// (`pnpm start | head`) stops everything cleanly instead of crashing.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from './build.mjs';
import { runningRedis, startRedis } from './redis-launcher.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Our own messages go to stderr; if that is gone too there is nobody left to tell.
process.stderr.on('error', () => {});
const say = (msg) => {
  if (!process.stderr.destroyed) process.stderr.write(`reelay: ${msg}\n`);
};

// --no-build: the caller has just built (tests, the image smoke script); tsc -b would be a no-op.
const noBuild = process.argv.includes('--no-build');
const built = noBuild ? 0 : await build(root, say);
if (built !== 0) {
  say('the build failed; see the errors above.');
  process.exit(built);
}

// The same zod parse the apps do, so a bad value is reported once, here, before anything starts.
const { parseConfig, ConfigError, hasRedis } = await import(
  pathToFileURL(path.join(root, 'packages/config/dist/index.js')).href
);
const env = { ...process.env, DATA_DIR: path.resolve(root, process.env.DATA_DIR || './data') };
let config;
try {
  config = parseConfig(env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  for (const issue of err.issues) say(`invalid configuration: ${issue.variable}: ${issue.message}`);
  process.exit(2);
}
fs.mkdirSync(config.DATA_DIR, { recursive: true });

// The worker hands its running jobs back once its grace is over; the hard kill must come later, or
// those jobs would sit in `active` until their lock lapses.
const hardKillMs = (config.SHUTDOWN_GRACE_SECONDS + 10) * 1000;

let redis;
if (!hasRedis(config)) {
  const which = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (which.error) {
    say('REDIS_URL is not set and no redis-server is on PATH.');
    say('Install Redis >= 6.2 (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis),');
    say('or point REDIS_URL at one: REDIS_URL=redis://host:6379 pnpm start');
    process.exit(1);
  }
  const dir = path.join(config.DATA_DIR, 'redis');
  const previous = runningRedis(dir);
  if (previous) {
    say(`a redis-server (pid ${previous.pid}, ${previous.url}) is still running on ${dir}.`);
    say('Another `pnpm start` is using this DATA_DIR, or one was killed without stopping it.');
    say(
      `Stop that one first (Ctrl-C in its terminal, or kill ${previous.owner ?? previous.pid}), or use another DATA_DIR.`,
    );
    process.exit(1);
  }
  redis = await startRedis(dir);
  // Whatever way this script ends, the private Redis does not outlive it.
  process.on('exit', () => redis.killNow());
  env.REDIS_URL = redis.url;
  say(`started a private redis-server on ${redis.url} (data in ${dir})`);
}
// pino-pretty colours only a terminal; the apps write into our pipes, so tell them about ours.
if (config.LOG_FORMAT === 'pretty' && process.stdout.isTTY && !env.NO_COLOR) env.FORCE_COLOR ??= '1';
let workerEnv = env;
let workerMetricsPort = config.METRICS_PORT;
if (!config.METRICS_PUBLIC && config.METRICS_PORT !== 0) {
  // The gateway serves /metrics on METRICS_PORT then; the worker takes the next port.
  workerMetricsPort = config.METRICS_PORT + 1;
  say(`gateway /metrics on :${config.METRICS_PORT}, worker /metrics on :${workerMetricsPort}`);
}
// A second `pnpm start` (on another PORT and DATA_DIR) would find the default port taken by the
// first one's worker. Unless METRICS_PORT was chosen, give the worker a free port instead; a chosen
// one that is taken stops the worker once with a message naming METRICS_PORT.
if (!process.env.METRICS_PORT && workerMetricsPort !== 0 && !(await portFree(config.HOST, workerMetricsPort))) {
  const taken = workerMetricsPort;
  // Port 0: the worker binds a free port itself. A port picked here and handed over could be taken
  // by another process in between (it happened under a busy test run).
  workerMetricsPort = 0;
  say(
    `port ${taken} (the default METRICS_PORT) is taken, another \`pnpm start\`?; the worker's /healthz and /metrics take a free port instead (its "worker started" line names it)`,
  );
}
if (workerMetricsPort !== config.METRICS_PORT) workerEnv = { ...env, METRICS_PORT: String(workerMetricsPort) };

function portFree(host, port) {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

// Children write to pipes we read, so a closed stdout is our EPIPE to handle, not theirs to crash on.
let outputClosed = false;
process.stdout.on('error', (err) => {
  outputClosed = true;
  stopAll(err.code === 'EPIPE' ? 'output closed' : `output failed: ${err.message}`, 0);
});
// Whole lines only, so two apps' lines never interleave; a slow reader (a paused terminal, `| less`)
// pauses the child's pipe instead of filling this process's memory.
function forward(from, to) {
  let partial = '';
  const write = (text) => {
    if ((to === process.stdout && outputClosed) || to.destroyed) return;
    if (!to.write(text)) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  };
  from.setEncoding('utf8');
  from.on('data', (chunk) => {
    const text = partial + chunk;
    const cut = text.lastIndexOf('\n') + 1;
    partial = text.slice(cut);
    if (cut > 0) write(text.slice(0, cut));
  });
  from.on('end', () => {
    if (partial) write(`${partial}\n`);
  });
}

const apps = new Map();
let stopping = false;

function launch(name) {
  const childEnv = name === 'worker' ? workerEnv : env;
  const child = spawn(process.execPath, ['--enable-source-maps', path.join(root, `apps/${name}/dist/main.js`)], {
    cwd: root,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  forward(child.stdout, process.stdout);
  forward(child.stderr, process.stderr);
  if (name === 'worker') watchWorkerPort(child.stdout);
  const app = { name, child, startedAt: Date.now() };
  app.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  app.exited.then(({ code, signal }) => onExit(app, code, signal));
  apps.set(name, app);
  return app;
}

// The worker's /metrics port as it bound it (METRICS_PORT, the next port, or a free one), read from
// its "worker started" log line (JSON, or pretty with the fields as JSON), for the ready line.
let workerPortBound;
function watchWorkerPort(stream) {
  let partial = '';
  const look = (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop().slice(-65_536);
    const started = lines.find((line) => line.includes('worker started'));
    const port = started && /"port":(\d+)/.exec(started)?.[1];
    if (!port) return;
    workerPortBound = Number(port);
    stream.off('data', look);
  };
  stream.on('data', look);
}

let restartDelayMs = 1_000;
let restartTimer;
function onExit(app, code, signal) {
  if (stopping) return;
  const how = signal ?? `code ${code}`;
  // A worker that crashed (not one stopped on purpose with exit 0) is started again: its jobs are
  // in Redis, and the gateway keeps serving meanwhile. Backoff keeps a crash loop from spinning.
  // Exit 2 is a configuration problem (a taken METRICS_PORT, no Redis): a restart would fail the same way.
  if (app.name === 'worker' && code !== 0 && code !== 2) {
    if (Date.now() - app.startedAt > 60_000) restartDelayMs = 1_000;
    say(`the worker exited with ${how}; restarting it in ${restartDelayMs / 1000} s`);
    restartTimer = setTimeout(() => launch('worker'), restartDelayMs);
    restartDelayMs = Math.min(restartDelayMs * 2, 30_000);
    return;
  }
  stopAll(`${app.name} exited with ${how}`, code === 0 ? 0 : 1);
}

async function stopAll(reason, exitCode) {
  if (stopping) return;
  stopping = true;
  clearTimeout(restartTimer);
  say(`stopping (${reason}); running jobs go back to the queue after ${config.SHUTDOWN_GRACE_SECONDS} s…`);
  const running = [...apps.values()].filter(({ child }) => child.exitCode === null && child.signalCode === null);
  for (const { child } of running) child.kill('SIGTERM');
  const hardStop = setTimeout(() => {
    for (const { name, child } of running) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      say(`${name} did not stop within ${hardKillMs / 1000} s; killing it`);
      child.kill('SIGKILL');
    }
  }, hardKillMs);
  await Promise.all(running.map((a) => a.exited));
  clearTimeout(hardStop);
  if (redis) await redis.stop();
  say('stopped');
  process.exit(exitCode);
}

// A Ctrl-C in a terminal reaches this script twice under `pnpm start`: from the terminal (the whole
// foreground process group gets it) and from pnpm, which passes on what it got. Signals that close
// together are one request to stop, not a person insisting.
const SAME_SIGNAL_MS = 500;
let lastSignalAt = 0;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    const repeated = Date.now() - lastSignalAt < SAME_SIGNAL_MS;
    lastSignalAt = Date.now();
    if (stopping && !repeated) say(`${signal} again: still stopping (jobs are being handed back)`);
    stopAll(signal, 0);
  });
}

// `pnpm start` execs this script in place of pnpm's `sh -c` (package.json), so pnpm forwards its
// SIGINT and SIGTERM here and reports this script's exit status: 0 after a clean stop, not a
// failure. A pnpm killed outright forwards nothing; being re-parented is how we learn of that.
const parentPid = process.ppid;
setInterval(() => {
  if (process.ppid !== parentPid) stopAll('the parent process (pnpm) went away', 0);
}, 500).unref();

// One line for the person at the terminal once /readyz says ready (Redis answers and a worker is
// healthy): where everything is. The JSON log lines on stdout are for machines; this goes to stderr.
const host = ['0.0.0.0', '::', ''].includes(config.HOST)
  ? '127.0.0.1'
  : config.HOST.includes(':')
    ? `[${config.HOST}]`
    : config.HOST;
const base = `http://${host}:${config.PORT}`;
// Facts about the set-up a person wants at start (which ffmpeg/ffprobe, …) go into this list.
const readyFacts = [`gateway ${base}`, `web app ${base}/`, `API docs ${base}/docs`];
const NOT_READY_HINT_MS = 20_000;

/** Which ffmpeg and ffprobe this host resolved and why (the gateway's /healthz says), e.g. "ffmpeg ffmpeg (PATH)". */
async function binaryFacts() {
  const health = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
    (res) => res.json(),
    () => ({}),
  );
  return ['ffmpeg', 'ffprobe'].flatMap((name) =>
    health?.[name]?.path ? [`${name} ${health[name].path} (${health[name].source})`] : [],
  );
}

async function announceWhenReady() {
  const startedAt = Date.now();
  const PORT_WAIT_MS = 5_000;
  let readySince;
  let hinted = false;
  while (!stopping) {
    const answer = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
      async (res) => ({ ok: res.ok, body: await res.json().catch(() => ({})) }),
      () => undefined,
    );
    // The port a worker told (its log line), else the one it was given; a free port (0) it picked is
    // known only from its line, which LOG_LEVEL=warn silences: then the line goes without it.
    const port = workerPortBound ?? (workerMetricsPort !== 0 ? workerMetricsPort : undefined);
    if (answer?.ok) readySince ??= Date.now();
    if (answer?.ok && (port !== undefined || Date.now() - readySince > PORT_WAIT_MS)) {
      const metrics = port === undefined ? [] : [`worker metrics http://${host}:${port}/metrics`];
      return say(`ready: ${[...readyFacts, ...metrics, ...(await binaryFacts())].join(' · ')}`);
    }
    if (!hinted && answer && Date.now() - startedAt > NOT_READY_HINT_MS) {
      hinted = true;
      say(`not ready yet: ${answer.body.reason ?? 'see GET /readyz'}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

launch('gateway');
launch('worker');
announceWhenReady();
