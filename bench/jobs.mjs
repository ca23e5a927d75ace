// Benchmark: ffmpeg jobs through the whole service (gateway → Redis/BullMQ → one worker → ffmpeg
// through the worker's egress proxy → artifact store), against the same ffmpeg command run bare on
// the same inputs from the same origin, in the same run.
// 1. Merge of a 60 s 720p H.264 video-only MP4 and a 60 s AAC audio-only M4A (stream copy, +faststart):
//    job created→finished against bare ffmpeg, best of 5, runs alternated. Target: job ≤ 1.3× bare.
//    CPU time per merge (worker, its ffmpeg, bare ffmpeg) is printed beside it: load hardly moves it.
//    Beside it, the options of issue 10 measured on the same inputs (prefetching the inputs through
//    egress into files, then ffmpeg on local files), so the choice in the worker can be checked.
// 2. Worker RSS while it runs 4 merge jobs at once (WORKER_CONCURRENCY=4), against the same worker idle.
// Queue latency and throughput (a burst of jobs, 1 and 2 workers) are in bench/queue.mjs.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fmt, formatLoad, requireTool, root, sampleRss, startNginxOrigin, waitForHttp } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_JOB_ROUNDS ?? 5);
const RSS_JOBS = 4;
const TARGET_RATIO = 1.3;
/** Peak worker RSS with RSS_JOBS merges running, against the same worker idle (the media is not buffered). */
const TARGET_RSS_RATIO = 2;
export const POLL_MS = 50;
const MEDIA_SECONDS = 60;

/** Runs a command; resolves with its wall time (ms) and output, rejects on a non-zero exit. */
export function run(cmd, args, { timeoutMs = 120_000, env } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (code === 0) resolve({ ms, out, err });
      else reject(new Error(`${cmd} ${args.join(' ')} failed (${signal ?? code}): ${err.slice(-800)}`));
    });
  });
}

/** Makes `file` with ffmpeg once (written aside, then renamed, so an interrupted run leaves nothing). */
export async function makeOnce(file, args) {
  if (fs.existsSync(file) && fs.statSync(file).size > 0) return false;
  const part = `${file}.${process.pid}.part`;
  try {
    await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args, part], { timeoutMs: 600_000 });
    fs.renameSync(part, file);
  } finally {
    fs.rmSync(part, { force: true });
  }
  return true;
}

