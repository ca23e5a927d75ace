// Shared benchmark plumbing: processes, wrk runs and their parsing, RSS sampling.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function requireTool(name, hint) {
  if (spawnSync(name, ['--version']).error) {
    console.error(`bench: ${name} is needed (${hint}).`);
    process.exit(1);
  }
}

/** Spawns a node script and resolves with the first stdout line (the port) and the child. */
export function spawnNode(args, env = {}, { firstLine = true } = {}) {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (!firstLine) {
    child.stdout.resume();
    return Promise.resolve({ child });
  }
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) {
        child.stdout.removeAllListeners('data');
        child.stdout.resume();
        resolve({ child, line: buf.slice(0, nl).trim() });
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

export async function waitForHttp(url, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}

/** Runs wrk and returns requests/s, latency percentiles (ms) and error counts. */
export function wrk(options) {
  const { args, cleanup } = wrkArgs(options);
  const out = spawnSync('wrk', args, { encoding: 'utf8', env: { ...process.env, ...(options.scriptEnv ?? {}) } });
  cleanup();
  if (out.status !== 0) throw new Error(`wrk failed: ${out.stderr || out.stdout}`);
  return parseWrk(out.stdout);
}

/** wrk without blocking this process's event loop (so timers such as sampleRss keep running). */
export function wrkAsync(options) {
  const { args, cleanup } = wrkArgs(options);
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, {
      env: { ...process.env, ...(options.scriptEnv ?? {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    // 'close', not 'exit': at exit, stdout may still hold the end of wrk's report.
    child.once('close', (code) => {
      cleanup();
      if (code !== 0) reject(new Error(`wrk failed: ${err || out}`));
      else resolve(parseWrk(out));
    });
  });
}

function wrkArgs({ url, connections = 64, threads = 2, seconds = 10, script }) {
  const args = ['-t', String(threads), '-c', String(connections), '-d', `${seconds}s`, '--latency'];
  let scriptFile;
  if (script) {
    scriptFile = path.join(os.tmpdir(), `reelay-bench-${process.pid}-${Math.random().toString(36).slice(2)}.lua`);
    fs.writeFileSync(scriptFile, script);
    args.push('-s', scriptFile);
  }
  args.push(url);
  return { args, cleanup: () => scriptFile && fs.rmSync(scriptFile, { force: true }) };
}

function parseWrk(text) {
  const num = (re) => {
    const m = re.exec(text);
    return m ? Number(m[1]) : NaN;
  };
  const ms = (label) => {
    const m = new RegExp(`^\\s+${label}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(text);
    if (!m) return NaN;
    const v = Number(m[1]);
    return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
  };
  return {
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    p50: ms('50'),
    p90: ms('90'),
    p99: ms('99'),
    requests: num(/(\d+) requests in/),
    non2xx: num(/Non-2xx or 3xx responses: (\d+)/) || 0,
    socketErrors: /Socket errors: (.*)/.exec(text)?.[1] ?? 'none',
    raw: text,
  };
}

/** Samples a process's resident set size (MB) every 100 ms until stopped; returns max and last. */
export function sampleRss(pid) {
  const read = () => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : NaN;
    } catch {
      return NaN;
    }
  };
  const start = read();
  let max = start;
  const timer = setInterval(() => {
    const v = read();
    if (v > max) max = v;
  }, 100);
  return {
    start,
    stop: () => {
      clearInterval(timer);
      return { start, max, end: read() };
    },
  };
}

/** A load-average triple (os.loadavg()) as benches print it: "1.48 / 2.23 / 2.87". */
export const formatLoad = (load) => load.map((v) => v.toFixed(2)).join(' / ');

export function fmt(n, digits = 1) {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

/**
 * Starts nginx (if installed) serving bench/origin.mjs's documents for any path under /og/ and
 * /hls/, on a free port. Returns undefined when nginx is not installed.
 */
export async function startNginxOrigin({ files } = {}) {
  if (spawnSync('nginx', ['-v']).error) return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-bench-nginx-'));
  // nginx's workers drop to an unprivileged user when started as root: they must be able to read.
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'www'), { mode: 0o755 });
  const node = await spawnNode(['bench/origin.mjs', '0']);
  const nodePort = node.line;
  for (const [file, p] of [
    ['og.html', '/og/doc'],
    ['master.m3u8', '/hls/doc'],
  ]) {
    const res = await fetch(`http://127.0.0.1:${nodePort}${p}`);
    fs.writeFileSync(path.join(dir, 'www', file), await res.text());
  }
  node.child.kill('SIGTERM');
  const { freePort } = await import('@reelay/testkit');
  const port = await freePort();
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  client_body_temp_path ${dir}/tmp;
  proxy_temp_path ${dir}/tmp;
  fastcgi_temp_path ${dir}/tmp;
  uwsgi_temp_path ${dir}/tmp;
  scgi_temp_path ${dir}/tmp;
  server {
    listen 127.0.0.1:${port};
    root ${dir}/www;
    location /og/ { default_type "text/html; charset=utf-8"; try_files /og.html =404; }
    location /hls/ { default_type application/vnd.apple.mpegurl; try_files /master.m3u8 =404; }${
      files
        ? `
    location /files/ { alias ${files}/; default_type application/octet-stream; sendfile on; }`
        : ''
    }
  }
}
`,
  );
  const child = spawn('nginx', ['-c', path.join(dir, 'nginx.conf'), '-p', dir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  child.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  try {
    await waitForHttp(`http://127.0.0.1:${port}/og/1`);
  } catch (err) {
    child.kill('SIGTERM');
    throw err;
  }
  return { child, port, kind: 'nginx' };
}

/** An origin for the benchmark documents (and files, if a directory is given): nginx, else Node. */
export async function startBenchOrigin({ files } = {}) {
  const nginx = await startNginxOrigin({ files });
  if (nginx) return nginx;
  const { child, line } = await spawnNode(files ? ['bench/origin.mjs', '0', files] : ['bench/origin.mjs', '0']);
  return { child, port: Number(line), kind: 'node' };
}

// One load generator is one client address: the benchmarks measure throughput, not surface B's
// limits per client (a test of its own covers those).
const UNLIMITED_CLIENT = { RATE_LIMIT_V1_PER_MIN: '0', MAX_ACTIVE_JOBS_PER_CLIENT: '0' };

/** Starts the built gateway on a free port with the given environment; resolves once it is ready. */
export async function startBenchGateway(env) {
  const { freePort } = await import('@reelay/testkit');
  const port = await freePort();
  const { child } = await spawnNode(
    ['apps/gateway/dist/main.js'],
    {
      PORT: String(port),
      EGRESS_ALLOWLIST: '127.0.0.1',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      ...UNLIMITED_CLIENT,
      ...env,
    },
    { firstLine: false },
  );
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/healthz`); // it listens once Redis answers; /readyz would wait for a worker
  return { child, port, base };
}

/**
 * A wrk script that POSTs `{"url": …}` with a new document URL every request (each wrk thread numbers
 * its own requests; thread ids keep URLs unique across threads, and the run's start second across
 * runs: reusing one script in later rounds would otherwise ask URLs the extract cache already holds).
 */
export function newUrlScript({ originPort, docPath, route, headers = {} }) {
  const extra = Object.entries(headers)
    .map(([k, v]) => `["${k}"] = "${v}", `)
    .join('');
  return `
local n = 0
local tid = 0
local run = 0
local counter = 1
function setup(thread) thread:set("tid", counter); counter = counter + 1 end
function init(args) tid = tonumber(wrk.thread:get("tid")) or math.random(1000000); run = os.time() end
request = function()
  n = n + 1
  local body = '{"url":"http://127.0.0.1:${originPort}/${docPath}/' .. run .. '-' .. tid .. '-' .. n .. '"}'
  return wrk.format("POST", "${route}", { ${extra}["Content-Type"] = "application/json" }, body)
end`;
}

/** Starts bench/fetch-baseline.mjs with one HTTP client (got, undici or http); resolves with its base URL. */
export async function startFetchBaseline(client) {
  const { child, line } = await spawnNode(['bench/fetch-baseline.mjs', client]);
  return { child, base: `http://127.0.0.1:${line}` };
}

/** Reads a URL with a fresh connection each time, so a server's keep-alive timeout cannot race it. */
export async function fetchFresh(url) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch(url, { headers: { connection: 'close' } });
    } catch (err) {
      if (attempt >= 2) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The realistic origin's defaults (issue 19): a CDN 40 ms away that gives one connection 2 MB/s. */
export const SLOW_ORIGIN = {
  rttMs: Number(process.env.BENCH_ORIGIN_RTT_MS ?? 40),
  bytesPerSecond: Number(process.env.BENCH_ORIGIN_RATE ?? 2_000_000),
};

/** Starts bench/slow-origin.mjs over `dir`; `params` is the line printed beside every figure. */
export async function startSlowOrigin(
  dir,
  { rttMs = SLOW_ORIGIN.rttMs, bytesPerSecond = SLOW_ORIGIN.bytesPerSecond } = {},
) {
  const { child, line } = await spawnNode(['bench/slow-origin.mjs', dir, String(rttMs), String(bytesPerSecond)]);
  const params = `origin: ${rttMs} ms before each response, ${fmt(bytesPerSecond / 1e6, 1)} MB/s per connection, Range, keep-alive, no connection limit`;
  return { child, port: Number(line), rttMs, bytesPerSecond, params };
}
