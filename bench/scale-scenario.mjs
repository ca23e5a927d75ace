// Several replicas, one system: 2 gateway and 2 worker processes (the built apps) on one Redis and
// one S3-compatible store (s3rver), a mixed load sent through both gateways in turn, and one worker
// SIGKILLed mid-run. Shared by the scale test (which asserts) and bench/scale.mjs (which prints).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WORKER_ENTRY = path.join(root, 'apps/worker/test/fixtures/worker-process.mjs');
const GATEWAY_ENTRY = path.join(root, 'apps/gateway/dist/main.js');
const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A node process whose JSON log lines are kept, so callers can wait for one (also bench/worker-recovery.mjs). */
export function spawnApp(args, env) {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const app = { child, logs: [], stderr: '' };
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        app.logs.push(JSON.parse(line));
      } catch {
        /* not a log line */
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (c) => (app.stderr = (app.stderr + c).slice(-4000)));
  app.waitFor = async (test, what, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!app.logs.some(test)) {
      if (child.exitCode !== null) throw new Error(`${what}: the process exited ${child.exitCode}: ${app.stderr}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${app.stderr}`);
      await sleep(50);
    }
    return app.logs.find(test);
  };
  return app;
}

/** Serves a file slowly (in 4 pieces over ~`ms`), so jobs are still running when a worker is killed. */
function slowFile(file, contentType, ms) {
  const data = fs.readFileSync(file);
  return (_req, res) => {
    res.writeHead(200, { 'content-type': contentType, 'content-length': data.length });
    let part = 0;
    const step = Math.ceil(data.length / 4);
    const timer = setInterval(() => {
      res.write(data.subarray(part * step, (part + 1) * step));
      if (++part >= 4) {
        clearInterval(timer);
        res.end();
      }
    }, ms / 4);
    res.on('close', () => clearInterval(timer));
  };
}

/**
 * Runs the scenario and returns its figures. `jobs` merge/remux jobs (half merges of a video-only
 * and an audio-only file, half remuxes to mkv), `directs` direct streams, `playground` public
 * extracts from one client IP against a limit of `publicLimit`.
 */