export async function makeInputs(dir) {
  const t0 = Date.now();
  const made = [
    await makeOnce(path.join(dir, 'video.mp4'), [
      '-f',
      'lavfi',
      '-i',
      `testsrc2=size=1280x720:rate=30`,
      '-t',
      String(MEDIA_SECONDS),
      '-an',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
    ]),
    await makeOnce(path.join(dir, 'audio.m4a'), [
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=440:sample_rate=48000:duration=${MEDIA_SECONDS}`,
      '-vn',
      '-c:a',
      'aac',
      '-b:a',
      '128k',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
    ]),
    await makeOnce(path.join(dir, 'tone.mp3'), [
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=880:sample_rate=44100:duration=2',
      '-c:a',
      'libmp3lame',
      '-b:a',
      '128k',
      '-f',
      'mp3',
    ]),
  ];
  // Relative URLs: the page does not depend on the origin's port.
  const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>Benchmark pair</title></head><body>
<video controls width="1280" height="720">
  <source src="video.mp4" type='video/mp4; codecs="avc1.64001f"'>
  <source src="audio.m4a" type='audio/mp4; codecs="mp4a.40.2"'>
</video>
</body></html>
`;
  const pageFile = path.join(dir, 'pair.html');
  if (!fs.existsSync(pageFile) || fs.readFileSync(pageFile, 'utf8') !== page) fs.writeFileSync(pageFile, page);
  for (const name of ['video.mp4', 'audio.m4a', 'tone.mp3', 'pair.html']) fs.chmodSync(path.join(dir, name), 0o644);
  return { generatedSeconds: made.some(Boolean) ? (Date.now() - t0) / 1000 : 0 };
}

/** The environment that sends ffmpeg's requests through a proxy listening on `server`. */
function proxiedEnv(server) {
  const env = { ...process.env, http_proxy: `http://127.0.0.1:${server.address().port}` };
  delete env.no_proxy;
  delete env.NO_PROXY;
  return env;
}

/**
 * The least a forward proxy can do (http.get piped to the response, no checks, no accounting), in
 * this process: what ffmpeg's copy costs through any Node proxy on this machine, next to the
 * worker's egress proxy. Returns the environment that sends ffmpeg's requests through it.
 */
async function startMiniProxy() {
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const headers = req.headers.range ? { range: req.headers.range } : {};
    const up = http.get(req.url, { agent, headers }, (upstream) => {
      res.writeHead(upstream.statusCode ?? 502, upstream.headers);
      upstream.pipe(res);
    });
    up.once('error', () => res.destroy());
    res.once('close', () => up.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    env: proxiedEnv(server),
    close: () => {
      agent.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * The floor of any process in ffmpeg's byte path: a raw TCP forwarder to the origin (no HTTP parsing,
 * no checks). ffmpeg sends its absolute-form requests through it as to any proxy and the origin
 * answers them. What is left between this and bare ffmpeg is what copying every byte through one
 * Node process costs on this machine.
 */
async function startTcpForward(originPort) {
  const server = net.createServer((client) => {
    const upstream = net.connect(originPort, '127.0.0.1');
    client.pipe(upstream);
    upstream.pipe(client);
    client.once('error', () => upstream.destroy());
    upstream.once('error', () => client.destroy());
    client.once('close', () => upstream.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { env: proxiedEnv(server), close: () => new Promise((resolve) => server.close(resolve)) };
}

/**
 * The fallback origin when nginx is not installed: /files/* from `dir` with single byte ranges, in this
 * process. bench/origin.mjs answers a ranged request with 200 and the whole file, and ffmpeg then
 * reads two interleaved inputs about ten times slower (3 s instead of 0.3 s here), which would make
 * the baseline meaningless; with 206 answers it reads them as fast as from nginx.
 */
export async function startFileOrigin(dir) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = path.join(dir, path.basename(decodeURIComponent(url.pathname)));
    if (!url.pathname.startsWith('/files/') || !fs.existsSync(file)) return void res.writeHead(404).end();
    const size = fs.statSync(file).size;
    const type = file.endsWith('.html') ? 'text/html; charset=utf-8' : 'application/octet-stream';
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    let start = 0;
    let end = size - 1;
    if (range && (range[1] || range[2])) {
      start = range[1] ? Number(range[1]) : Math.max(0, size - Number(range[2]));
      end = range[1] && range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
      if (start >= size || start > end) return void res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
      res.writeHead(206, {
        'content-type': type,
        'content-length': end - start + 1,
        'content-range': `bytes ${start}-${end}/${size}`,
        'accept-ranges': 'bytes',
      });
    } else {
      res.writeHead(200, { 'content-type': type, 'content-length': size, 'accept-ranges': 'bytes' });
    }
    if (req.method === 'HEAD') return void res.end();
    fs.createReadStream(file, { start, end }).pipe(res);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    kind: 'node (in-process, ranges)',
    stop: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Starts an app (gateway or worker) with its output in a log file. */
export function startApp(script, env, logFile) {
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', fd, fd],
  });
  fs.closeSync(fd);
  return child;
}

/** SIGTERM, then SIGKILL after `ms`; resolves once the process has exited. */
export function stopChild(child, ms = 15_000) {
  return new Promise((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function percentile(xs, p) {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const median = (xs) => percentile(xs, 50);
const best = (xs) => Math.min(...xs);

export class Api {
  constructor(base) {
    this.base = base;
    /** Jobs seen "expired" (without finished_at) while completing: see waitJob. */
    this.spuriousExpired = [];
  }

  async post(route, body) {
    const res = await fetch(`${this.base}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text };
  }

  async extract(url) {
    const res = await this.post('/api/v1/extract', { url });
    if (res.status !== 200) throw new Error(`extract of ${url} answered ${res.status}: ${res.text}`);
    return res.json.data;
  }

  /** POST /api/v1/download that must make a new job; returns its id. */
  async submit(body) {
    const res = await this.post('/api/v1/download', body);
    if (res.status !== 202)
      throw new Error(`download ${JSON.stringify(body)} answered ${res.status}: ${res.text.slice(0, 500)}`);
    return res.json.data.job_id;
  }

  async job(id) {
    const res = await fetch(`${this.base}/api/v1/jobs/${id}`);
    if (res.status !== 200) throw new Error(`GET job ${id} answered ${res.status}: ${await res.text()}`);
    return (await res.json()).data;
  }

  /**
   * Polls jobs until all are completed (one poll at a time, `pollMs` apart, so that a burst of waits does
   * not load the gateway it measures); resolves with the job records in the order of `ids`.
   */
  async waitAll(ids, { pollMs = 250, timeoutMs = 300_000 } = {}) {
    const deadline = Date.now() + timeoutMs;
    const done = new Map();
    while (done.size < ids.length) {
      for (const id of ids) {
        if (done.has(id)) continue;
        const job = await this.job(id);
        if (job.status === 'completed') done.set(id, job);
        else if (job.status === 'failed' || (job.status === 'expired' && job.finished_at))
          throw new Error(`job ${id} ${job.status}: ${JSON.stringify(job.error)}`);
      }
      if (done.size === ids.length) break;
      if (Date.now() > deadline)
        throw new Error(`${ids.length - done.size} of ${ids.length} jobs not completed after ${timeoutMs} ms`);
      await sleep(pollMs);
    }
    return ids.map((id) => done.get(id));
  }

  /** Polls the job every POLL_MS until it is completed; throws if it fails or takes too long. */
  async waitJob(id, timeoutMs = 120_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const job = await this.job(id);
      if (job.status === 'completed') return job;
      // GET /jobs/{id} reads the job's hash and then its state: a job that completes in between is
      // shown once as "expired" without finished_at. Counted and polled again, not taken as final.
      if (job.status === 'expired' && !job.finished_at && this.spuriousExpired.push(id) <= 100) {
        await sleep(POLL_MS);
        continue;
      }
      if (job.status === 'failed' || job.status === 'expired')
        throw new Error(`job ${id} ${job.status}: ${JSON.stringify(job.error)}`);
      if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status} after ${timeoutMs} ms`);
      await sleep(POLL_MS);
    }
  }
}

/** created→started, started→finished and created→finished (ms) from a job record. */
export function timings(job) {
  const created = Date.parse(job.created_at);
  const started = Date.parse(job.started_at);
  const finished = Date.parse(job.finished_at);
  return { wait: started - created, processing: finished - started, total: finished - created };
}

async function probeMedia(url) {
  const { out } = await run('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'format=duration,format_name:stream=codec_type,codec_name',
    '-of',
    'json',
    url,
  ]);
  const info = JSON.parse(out);
  const streams = info.streams ?? [];
  return {
    duration: Number(info.format?.duration),
    video: streams.filter((s) => s.codec_type === 'video').length,
    audio: streams.filter((s) => s.codec_type === 'audio').length,
    codecs: streams.map((s) => s.codec_name).join('+'),
  };
}

/**
 * CPU time (ms) a process has used itself and its waited-for children (ffmpeg, ffprobe), from
 * /proc/<pid>/stat. Unlike wall time, other load on the machine hardly changes it.
 */
export function cpuMs(pid = process.pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const tick = 1000 / 100; // USER_HZ is 100 on Linux
  return { self: (Number(f[11]) + Number(f[12])) * tick, children: (Number(f[13]) + Number(f[14])) * tick };
}

/** CPU time (ms) `fn` costs process `pid`: its own and its children's. */
async function cpuOf(pid, fn) {
  const before = cpuMs(pid);
  const value = await fn();
  const after = cpuMs(pid);
  return { value, self: after.self - before.self, children: after.children - before.children };
}

/** The sum and count of a worker histogram or counter, from its /metrics text. */
function metric(text, name) {
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** The bench inputs, their origin, a private Redis and the gateway: what both job benchmarks start. */
export async function startStack(scratch, logs) {
  const { startRedis, freePort } = await import('@reelay/testkit');
  const filesDir = path.join(os.tmpdir(), 'reelay-bench-files');
  fs.mkdirSync(filesDir, { recursive: true });
  fs.chmodSync(filesDir, 0o755);
  const { generatedSeconds } = await makeInputs(filesDir);
  const dataDir = path.join(scratch, 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  const stack = { filesDir, generatedSeconds, dataDir, workers: [] };
  stack.stopWorkers = async () => {
    await Promise.all(stack.workers.map((w) => stopChild(w.child)));
    stack.workers = [];
  };
  stack.stop = async () => {
    await stack.stopWorkers();
    await stopChild(stack.gateway);
    if (stack.origin?.child) await stopChild(stack.origin.child);
    else await stack.origin?.stop();
    await stack.redis?.stop();
  };
  try {
    stack.redis = await startRedis();
    stack.origin = (await startNginxOrigin({ files: filesDir })) ?? (await startFileOrigin(filesDir));
    const port = await freePort();
    stack.common = {
      REDIS_URL: stack.redis.url,
      DATA_DIR: dataDir,
      EGRESS_ALLOWLIST: '127.0.0.1',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      RATE_LIMIT_V1_PER_MIN: '0',
      MAX_ACTIVE_JOBS_PER_CLIENT: '0',
    };
    stack.gateway = startApp('apps/gateway/dist/main.js', { ...stack.common, PORT: String(port) }, logs.gateway);
    stack.base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${stack.base}/healthz`); // it listens once Redis answers; /readyz would wait for a worker
  } catch (err) {
    await stack.stop(); // whatever did start
    throw err;
  }
  stack.api = new Api(stack.base);
  stack.fileUrl = (name) => `http://127.0.0.1:${stack.origin.port}/files/${name}`;
  /** Starts a worker with its own metrics port; resolves once it answers /healthz. */
  stack.startWorker = async (env = {}) => {
    const metricsPort = await freePort();
    const child = startApp(
      'apps/worker/dist/main.js',
      { ...stack.common, METRICS_PORT: String(metricsPort), ...env },
      logs.worker,
    );
    const w = { child, url: `http://127.0.0.1:${metricsPort}` };
    stack.workers.push(w);
    await waitForHttp(`${w.url}/healthz`);
    return w;
  };
  return stack;
}

/**
 * How the worker's log lines name a job: a reference, never its id (@reelay/observability's logRef,
 * written again here so the benchmarks read a log without importing a build).
 */
export function jobRef(jobId) {
  return createHash('sha256').update(jobId).digest('hex').slice(0, 16);
}

/**
 * The worker's log lines for one job (its LOG_LEVEL must be info): when it started, and what its
 * "job output stored" line says (phases_ms, requests, range_parts).
 */
export function workerLines(logFile, jobId) {
  const out = {};
  const ref = jobRef(jobId);
  for (const line of fs.readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes(ref)) continue;
    try {
      const rec = JSON.parse(line);
      if (rec.job !== ref) continue;
      if (rec.msg === 'job started') out.started = Date.parse(rec.time);
      if (rec.msg === 'job output stored')
        Object.assign(out, {
          stored: Date.parse(rec.time),
          phases: rec.phases_ms,
          requests: rec.requests,
          rangeParts: rec.range_parts,
        });
    } catch {
      /* not a JSON line */
    }
  }
  return out;
}

/** Prints the last lines of the apps' logs (after a failure). */
export function dumpLogs(logs) {
  for (const [name, file] of Object.entries(logs)) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (text.trim()) console.error(`--- ${name} log (last lines) ---\n${text.split('\n').slice(-30).join('\n')}`);
  }
}

/**
 * The prefetch option of issue 10, measured outside the worker: both inputs fetched through the same
 * egress client the worker uses (address checks, pinned sockets) into files, in parallel, then ffmpeg
 * on the local files. Returns the download and ffmpeg times (ms).
 */
async function prefetchThenFfmpeg(egress, urls, dir, ffmpegLocal) {
  const t = performance.now();
  const files = urls.map((_, i) => path.join(dir, `prefetch-${i}`));
  await Promise.all(
    urls.map(async (url, i) => {
      const res = await egress.open(url, { identity: true });
      await pipeline(res.body, fs.createWriteStream(files[i]));
    }),
  );
  const download = performance.now() - t;
  const ffmpeg = (await ffmpegLocal(files)).ms;
  for (const f of files) fs.rmSync(f, { force: true });
  return { download, ffmpeg, total: download + ffmpeg };
}

export async function benchJobs() {
  requireTool('ffmpeg', 'apt-get install ffmpeg');
  requireTool('ffprobe', 'apt-get install ffmpeg');
  requireTool('redis-server', 'apt-get install redis-server');
  const { Egress } = await import('../packages/egress/dist/index.js');
  const { startJobProxy } = await import('../apps/worker/dist/proxy.js');
  const loadStart = os.loadavg();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-bench-jobs-'));
  // BENCH_JOBS_LOG_DIR keeps the apps' logs (with BENCH_LOG_LEVEL=debug: a timeline of each job).
  const logDir = process.env.BENCH_JOBS_LOG_DIR ? path.resolve(process.env.BENCH_JOBS_LOG_DIR) : scratch;
  fs.mkdirSync(logDir, { recursive: true });
  const logs = { gateway: path.join(logDir, 'gateway.log'), worker: path.join(logDir, 'worker.log') };
  const concurrency = Number(process.env.WORKER_CONCURRENCY ?? os.availableParallelism());
  let stack;
  let api;
  const t0 = Date.now();
  const merge = {
    start: [],
    bare: [],
    bareCpu: [],
    jobCpu: [],
    prefetch: [],
    probe: [],
    probeThenFfmpeg: [],
    viaProxy: [],
    viaTcp: [],
    viaWorkerProxy: [],
    proxyCpu: [],
    jobs: [],
  };
  let miniProxy;
  let tcpForward;
  let workerProxy;
  let artifactInfo;
  let sizes;
  const rss = {};
  const workerMetrics = { before: '', after: '' };
  let failed = false;
  try {
    stack = await startStack(scratch, logs);
    api = stack.api;
    sizes = Object.fromEntries(
      ['video.mp4', 'audio.m4a'].map((n) => [n, fs.statSync(path.join(stack.filesDir, n)).size]),
    );
    const worker = await stack.startWorker();
    const { fileUrl, base } = stack;

    // The pair from the HTML5 page.
    const pair = await api.extract(fileUrl('pair.html'));
    const sources = pair.media.flatMap((m) => m.sources);
    const video = sources.find((s) => s.stream_profile === 'video_only');
    const audio = sources.find((s) => s.stream_profile === 'audio_only');
    if (!video || !audio)
      throw new Error(`the pair page gave no video_only + audio_only sources: ${JSON.stringify(pair)}`);

    // 1. Merge job vs bare ffmpeg. A warm-up of each (page cache, JIT, connections) is not counted.
    const bareOut = path.join(scratch, 'bare.mp4');
    const ffmpegPair = (inputs, env) =>
      run(
        'ffmpeg',
        [
          '-hide_banner',
          '-loglevel',
          'error',
          '-y',
          '-i',
          inputs[0],
          '-i',
          inputs[1],
          '-map',
          '0:v:0',
          '-map',
          '1:a:0',
          '-c',
          'copy',
          '-movflags',
          '+faststart',
          bareOut,
        ],
        { env },
      );
    const bare = (env) => ffmpegPair([video.url, audio.url], env);
    // What the worker did before: ask ffprobe for the duration (for progress), as the extract gave none.
    const probe = (env) =>
      run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'json', video.url], { env });
    const probeThenFfmpeg = async (env) => {
      const t = performance.now();
      await probe(env);
      await bare(env);
      return performance.now() - t;
    };
    const egress = new Egress({ allowlist: ['127.0.0.1'] });
    miniProxy = await startMiniProxy();
    tcpForward = await startTcpForward(stack.origin.port);
    // The worker's own egress proxy, in this process: what ffmpeg's reads cost through it, in wall
    // time and in this process's CPU time (which, unlike wall time, other load hardly changes).
    const silent = { debug() {}, info() {}, warn() {}, error() {} };
    workerProxy = await startJobProxy({ egress, logger: silent });
    const viaWorkerProxy = async () => {
      const session = workerProxy.openSession(`bench-${Math.random().toString(36).slice(2)}`, { maxBytes: 1e10 });
      try {
        const cpu = process.cpuUsage();
        const { ms } = await bare({ ...process.env, ...session.env });
        const used = process.cpuUsage(cpu);
        return { ms, cpu: (used.user + used.system) / 1000 };
      } finally {
        workerProxy.closeSession(session);
      }
    };
    const mergeJob = async (n) => {
      const sent = performance.now();
      const id = await api.submit({ video_url: video.url, audio_url: audio.url, filename: `bench-${n}` });
      const job = await api.waitJob(id);
      return { id, client: performance.now() - sent, ...timings(job), size: job.artifact.size };
    };
    await bare();
    await mergeJob('warm');
    await prefetchThenFfmpeg(egress, [video.url, audio.url], scratch, ffmpegPair);
    workerMetrics.before = await (await fetch(`${worker.url}/metrics`)).text();
    await probeThenFfmpeg(miniProxy.env);
    await viaWorkerProxy();
    for (let i = 0; i < ROUNDS; i++) {
      const b = await cpuOf(process.pid, () => bare());
      merge.bare.push(b.value.ms);
      merge.bareCpu.push(b.children);
      const j = await cpuOf(worker.child.pid, () => mergeJob(i));
      merge.jobs.push(j.value);
      merge.jobCpu.push({ worker: j.self, children: j.children });
      const p = await cpuOf(process.pid, () => prefetchThenFfmpeg(egress, [video.url, audio.url], scratch, ffmpegPair));
      merge.prefetch.push({ ...p.value, cpu: p.self + p.children });
      merge.probe.push((await probe()).ms);
      merge.start.push((await run('ffmpeg', ['-version'])).ms);
      merge.probeThenFfmpeg.push(await probeThenFfmpeg());
      merge.viaProxy.push(await probeThenFfmpeg(miniProxy.env));
      merge.viaTcp.push((await bare(tcpForward.env)).ms);
      const proxied = await viaWorkerProxy();
      merge.viaWorkerProxy.push(proxied.ms);
      merge.proxyCpu.push(proxied.cpu);
    }
    workerMetrics.after = await (await fetch(`${worker.url}/metrics`)).text();
    const bestJob = merge.jobs.reduce((a, b) => (b.total < a.total ? b : a));
    artifactInfo = {
      ...(await probeMedia(`${base}/api/v1/jobs/${bestJob.id}/artifact`)),
      size: bestJob.size,
      bareSize: fs.statSync(bareOut).size,
    };
    fs.rmSync(bareOut, { force: true });

    // 2. Worker RSS: a fresh worker taking RSS_JOBS jobs at once, sampled idle (after one warm-up job)
    // and while they run.
    await stack.stopWorkers();
    const big = await stack.startWorker({ WORKER_CONCURRENCY: String(RSS_JOBS) });
    await mergeJob('rss-warm');
    await sleep(500);
    const idle = sampleRss(big.child.pid);
    await sleep(1_000);
    rss.idle = idle.stop().max;
    const sampler = sampleRss(big.child.pid);
    const tRss = performance.now();
    const running = await Promise.all(
      Array.from({ length: RSS_JOBS }, async (_, i) => {
        const id = await api.submit({ video_url: video.url, audio_url: audio.url, filename: `rss-${i}` });
        return api.waitJob(id);
      }),
    );
    rss.wall = performance.now() - tRss;
    rss.running = sampler.stop();
    rss.overlap =
      Math.min(...running.map((j) => Date.parse(j.finished_at))) -
      Math.max(...running.map((j) => Date.parse(j.started_at)));
  } catch (err) {
    failed = true;
    dumpLogs(logs);
    throw err;
  } finally {
    await miniProxy?.close();
    await tcpForward?.close();
    await workerProxy?.close();
    await stack?.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
    if (failed) console.error('bench/jobs: failed; every process it started has been stopped.');
  }
  const loadEnd = os.loadavg();
  const elapsed = (Date.now() - t0) / 1000;

  // Where a job's time goes, from the worker's own histogram (processor start → artifact stored).
  const jobSeconds =
    metric(workerMetrics.after, 'reelay_job_duration_seconds_sum') -
    metric(workerMetrics.before, 'reelay_job_duration_seconds_sum');
  const proxyBytes =
    metric(workerMetrics.after, 'reelay_proxy_bytes_total') - metric(workerMetrics.before, 'reelay_proxy_bytes_total');

  console.log(
    `\n## jobs (one worker, WORKER_CONCURRENCY=${concurrency}, origin: ${stack.origin.kind}; ${os.availableParallelism()} cores; load average 1/5/15 min at start ${formatLoad(loadStart)}, at end ${formatLoad(loadEnd)})\n`,
  );
  if (stack.generatedSeconds)
    console.log(`(inputs generated in ${fmt(stack.generatedSeconds, 1)} s and cached in ${stack.filesDir})\n`);
  const MB = 1e6;
  const bytes = sizes['video.mp4'] + sizes['audio.m4a'];
  const bestBare = best(merge.bare);
  const bestTotal = best(merge.jobs.map((j) => j.total));
  console.log(
    `### merge: ${MEDIA_SECONDS} s 720p H.264 video-only (${fmt(sizes['video.mp4'] / MB, 1)} MB) + AAC audio-only (${fmt(sizes['audio.m4a'] / MB, 1)} MB), stream copy, +faststart (best of ${ROUNDS}, alternated)\n`,
  );
  console.log('| path | best ms | median ms | runs ms | MB/s in (best) |');
  console.log('|---|---|---|---|---|');
  const row = (name, xs, rate = true) =>
    console.log(
      `| ${name} | ${fmt(best(xs), 0)} | ${fmt(median(xs), 0)} | ${xs.map((x) => fmt(x, 0)).join(', ')} | ${rate ? fmt(bytes / MB / (best(xs) / 1000), 0) : ''} |`,
    );
  const jobTotals = merge.jobs.map((j) => j.total);
  const jobProcessing = merge.jobs.map((j) => j.processing);
  const jobWaits = merge.jobs.map((j) => j.wait);
  row('**bare ffmpeg**, same URLs from the origin (baseline)', merge.bare);
  row('**job created → finished**', jobTotals);
  row('job started → finished (worker)', jobProcessing);
  row('job created → started (queue wait)', jobWaits, false);
  row(
    `client: POST → a poll sees completed (${POLL_MS} ms polls)`,
    merge.jobs.map((j) => j.client),
    false,
  );
  row(
    '*option:* prefetch both inputs through egress into files (in parallel), then ffmpeg on the files',
    merge.prefetch.map((p) => p.total),
  );
  row(
    '*option:* … of which the parallel download',
    merge.prefetch.map((p) => p.download),
  );
  row(
    '*option:* … of which ffmpeg on the local files',
    merge.prefetch.map((p) => p.ffmpeg),
  );
  row('*where the time goes:* starting ffmpeg (`ffmpeg -version`)', merge.start, false);
  row('*where the time goes:* bare ffprobe of the video URL', merge.probe, false);
  row(
    '*where the time goes:* bare ffprobe, then bare ffmpeg (two processes, as the worker once did)',
    merge.probeThenFfmpeg,
  );
  row('*where the time goes:* the same through a minimal Node forward proxy', merge.viaProxy);
  row(
    '*where the time goes:* bare ffmpeg through a raw TCP forwarder (the floor of any process in the byte path)',
    merge.viaTcp,
  );
  row(
    "*where the time goes:* bare ffmpeg through the worker's egress proxy (its code, in the bench process)",
    merge.viaWorkerProxy,
  );
  row('*where the time goes:* … CPU time of that proxy (ms, not wall time)', merge.proxyCpu, false);
  const ratio = bestTotal / bestBare;
  const prefetchRatio = best(merge.prefetch.map((p) => p.total)) / bestBare;
  console.log(
    `\nratio job/bare ffmpeg: ${fmt(ratio, 2)}× (target ≤ ${TARGET_RATIO}×: ${ratio <= TARGET_RATIO ? 'met' : 'NOT met'}); started→finished/bare: ${fmt(best(jobProcessing) / bestBare, 2)}×; prefetch option/bare: ${fmt(prefetchRatio, 2)}× (${prefetchRatio < ratio ? 'faster' : 'slower'} than the job as it runs)`,
  );
  const floor = best(merge.viaTcp) / bestBare;
  console.log(
    `floor: bare ffmpeg through a raw TCP forwarder ${fmt(floor, 2)}× bare ffmpeg; the worker's egress proxy ${fmt(best(merge.viaWorkerProxy) / bestBare, 2)}×. Every byte ffmpeg reads must pass the egress guard, so a job cannot be faster than the floor; ${floor >= TARGET_RATIO ? `the ${TARGET_RATIO}× target is below it on this origin` : `the ${TARGET_RATIO}× target leaves ${fmt((TARGET_RATIO - floor) * bestBare, 0)} ms above it`}`,
  );
  // Differences of best times: the least each step costs, as far as the shared machine lets us see.
  const b = {
    bare: bestBare,
    start: best(merge.start),
    probeThen: best(merge.probeThenFfmpeg),
    proxy: best(merge.viaProxy),
    workerProxy: best(merge.viaWorkerProxy),
    wait: best(jobWaits),
    processing: best(jobProcessing),
  };
  console.log(
    `job's time (differences of best times): queue wait ${fmt(b.wait, 0)} ms; ffmpeg's own run ${fmt(b.bare, 0)} ms (of which process start ≈ ${fmt(b.start, 0)} ms); the rest (the worker's proxy, execa, BullMQ, artifact store, noise) ≈ ${fmt(b.processing - b.bare, 0)} ms. For scale: the worker's proxy code run in this process adds ≈ ${fmt(b.workerProxy - b.bare, 0)} ms to bare ffmpeg (${fmt(median(merge.proxyCpu), 0)} ms of CPU per run), a minimal Node proxy ≈ ${fmt(b.proxy - b.probeThen, 0)} ms, an ffprobe run first ≈ ${fmt(b.probeThen - b.bare, 0)} ms`,
  );
  const cpu = {
    bare: median(merge.bareCpu),
    worker: median(merge.jobCpu.map((c) => c.worker)),
    children: median(merge.jobCpu.map((c) => c.children)),
  };
  const cpuRatio = (cpu.worker + cpu.children) / cpu.bare;
  const prefetchCpu = median(merge.prefetch.map((p) => p.cpu));
  console.log(
    `CPU per merge (medians, 10 ms ticks; what load on the machine hardly changes): bare ffmpeg ${fmt(cpu.bare, 0)} ms; job ${fmt(cpu.worker + cpu.children, 0)} ms = worker process ${fmt(cpu.worker, 0)} ms (its egress proxy, BullMQ, execa) + its ffmpeg/ffprobe ${fmt(cpu.children, 0)} ms: ${fmt(cpuRatio, 2)}× bare; prefetch option (download in this process + ffmpeg on the files) ${fmt(prefetchCpu, 0)} ms: ${fmt(prefetchCpu / cpu.bare, 2)}× bare`,
  );
  console.log(
    `worker over the ${ROUNDS} measured jobs: processor time ${fmt((jobSeconds * 1000) / ROUNDS, 0)} ms per job, egress proxy passed ${fmt(proxyBytes / ROUNDS / MB, 1)} MB per job (inputs ${fmt(bytes / MB, 1)} MB)`,
  );
  const a = artifactInfo;
  const ok = Math.abs(a.duration - MEDIA_SECONDS) < 0.5 && a.video === 1 && a.audio === 1;
  console.log(
    `artifact (ffprobe): ${fmt(a.duration, 2)} s, ${a.video} video + ${a.audio} audio stream (${a.codecs}), ${fmt(a.size / MB, 1)} MB (bare: ${fmt(a.bareSize / MB, 1)} MB): ${ok ? 'ok' : 'NOT ok'}`,
  );

  const rssRatio = rss.running.max / rss.idle;
  console.log(
    `\n### worker RSS with ${RSS_JOBS} merge jobs at once (WORKER_CONCURRENCY=${RSS_JOBS}; ${fmt((RSS_JOBS * bytes) / MB, 0)} MB of media through its proxy)\n`,
  );
  console.log('| worker process (Node, without its ffmpeg children) | RSS MB |');
  console.log('|---|---|');
  console.log(`| idle, after one warm-up job (baseline) | ${fmt(rss.idle, 0)} |`);
  console.log(
    `| peak while ${RSS_JOBS} jobs run (${fmt(rss.wall, 0)} ms for all; all ${RSS_JOBS} ran together for ${fmt(rss.overlap, 0)} ms) | ${fmt(rss.running.max, 0)} |`,
  );
  console.log(`| after they finished | ${fmt(rss.running.end, 0)} |`);
  console.log(
    `\nratio peak/idle: ${fmt(rssRatio, 2)}× (target ≤ ${TARGET_RSS_RATIO}×, i.e. media streamed, not buffered: ${rssRatio <= TARGET_RSS_RATIO ? 'met' : 'NOT met'})`,
  );
  if (api.spuriousExpired.length > 0) {
    console.log(
      `\nnote: ${api.spuriousExpired.length} poll(s) saw a completing job as "expired" without finished_at (GET /api/v1/jobs/{id} reads the job, then its state: a race in the gateway); polled again.`,
    );
  }
  console.log(`(jobs benchmark took ${fmt(elapsed, 0)} s)`);
  return { ratio, cpuRatio, artifactOk: ok, rssRatio };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchJobs();
