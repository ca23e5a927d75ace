#!/usr/bin/env node
// `pnpm start`: builds what is stale, starts a private redis-server when neither REDIS_URL nor
// REDIS_SENTINELS is set (data under DATA_DIR/redis), then runs the gateway and the worker with
// their JSON logs in one stream.
// SIGINT/SIGTERM/SIGHUP stop both apps gracefully (the worker hands running jobs back to the queue
// after SHUTDOWN_GRACE_SECONDS), then Redis. A crashed worker is restarted; a closed stdout
// (`pnpm start | head`) stops everything cleanly instead of crashing.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runningRedis, startRedis } from './redis-launcher.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Our own messages go to stderr; if that is gone too there is nobody left to tell.
process.stderr.on('error', () => {});
const say = (msg) => {
  if (!process.stderr.destroyed) process.stderr.write(`reelay: ${msg}\n`);
};

// --no-build: the caller has just built (tests, the image smoke script); tsc -b would be a no-op.
const noBuild = process.argv.includes('--no-build');
if (!noBuild) say('building…');
const build = noBuild ? { status: 0 } : spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'tsconfig.build.json'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
if (build.status !== 0) {
  say('the build failed; see the errors above.');
  process.exit(build.status ?? 1);
}

// The same zod parse the apps do, so a bad value is reported once, here, before anything starts.
const { parseConfig, ConfigError, hasRedis } = await import(pathToFileURL(path.join(root, 'packages/config/dist/index.js')).href);
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
    say(`Stop that one first (Ctrl-C in its terminal, or kill ${previous.owner ?? previous.pid}), or use another DATA_DIR.`);
    process.exit(1);
  }
  redis = await startRedis(dir);
  // Whatever way this script ends, the private Redis does not outlive it.
  process.on('exit', () => redis.killNow());
  env.REDIS_URL = redis.url;
  say(`started a private redis-server on ${redis.url} (data in ${dir})`);
}
let workerEnv = env;
if (!config.METRICS_PUBLIC && config.METRICS_PORT !== 0) {
  // The gateway serves /metrics on METRICS_PORT then; the worker takes the next port.
  workerEnv = { ...env, METRICS_PORT: String(config.METRICS_PORT + 1) };
  say(`gateway /metrics on :${config.METRICS_PORT}, worker /metrics on :${config.METRICS_PORT + 1}`);
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
  const child = spawn(process.execPath, ['--enable-source-maps', path.join(root, `apps/${name}/dist/main.js`)], { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  forward(child.stdout, process.stdout);
  forward(child.stderr, process.stderr);
  const app = { name, child, startedAt: Date.now() };
  app.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  app.exited.then(({ code, signal }) => onExit(app, code, signal));
  apps.set(name, app);
  return app;
}

let restartDelayMs = 1_000;
let restartTimer;
function onExit(app, code, signal) {
  if (stopping) return;
  const how = signal ?? `code ${code}`;
  // A worker that crashed (not one stopped on purpose with exit 0) is started again: its jobs are
  // in Redis, and the gateway keeps serving meanwhile. Backoff keeps a crash loop from spinning.
  if (app.name === 'worker' && code !== 0) {
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

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (stopping) say(`${signal} again: still stopping (jobs are being handed back)`);
    stopAll(signal, 0);
  });
}

// `pnpm start` runs this script under `sh -c`; a SIGTERM sent to pnpm's pid kills that shell and
// pnpm without forwarding it here. Being re-parented is how we learn of it: stop as if signalled.
const parentPid = process.ppid;
setInterval(() => {
  if (process.ppid !== parentPid) stopAll('the parent process (pnpm) went away', 0);
}, 500).unref();

launch('gateway');
launch('worker');