export async function runScaleScenario({
  jobs = 24,
  directs = 6,
  playground = 14,
  publicLimit = 10,
  log = () => {},
} = {}) {
  const testkit = await import('@reelay/testkit');
  const started = Date.now();
  const cleanups = [];
  const statuses = new Map();
  const count = (status) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
  try {
    const [redis, s3, origin, media] = await Promise.all([
      testkit.startRedis(),
      testkit.startS3(),
      testkit.startOrigin(),
      testkit.makeTestMedia(
        process.env.REELAY_TEST_MEDIA ?? path.join(os.tmpdir(), `reelay-test-media-v1-${process.getuid?.() ?? 0}`),
      ),
    ]);
    cleanups.push(
      () => redis.stop(),
      () => s3.stop(),
      () => origin.close(),
    );
    origin.route('/media/clip.mp4', slowFile(media.muxedMp4, 'video/mp4', 1200));
    origin.route('/media/video-only.mp4', slowFile(media.videoOnlyMp4, 'video/mp4', 1200));
    origin.file('/media/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
    origin.file('/media/direct.mp4', media.muxedMp4, 'video/mp4');
    for (let i = 0; i < jobs; i++) {
      origin.body(
        `/split/${i}.html`,
        `<html><head><title>Split ${i}</title></head><body>
        <video><source src="/media/video-only.mp4?n=${i}" type='video/mp4; codecs="avc1.64001e"' label="360p"><source src="/media/audio-only.m4a?n=${i}" type='audio/mp4; codecs="mp4a.40.2"'></video></body></html>`,
        'text/html',
      );
    }
    const dirs = [];
    const tmp = () => {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-scale-'));
      dirs.push(d);
      return d;
    };
    cleanups.push(async () => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
    const common = {
      REDIS_URL: redis.url,
      ...s3.env,
      EGRESS_ALLOWLIST: '127.0.0.1',
      LOG_LEVEL: 'info',
      RATE_LIMIT_V1_PER_MIN: '0',
      MAX_ACTIVE_JOBS_PER_CLIENT: '0',
    };

    // Workers: short lock timings so the killed worker's jobs come back within seconds.
    const workers = [];
    for (let i = 0; i < 2; i++) {
      const w = spawnApp(
        [
          WORKER_ENTRY,
          JSON.stringify({ metricsPort: 0, lockDuration: 2000, stalledInterval: 1000, shutdownGraceMs: 2000 }),
        ],
        { ...common, DATA_DIR: tmp(), WORKER_CONCURRENCY: '2' },
      );
      cleanups.push(async () => w.child.exitCode === null && w.child.kill('SIGKILL'));
      workers.push(w);
    }
    const gateways = [];
    for (let i = 0; i < 2; i++) {
      const port = await testkit.freePort();
      const g = spawnApp([GATEWAY_ENTRY], {
        ...common,
        DATA_DIR: tmp(),
        PORT: String(port),
        TRUST_PROXY: 'true',
        RATE_LIMIT_PUBLIC_PER_MIN: String(publicLimit),
      });
      cleanups.push(async () => g.child.exitCode === null && g.child.kill('SIGKILL'));
      g.base = `http://127.0.0.1:${port}`;
      gateways.push(g);
    }
    await Promise.all([
      ...workers.map((w) => w.waitFor((l) => l.msg === 'worker started', 'a worker to start')),
      ...gateways.map((g) =>
        g.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('gateway listening'), 'a gateway to start'),
      ),
    ]);
    log(`2 gateways, 2 workers up in ${Date.now() - started} ms`);

    let turn = 0;
    const next = () => gateways[turn++ % 2].base;
    const call = async (method, pathname, body, headers = {}, base = next()) => {
      const res = await fetch(`${base}${pathname}`, {
        method,
        headers: body ? { 'content-type': 'application/json', ...headers } : headers,
        body: body ? JSON.stringify(body) : undefined,
        redirect: 'manual',
      });
      count(res.status);
      return res;
    };
    const json = async (res) => (await res.json()).data;

    // Jobs: each extracted through one gateway and requested through the other.
    const jobIds = [];
    await Promise.all(
      Array.from({ length: jobs }, async (_, i) => {
        let body;
        if (i % 2 === 0) {
          const data = await json(await call('POST', '/api/v1/extract', { url: origin.url(`/split/${i}.html`) }));
          const sources = data.media.flatMap((m) => m.sources);
          body = {
            video_url: sources.find((s) => s.url.includes('video-only')).url,
            audio_url: sources.find((s) => s.url.includes('audio-only')).url,
          };
        } else {
          const url = origin.url(`/media/clip.mp4?n=${i}`);
          await call('POST', '/api/v1/extract', { url });
          body = { url, format: 'mkv' };
        }
        const accepted = await call('POST', '/api/v1/download', body);
        if (accepted.status !== 202) throw new Error(`download answered ${accepted.status}: ${await accepted.text()}`);
        jobIds.push((await json(accepted)).job_id);
      }),
    );
    log(`${jobIds.length} jobs accepted`);

    // One worker is killed while jobs run: as soon as it logs a started job.
    const victim = workers[0];
    await victim.waitFor((l) => l.msg === 'job started', 'the first worker to start a job', 20_000);
    await sleep(300);
    const runningOnVictim =
      victim.logs.filter((l) => l.msg === 'job started').length -
      victim.logs.filter((l) => l.msg === 'job output stored').length;
    victim.child.kill('SIGKILL');
    const killedAt = Date.now();
    log(`worker 1 SIGKILLed with ${runningOnVictim} job(s) running`);

    // Meanwhile: direct streams and the shared public limit, through both gateways.
    const directLen = fs.statSync(media.muxedMp4).size;
    const directUrl = origin.url('/media/direct.mp4');
    await call('POST', '/api/v1/extract', { url: directUrl });
    let directOk = 0;
    for (let i = 0; i < directs; i++) {
      const res = await call('POST', '/api/v1/download', { url: directUrl });
      const buf = Buffer.from(await res.arrayBuffer());
      if (res.status === 200 && buf.length === directLen) directOk++;
    }
    const playgroundStatus = [];
    for (let i = 0; i < playground; i++) {
      const res = await call('POST', '/api/playground', { url: directUrl }, { 'x-forwarded-for': '198.51.100.7' });
      await res.arrayBuffer();
      playgroundStatus.push(res.status);
    }

    // Poll every job through alternating gateways until it has finished.
    const deadline = Date.now() + 45_000;
    const views = new Map();
    let polls = 0;
    while (Date.now() < deadline) {
      for (const id of jobIds) {
        if (views.get(id)?.status === 'completed' || views.get(id)?.status === 'failed') continue;
        polls++;
        views.set(id, await json(await call('GET', `/api/v1/jobs/${id}`)));
      }
      if (jobIds.every((id) => ['completed', 'failed'].includes(views.get(id)?.status))) break;
      await sleep(200);
    }
    const allDoneMs = Date.now() - killedAt;

    // Every artifact through both gateways: same bytes, the size the job reported.
    let identical = 0;
    for (const id of [...views.keys()].filter((id) => views.get(id).status === 'completed')) {
      const bodies = [];
      for (const g of gateways) {
        const res = await call('GET', `/api/v1/jobs/${id}/artifact`, undefined, {}, g.base);
        bodies.push(Buffer.from(await res.arrayBuffer()));
      }
      if (bodies[0].length === views.get(id).artifact.size && sha256(bodies[0]) === sha256(bodies[1])) identical++;
    }

    // Redis's record: 'completed' events per job in the queue's event stream, and attempts started.
    const client = testkit.testRedisClient(redis.url);
    const events = await client.xrange('bull:downloads:events', '-', '+');
    const completions = new Map();
    for (const [, fields] of events) {
      const f = Object.fromEntries(
        fields.reduce((pairs, v, i) => (i % 2 ? pairs : [...pairs, [v, fields[i + 1]]]), []),
      );
      if (f.event === 'completed') completions.set(f.jobId, (completions.get(f.jobId) ?? 0) + 1);
    }
    let attemptsStarted = 0;
    for (const id of jobIds) attemptsStarted += Number(await client.hget(`bull:downloads:${id}`, 'ats'));
    await client.quit();

    const fivexx = [...statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
    return {
      jobs: jobIds.length,
      completed: jobIds.filter((id) => views.get(id)?.status === 'completed').length,
      failed: jobIds.filter((id) => views.get(id)?.status === 'failed').length,
      lost: jobIds.filter((id) => !completions.has(id)).length,
      duplicates: [...completions.values()].filter((n) => n > 1).length,
      attemptsStarted,
      killed: 1,
      runningOnKilled: runningOnVictim,
      identicalThroughBoth: identical,
      directOk,
      directs,
      playground200: playgroundStatus.filter((s) => s === 200).length,
      playground429: playgroundStatus.filter((s) => s === 429).length,
      publicLimit,
      polls,
      requests: [...statuses.values()].reduce((a, b) => a + b, 0),
      fivexx,
      statuses: Object.fromEntries(statuses),
      secondsAfterKill: allDoneMs / 1000,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    for (const clean of cleanups.reverse()) await Promise.resolve(clean()).catch(() => undefined);
  }
}
