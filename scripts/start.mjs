#!/usr/bin/env node
// `pnpm start`: builds what is stale, starts a private redis-server when REDIS_URL is unset (data
// under DATA_DIR/redis), then runs the gateway and the worker with their JSON logs in one stream.
// Ctrl-C or SIGTERM stops both apps gracefully, then Redis.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg) => process.stderr.write(`reelay: ${msg}\n`);

say('building…');
const build = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) {
  say('the build failed; see the errors above.');
  process.exit(build.status ?? 1);
}

const env = { ...process.env };
const dataDir = path.resolve(root, env.DATA_DIR || './data');
fs.mkdirSync(dataDir, { recursive: true });
env.DATA_DIR = dataDir;

let redis;
if (!env.REDIS_URL) {
  const which = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (which.error) {
    say('REDIS_URL is not set and no redis-server is on PATH.');
    say('Install Redis >= 6.2 (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis),');
    say('or point REDIS_URL at one: REDIS_URL=redis://host:6379 pnpm start');
    process.exit(1);
  }
  const { startRedis } = await import('@reelay/testkit');
  const dir = path.join(dataDir, 'redis');
  fs.mkdirSync(dir, { recursive: true });
  redis = await startRedis({ dir, appendOnly: true, detached: true });
  env.REDIS_URL = redis.url;
  say(`started a private redis-server on ${redis.url} (data in ${dir})`);
}

const apps = ['gateway', 'worker'].map((name) => {
  const child = spawn(process.execPath, ['--enable-source-maps', path.join(root, `apps/${name}/dist/main.js`)], { cwd: root, env, stdio: 'inherit' });
  return { name, child, exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))) };
});

let stopping = false;
async function stopAll(reason, exitCode) {
  if (stopping) return;
  stopping = true;
  say(`stopping (${reason})…`);
  for (const { child } of apps) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const hardStop = setTimeout(() => {
    for (const { child } of apps) if (child.exitCode === null) child.kill('SIGKILL');
  }, 30_000);
  await Promise.all(apps.map((a) => a.exited));
  clearTimeout(hardStop);
  if (redis) await redis.stop();
  process.exit(exitCode);
}

process.on('SIGINT', () => stopAll('SIGINT', 0));
process.on('SIGTERM', () => stopAll('SIGTERM', 0));
for (const app of apps) {
  app.exited.then(({ code, signal }) => {
    if (!stopping) stopAll(`${app.name} exited with ${signal ?? code}`, 1);
  });
}
