// A dead worker's jobs: two worker processes started as production starts them (apps/worker/dist/
// main.js, settings from the environment only), one SIGKILLed while it runs jobs, and the time until
// the other has taken and completed them. Also the Redis load the lock and stalled-check settings
// cost: commands per second (INFO commandstats) with both workers idle, and while two jobs run.
// Shared by apps/worker/test/production-worker.scenario.test.ts (which asserts) and `node bench/worker-recovery.mjs`
// (which prints a table for candidate JOB_LOCK_SECONDS / JOB_STALLED_CHECK_SECONDS settings).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnApp } from './scale-scenario.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WORKER_MAIN = path.join(root, 'apps/worker/dist/main.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `node apps/worker/dist/main.js` with only `env`: its JSON log lines kept, started() awaits its start. */
export function spawnWorker(env) {
  const app = spawnApp([WORKER_MAIN], env);
  /** Resolves with the 'worker started' line (its metrics port) once it is written. */
  app.started = () => app.waitFor((l) => l.msg === 'worker started', 'the worker to start');
  return app;
}

/** Commands Redis has run so far, all kinds, less the INFO calls this probe makes. */
async function commandsRun(client) {
  const info = await client.info('commandstats');
  let total = 0;
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (m[1] !== 'info') total += Number(m[2]);
  return total;
}

async function rate(client, seconds) {
  const before = await commandsRun(client);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  return ((await commandsRun(client)) - before) / ((performance.now() - t0) / 1000);
}

/**
 * `env`: JOB_LOCK_SECONDS and the like (unset = the production defaults). `idleSeconds` and
 * `busySeconds`: how long to count commands (0 skips). Returns seconds from the SIGKILL until the
 * surviving worker has taken every job again and completed them, and the command rates.
 */
export async function runRecovery({ env = {}, jobs = 2, idleSeconds = 0, busySeconds = 0, log = () => {} } = {}) {
  const testkit = await import('@reelay/testkit');
  const { Queue } = createRequire(path.join(root, 'apps/worker/package.json'))('bullmq');
  const cleanups = [];
  try {
    const redis = await testkit.startRedis();
    cleanups.push(() => redis.stop());
    const [origin, media] = await Promise.all([
      testkit.startOrigin(),
      testkit.makeTestMedia(
        process.env.REELAY_TEST_MEDIA ?? path.join(os.tmpdir(), `reelay-test-media-v1-${process.getuid?.() ?? 0}`),
      ),
    ]);
    cleanups.push(() => origin.close());
    // The input trickles until the kill, so the jobs are mid-run then; the re-runs get it at once.
    let fast = false;
    const data = fs.readFileSync(media.muxedMp4);
    origin.route('/slow.mp4', (_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': data.length });
      if (fast) return void res.end(data);
      let sent = 0;
      const timer = setInterval(() => {
        const n = fast ? data.length - sent : Math.min(64, data.length - sent);
        res.write(data.subarray(sent, sent + n));
        sent += n;
        if (sent >= data.length) {
          clearInterval(timer);
          res.end();
        }
      }, 50);
      res.on('close', () => clearInterval(timer));
    });
    const dirs = [];
    cleanups.push(async () => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
    const workerEnv = () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-recovery-'));
      dirs.push(dir);
      return {
        REDIS_URL: redis.url,
        DATA_DIR: dir,
        EGRESS_ALLOWLIST: '127.0.0.1',
        LOG_LEVEL: 'info',
        METRICS_PORT: '0',
        WORKER_CONCURRENCY: String(jobs),
        ...env,
      };
    };
    const client = testkit.testRedisClient(redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue('downloads', { connection: client });
    cleanups.push(async () => {
      await queue.close();
      client.disconnect();
    });

    const first = spawnWorker(workerEnv());
    cleanups.push(() => first.child.kill('SIGKILL'));
    await first.started();
    let idle;
    if (idleSeconds) {
      const other = spawnWorker(workerEnv());
      cleanups.push(() => other.child.kill('SIGKILL'));
      await other.started();
      await sleep(1000);
      log('idle: two workers, no jobs');
      idle = await rate(client, idleSeconds);
      other.child.kill('SIGTERM');
      await other.exited;
    }
    // The first worker alone takes every job; the second starts once they run.
    const ids = [];
    for (let i = 0; i < jobs; i++) {
      const id = randomBytes(16).toString('base64url');
      ids.push(id);
      const payload = {
        id,
        operation: 'convert',
        format: 'mkv',
        duration: 2,
        basename: 'clip',
        request_key: `recovery-${id}`,
        created_at: Date.now(),
        inputs: [
          {
            url: origin.url(`/slow.mp4?job=${i}`),
            stream_profile: 'muxed_progressive',
            codecs: 'avc1.42c00d,mp4a.40.2',
          },
        ],
      };
      await queue.add('download', payload, { jobId: id, attempts: 3 });
    }
    const until = async (check, what, ms) => {
      const deadline = Date.now() + ms;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await sleep(50);
      }
    };
    await until(
      async () => (await Promise.all(ids.map((id) => queue.getJobState(id)))).every((s) => s === 'active'),
      'the first worker to run every job',
      20_000,
    );
    const second = spawnWorker(workerEnv());
    cleanups.push(() => second.child.kill('SIGKILL'));
    await second.started();

    log(`busy: ${jobs} jobs running on one worker, the other idle`);
    const busy = busySeconds ? await rate(client, busySeconds) : undefined;

    first.child.kill('SIGKILL');
    await first.exited;
    const killedAt = performance.now();
    fast = true;
    const jobOf = (id) => queue.getJob(id);
    await until(
      async () => (await Promise.all(ids.map(jobOf))).every((j) => j && j.attemptsStarted >= 2),
      'the second worker to take the jobs',
      120_000,
    );
    const takenSeconds = (performance.now() - killedAt) / 1000;
    await until(
      async () => (await Promise.all(ids.map((id) => queue.getJobState(id)))).every((s) => s === 'completed'),
      'the jobs to complete',
      120_000,
    );
    const completedSeconds = (performance.now() - killedAt) / 1000;
    const failed = (await Promise.all(ids.map(jobOf))).map((j) => j.failedReason).filter(Boolean);
    return { takenSeconds, completedSeconds, idleCommandsPerSecond: idle, busyCommandsPerSecond: busy, failed };
  } finally {
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  }
}

// `node bench/worker-recovery.mjs 30/30 10/5 8/4`: lock/stalled-check seconds per candidate.
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const candidates = process.argv.slice(2).length ? process.argv.slice(2) : ['30/30', '10/5', '8/4'];
  const idleSeconds = Number(process.env.IDLE_SECONDS ?? 30);
  for (const candidate of candidates) {
    const [lock, stalled] = candidate.split('/');
    const r = await runRecovery({
      env: { JOB_LOCK_SECONDS: lock, JOB_STALLED_CHECK_SECONDS: stalled },
      idleSeconds,
      busySeconds: idleSeconds,
    });
    const load = idleSeconds
      ? `; Redis ${r.idleCommandsPerSecond.toFixed(2)} commands/s idle (2 workers), ${r.busyCommandsPerSecond.toFixed(2)} with 2 jobs running`
      : '';
    process.stdout.write(
      `lock ${lock} s, stalled check ${stalled} s: taken again ${r.takenSeconds.toFixed(1)} s and completed ${r.completedSeconds.toFixed(1)} s after the SIGKILL${load}${r.failed.length ? `; failed: ${r.failed.join(', ')}` : ''}\n`,
    );
  }
}
