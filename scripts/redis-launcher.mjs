// The start script's private redis-server: one per DATA_DIR, on a free loopback port, with its data
// in DATA_DIR/redis. A pid file there lets a second `pnpm start` on the same DATA_DIR see that a
// Redis is still running on it (two servers appending to one AOF would corrupt it) and refuse.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const STATE_FILE = 'reelay-redis.json';

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return err.code === 'EPERM';
  }
  // A recycled pid belongs to some other program: only a redis-server counts.
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('redis-server');
  } catch {
    return true; // no /proc (macOS): trust the pid
  }
}

/** The redis-server a previous start left running on this directory, if any. */
export function runningRedis(dir) {
  try {
    const state = JSON.parse(fs.readFileSync(path.join(dir, STATE_FILE), 'utf8'));
    return Number.isInteger(state.pid) && alive(state.pid) ? state : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts redis-server with AOF persistence in `dir`. It runs in its own process group, so a
 * terminal's Ctrl-C reaches the apps first and Redis is stopped last, after they are done with it.
 */
export async function startRedis(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'yes',
    '--maxmemory-policy',
    'noeviction',
    '--dir',
    dir,
  ];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s: ${out}`)), 10_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run redis-server (${err.message})`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${out}`));
    });
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  // Keep draining its output (a full pipe would block it) without holding the event loop open.
  child.stdout.resume();
  child.stderr.resume();
  const stateFile = path.join(dir, STATE_FILE);
  fs.writeFileSync(
    stateFile,
    JSON.stringify({ pid: child.pid, port, url: `redis://127.0.0.1:${port}`, owner: process.pid }),
  );
  const exited = new Promise((resolve) => {
    if (child.exitCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    /** SIGTERM (Redis flushes the AOF and exits), SIGKILL if it has not gone within 10 s. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const hard = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(hard);
      }
      fs.rmSync(stateFile, { force: true });
    },
    /** Synchronous last resort for process 'exit': no orphan even if the script dies abruptly. */
    killNow() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    },
  };
}
