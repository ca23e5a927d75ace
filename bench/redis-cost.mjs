// Benchmark (issue 27, part 2): what each operation costs Redis. The built gateway and worker run
// against a private redis-server, each through its own counting relay (bench/resp.mjs), so every
// figure is split by process: commands as the client sent them (an EVALSHA is one), client writes
// (one per round trip; a pipeline or MULTI block is one), connections opened, bytes each way. Beside
// them, from redis-server itself: `INFO commandstats` (which also counts the commands BullMQ's Lua
// scripts run) and the main thread's CPU time (`INFO cpu`), the basis of the single-primary ceiling.
// Operations: an extract (new URL, cached URL), surface A (/api with a key, /api/playground), a job
// of each kind (convert, merge, HLS remux, clip), an event-stream client (open, idle, following a
// job), and each process idle per minute. Then the keys a job leaves and their MEMORY USAGE, and
// redis-benchmark on this machine for the commands that dominate.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Api, cpuMs, dumpLogs, makeInputs, makeOnce, sleep, startApp, startFileOrigin, stopChild } from './jobs.mjs';
import { fmt, formatLoad, newUrlScript, requireTool, root, waitForHttp, wrkAsync } from './lib.mjs';
import { commandCalls, connectClient, emptyTally, parseInfo, startRelay } from './resp.mjs';
import { createKey } from './surface-a.mjs';

const N = Number(process.env.BENCH_REDIS_OPS ?? 20);
const JOBS = Number(process.env.BENCH_REDIS_JOBS ?? 3);
const IDLE_S = Number(process.env.BENCH_REDIS_IDLE_SECONDS ?? 30);
const STREAMS = Number(process.env.BENCH_REDIS_STREAMS ?? 10);
const BENCH_REQUESTS = Number(process.env.BENCH_REDIS_BENCHMARK_REQUESTS ?? 200_000);
const LOAD_S = Number(process.env.BENCH_REDIS_LOAD_SECONDS ?? 8);
const BURST = Number(process.env.BENCH_REDIS_BURST ?? 24);
// Every per-client limit on, as a deployment runs (each costs its Redis round trip), but so high
// that the bench's one client address is never refused.
const LIMITS_ON = {
  RATE_LIMIT_V1_PER_MIN: '1000000000',
  MAX_ACTIVE_JOBS_PER_CLIENT: '100000',
  RATE_LIMIT_PUBLIC_PER_MIN: '1000000000',
  RATE_LIMIT_KEY_PER_MIN: '1000000000',
};

const clone = (t) => ({ ...t, byName: { ...t.byName } });
function minus(a, b) {
  const out = emptyTally();
  for (const k of ['connections', 'writes', 'commands', 'bytesIn', 'bytesOut']) out[k] = a[k] - b[k];
  for (const [k, v] of Object.entries(a.byName)) if (v - (b.byName[k] ?? 0)) out.byName[k] = v - (b.byName[k] ?? 0);
  return out;
}

/** The HLS input: 5 × 2 s segments, flat beside the other files (the fallback origin serves no folders). */
async function makeHls(dir) {
  const playlist = path.join(dir, 'rc-hls.m3u8');
  if (!fs.existsSync(playlist)) {
    await makeOnce(playlist, [
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=320x180:rate=25',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:sample_rate=48000',
      '-t',
      '10',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-g',
      '50',
      '-c:a',
      'aac',
      '-f',
      'hls',
      '-hls_time',
      '2',
      '-hls_playlist_type',
      'vod',
      '-hls_segment_filename',
      path.join(dir, 'rc-hls-%03d.ts'),
    ]);
  }
  for (const name of fs.readdirSync(dir)) if (name.startsWith('rc-hls')) fs.chmodSync(path.join(dir, name), 0o644);
}

/** Opens an event stream; resolves once its first event arrived, with `ended` and `close`. */
function follow(base, id) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/api/v1/jobs/${id}/events`, { agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`events answered ${res.statusCode}`));
      res.setEncoding('utf8');
      const s = { events: 0, close: () => req.destroy() };
      let first = true;
      s.ended = new Promise((done) => {
        res.on('data', (chunk) => {
          s.events += (chunk.match(/^event: job$/gm) ?? []).length;
          if (first && s.events) {
            first = false;
            resolve(s);
          }
        });
        res.on('close', done);
      });
    });
    req.on('error', reject);
  });
}

export async function benchRedisCost() {
  for (const tool of ['ffmpeg', 'redis-server', 'redis-benchmark', 'wrk'])
    requireTool(tool, 'apt-get install ffmpeg redis-server redis-tools wrk');
  const { startRedis, freePort } = await import('@reelay/testkit');
  const loadStart = os.loadavg();
  const t0 = Date.now();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-bench-redis-'));
  const logs = { gateway: path.join(scratch, 'gateway.log'), worker: path.join(scratch, 'worker.log') };
  const filesDir = path.join(os.tmpdir(), 'reelay-bench-files');
  fs.mkdirSync(filesDir, { recursive: true });
  fs.chmodSync(filesDir, 0o755);
  await makeInputs(filesDir);
  await makeHls(filesDir);
  const rows = [];
  const keyRows = [];
  let redis, relays, origin, gateway, worker, direct, benchRps, loadAtCeiling;
  try {
    redis = await startRedis();
    relays = { gateway: await startRelay(redis.port, root), worker: await startRelay(redis.port, root) };
    direct = await connectClient(redis.port);
    origin = await startFileOrigin(filesDir);
    const common = {
      DATA_DIR: path.join(scratch, 'data'),
      EGRESS_ALLOWLIST: '127.0.0.1',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      ...LIMITS_ON,
    };
    const port = await freePort();
    gateway = startApp(
      'apps/gateway/dist/main.js',
      { ...common, REDIS_URL: relays.gateway.url, PORT: String(port) },
      logs.gateway,
    );
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/healthz`);
    const api = new Api(base);
    const file = (name, query = '') => `http://127.0.0.1:${origin.port}/files/${name}${query}`;

    /** Everything counted so far: both relays, and redis-server's own figures. */
    const snapshot = async () => {
      const info = parseInfo(await direct.call('INFO', 'everything'));
      const procCpu = (child) => {
        if (!child || child.exitCode !== null) return 0;
        const c = cpuMs(child.pid);
        return c.self + c.children;
      };
      return {
        gatewayCpu: procCpu(gateway),
        workerCpu: procCpu(worker),
        gateway: clone(relays.gateway.tally),
        worker: clone(relays.worker.tally),
        calls: commandCalls(info),
        cpu: info.used_cpu_user_main_thread + info.used_cpu_sys_main_thread,
        sent: { ...direct.sent },
        at: performance.now(),
      };
    };
    /** Runs `fn` and records what it cost, divided by `per` (operations, or minutes for idle rows). */
    const measure = async (name, per, fn, unit = 'op') => {
      const a = await snapshot();
      const extra = await fn();
      const b = await snapshot();
      const server = {};
      for (const [k, v] of Object.entries(b.calls)) {
        // The bench's own INFO and waits are not the operation's.
        const own = (b.sent[k] ?? 0) - (a.sent[k] ?? 0);
        const d = v - (a.calls[k] ?? 0) - own;
        if (d) server[k] = d;
      }
      const seconds = (b.at - a.at) / 1000;
      const row = {
        name,
        seconds,
        per: typeof per === 'function' ? per(b.at - a.at) : per,
        unit,
        gateway: minus(b.gateway, a.gateway),
        worker: minus(b.worker, a.worker),
        server,
        cpuSeconds: b.cpu - a.cpu,
        appCpuMs: { gateway: b.gatewayCpu - a.gatewayCpu, worker: Math.max(0, b.workerCpu - a.workerCpu) },
        extra,
      };
      rows.push(row);
      return row;
    };
    const perMinute = (ms) => ms / 60_000;
    /** Waits for jobs to finish by reading their hashes directly (not through the gateway: its reads would count). */
    const finished = async (ids) => {
      const deadline = Date.now() + 120_000;
      for (const id of ids) {
        for (;;) {
          const [fin, failed] = await direct.call('HMGET', `bull:downloads:${id}`, 'finishedOn', 'failedReason');
          if (fin && failed) throw new Error(`job ${id} failed: ${failed}`);
          if (fin) break;
          if (Date.now() > deadline) throw new Error(`job ${id} did not finish`);
          await sleep(20);
        }
      }
    };

    // Warm-up: JIT, the extract path, the scripts loaded.
    await api.extract(file('pair.html', '?warm'));
    await measure('gateway idle (no worker, no streams)', perMinute, () => sleep(IDLE_S * 1000), 'minute');

    let n = 0;
    await measure('extract, new URL (POST /api/v1/extract)', N, async () => {
      for (let i = 0; i < N; i++) await api.extract(file('pair.html', `?u=${n++}`));
    });
    const cachedUrl = file('pair.html', '?cached');
    await api.extract(cachedUrl);
    await measure('extract, cached URL', N, async () => {
      for (let i = 0; i < N; i++) await api.extract(cachedUrl);
    });
    const { secret } = await createKey(base);
    const post = async (route, headers) => {
      const res = await fetch(`${base}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ url: file('pair.html', `?u=${n++}`) }),
      });
      if (res.status !== 200) throw new Error(`${route} answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };
    await measure('surface A: POST /api with a key (new URL)', N, async () => {
      for (let i = 0; i < N; i++) await post('/api', { 'x-api-key': secret });
    });
    await measure('surface A: POST /api/playground (new URL)', N, async () => {
      for (let i = 0; i < N; i++) await post('/api/playground', {});
    });

    // Under load (wrk, 32 connections): Redis' CPU per extract when many arrive at once, which is
    // what bounds one primary (one round trip at a time above measures the count, not the batching).
    const loaded = async (name, script) => {
      await measure(
        name,
        (ms) => ms,
        async () => wrkAsync({ url: `${base}/api/v1/extract`, connections: 32, threads: 2, seconds: LOAD_S, script }),
      );
      const row = rows.at(-1);
      row.per = row.extra.requests;
    };
    await loaded(
      'extract under load, new URLs (wrk, 32 connections)',
      newUrlScript({ originPort: origin.port, docPath: 'files/pair.html?w=', route: '/api/v1/extract' }),
    );
    await loaded(
      'extract under load, one cached URL (wrk, 32 connections)',
      `wrk.method = "POST"\nwrk.body = '{"url":"${cachedUrl}"}'\nwrk.headers["Content-Type"] = "application/json"\n`,
    );

    const pair = (await api.extract(file('pair.html'))).media.flatMap((m) => m.sources);
    const tone = (await api.extract(file('tone.mp3'))).media[0].sources[0];
    const hls = (await api.extract(file('rc-hls.m3u8'))).media
      .flatMap((m) => m.sources)
      .find((s) => s.stream_profile === 'hls');
    if (!hls) throw new Error('the HLS playlist gave no hls source');
    const kinds = {
      'convert (2 s MP3 → WAV)': (i) => ({ url: tone.url, format: 'wav', filename: `rc-conv-${i}` }),
      'merge (60 s 720p video + audio)': (i) => ({
        video_url: pair.find((s) => s.stream_profile === 'video_only').url,
        audio_url: pair.find((s) => s.stream_profile === 'audio_only').url,
        filename: `rc-merge-${i}`,
      }),
      'HLS remux (5 × 2 s segments)': (i) => ({ url: hls.url, filename: `rc-hls-${i}` }),
      'clip, fast (10 s of the HLS)': (i) => ({ url: hls.url, clip: { start: 2, end: 6 }, filename: `rc-clip-${i}` }),
    };

    const metricsPort = await freePort();
    await measure('worker start-up', 1, async () => {
      worker = startApp(
        'apps/worker/dist/main.js',
        { ...common, REDIS_URL: relays.worker.url, METRICS_PORT: String(metricsPort) },
        logs.worker,
      );
      await waitForHttp(`http://127.0.0.1:${metricsPort}/healthz`);
      await sleep(1000);
    });
    await measure('gateway + 1 worker idle', perMinute, () => sleep(IDLE_S * 1000), 'minute');

    // One of each first (scripts loaded, the job path warm), not counted.
    const warm = await Promise.all(Object.values(kinds).map((body, i) => api.submit(body(`w${i}`))));
    await finished(warm);
    for (const [kind, body] of Object.entries(kinds)) {
      await measure(`job: ${kind}`, JOBS, async () => {
        for (let i = 0; i < JOBS; i++) await finished([await api.submit(body(`${n++}`))]);
      });
    }
    // A burst: Redis' CPU per job when jobs overlap (the rows above take them one at a time).
    await measure(`jobs under load: a burst of ${BURST} convert jobs`, BURST, async () => {
      const ids = await Promise.all(
        Array.from({ length: BURST }, () => api.submit(kinds['convert (2 s MP3 → WAV)'](`${n++}`))),
      );
      await finished(ids);
    });
    const done = await api.submit(kinds['convert (2 s MP3 → WAV)']('polled'));
    await finished([done]);
    await measure('a job status poll (GET /api/v1/jobs/{id}, completed job)', N, async () => {
      for (let i = 0; i < N; i++) await api.job(done);
    });
    const jobKeysBefore = await direct.call('DBSIZE');

    // Event-stream clients following a convert job: the job with STREAMS streams, less the job alone.
    await measure(
      `an event stream following a convert job (${STREAMS} streams on each of ${JOBS} jobs; the job's own cost taken off)`,
      STREAMS * JOBS,
      async () => {
        let events = 0;
        for (let i = 0; i < JOBS; i++) {
          const id = await api.submit(kinds['convert (2 s MP3 → WAV)'](`${n++}`));
          const streams = await Promise.all(Array.from({ length: STREAMS }, () => follow(base, id)));
          await Promise.all(streams.map((s) => s.ended));
          events += streams.reduce((sum, s) => sum + s.events, 0);
        }
        return { events: events / STREAMS / JOBS, jobs: JOBS };
      },
    );

    // Streams on a job that waits (no worker): opening them, then holding them idle.
    await stopChild(worker);
    worker = undefined;
    const waiting = await api.submit(kinds['convert (2 s MP3 → WAV)']('waiting'));
    let held = [];
    await measure(`open an event stream (${STREAMS} on a waiting job)`, STREAMS, async () => {
      held = await Promise.all(Array.from({ length: STREAMS }, () => follow(base, waiting)));
    });
    await measure(`gateway idle with ${STREAMS} streams open`, perMinute, () => sleep(IDLE_S * 1000), 'minute');
    for (const s of held) s.close();

    // The keys the jobs left, by pattern, with MEMORY USAGE.
    const byPattern = new Map();
    let cursor = '0';
    do {
      const [next, keys] = await direct.call('SCAN', cursor, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const bytes = await direct.call('MEMORY', 'USAGE', key, 'SAMPLES', 0);
        const type = await direct.call('TYPE', key);
        const len =
          type === 'stream'
            ? await direct.call('XLEN', key)
            : type === 'zset'
              ? await direct.call('ZCARD', key)
              : type === 'set'
                ? await direct.call('SCARD', key)
                : type === 'list'
                  ? await direct.call('LLEN', key)
                  : type === 'hash'
                    ? await direct.call('HLEN', key)
                    : 1;
        // Ids and hashes become <id>, numbers <n>, a job's own keys bull:<queue>:<id>: the shapes remain.
        const pattern = key
          .replace(
            /(bull:\w+:)(?!(wait|active|completed|failed|delayed|prioritized|paused|meta|events|id|marker|stalled|stalled-check|pc|limiter|de)(:|$))[^:]+/,
            '$1<id>',
          )
          .split(':')
          .map((part) => (/^[\w-]{16,}$/.test(part) ? '<id>' : /^\d+$/.test(part) ? '<n>' : part))
          .join(':');
        const p = byPattern.get(pattern) ?? { keys: 0, bytes: 0, items: 0, type };
        p.keys++;
        p.bytes += bytes ?? 0;
        p.items += len;
        byPattern.set(pattern, p);
      }
    } while (cursor !== '0');
    keyRows.push(...[...byPattern.entries()].sort((a, b) => b[1].bytes - a[1].bytes));
    const jobsRun = 4 + 4 * JOBS + JOBS + BURST + 2; // warm-up, the kinds, the streamed, the burst, the waiting and the polled
    keyRows.jobsRun = jobsRun;
    keyRows.dbsize = await direct.call('DBSIZE');
    keyRows.before = jobKeysBefore;
    keyRows.memory = parseInfo(await direct.call('INFO', 'memory')).used_memory;

    // The single-primary ceiling on this machine: redis-benchmark, 50 clients, no pipelining.
    loadAtCeiling = os.loadavg();
    const bench = spawnSync(
      'redis-benchmark',
      [
        '-p',
        String(redis.port),
        '-c',
        '50',
        '-n',
        String(BENCH_REQUESTS),
        '-q',
        '-t',
        'get,set,incr,hset,zadd,xadd,lpush',
      ],
      { encoding: 'utf8' },
    );
    benchRps = {};
    for (const m of bench.stdout.matchAll(/^(\w+)[^:]*: ([\d.]+) requests per second/gm)) benchRps[m[1]] = Number(m[2]);
    const script = spawnSync(
      'redis-benchmark',
      [
        '-p',
        String(redis.port),
        '-c',
        '50',
        '-n',
        String(BENCH_REQUESTS / 4),
        '-q',
        'EVAL',
        "redis.call('hset',KEYS[1],'a',ARGV[1]) redis.call('zadd',KEYS[2],1,ARGV[1]) redis.call('xadd',KEYS[3],'MAXLEN','~','1000','*','e',ARGV[1]) return 1",
        '3',
        'rc:h',
        'rc:z',
        'rc:x',
        'v',
      ],
      { encoding: 'utf8' },
    );
    benchRps['EVAL(hset+zadd+xadd)'] = Number(/([\d.]+) requests per second/.exec(script.stdout)?.[1]);
  } catch (err) {
    dumpLogs(logs);
    throw err;
  } finally {
    direct?.close();
    await stopChild(worker);
    await stopChild(gateway);
    await origin?.stop();
    for (const r of Object.values(relays ?? {})) await r.close();
    await redis?.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  report({ rows, keyRows, benchRps, loadStart, loadAtCeiling, t0 });
  return { rows, keyRows, benchRps };
}

const serverTotal = (row) => Object.values(row.server).reduce((a, b) => a + b, 0);

function report({ rows, keyRows, benchRps, loadStart, loadAtCeiling, t0 }) {
  const find = (prefix) => rows.find((r) => r.name.startsWith(prefix));
  const q = (v, per) => fmt(v / per, v / per < 10 ? 1 : 0);
  console.log(
    `\n## Redis cost per operation (gateway and one worker, each through a counting relay, every per-client limit on; ${os.availableParallelism()} cores; load average 1/5/15 min at start ${formatLoad(loadStart)}, at end ${formatLoad(os.loadavg())}; the machine is shared: CPU figures are noisy, command counts are not)\n`,
  );
  console.log(
    'Per operation (idle rows: per minute). "cmds" are what the process sent (an EVALSHA is one); "writes" its round trips (a pipeline or MULTI block is one); "server cmds" what redis-server ran, Lua scripts\' inner commands included; "Redis CPU" its main thread.\n',
  );
  console.log(
    '| operation | per | gateway cmds | gateway writes | worker cmds | worker writes | new conns | bytes to Redis | bytes from Redis | server cmds | Redis CPU µs | gateway CPU ms | worker CPU ms (with ffmpeg) | top commands (client side) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  const job = find('job: convert');
  // Redis' own timers (serverCron, 10 a second) and the bench's INFO cost CPU in every window: the
  // idle gateway's window gives their rate, taken off the other rows.
  const idle = rows[0];
  const baseRate = idle.cpuSeconds / idle.seconds;
  for (const r of rows) r.netCpu = r === idle ? r.cpuSeconds : Math.max(0, r.cpuSeconds - baseRate * r.seconds);
  for (const r of rows) {
    let { gateway: g, worker: w } = r;
    let cpu = r.netCpu;
    let server = serverTotal(r);
    // Streams following a job: less the job alone, so the row is the streams' own cost.
    if (r.name.includes('following') && job) {
      const scale = r.extra.jobs / job.per;
      g = minus(g, scaleTally(job.gateway, scale));
      w = minus(w, scaleTally(job.worker, scale));
      cpu -= job.netCpu * scale;
      server -= serverTotal(job) * scale;
    }
    const top = Object.entries({ ...sumNames(g.byName, w.byName) })
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([k, v]) => `${k} ${q(v, r.per)}`)
      .join(', ');
    console.log(
      `| ${r.name} | ${r.unit === 'minute' ? `${fmt(r.per, 2)} min` : fmt(r.per, 0)} | ${q(g.commands, r.per)} | ${q(g.writes, r.per)} | ${q(w.commands, r.per)} | ${q(w.writes, r.per)} | ${q(g.connections + w.connections, r.per)} | ${q(g.bytesIn + w.bytesIn, r.per)} | ${q(g.bytesOut + w.bytesOut, r.per)} | ${q(server, r.per)} | ${fmt((cpu * 1e6) / r.per, 0)} | ${fmt(r.appCpuMs.gateway / r.per, 1)} | ${fmt(r.appCpuMs.worker / r.per, 1)} | ${top} |`,
    );
  }
  console.log(
    `\nRedis main-thread CPU when nothing runs (timers, the bench's INFO): ${fmt(baseRate * 1000, 1)} ms/s, taken off the other rows.`,
  );
  const ev = find('an event stream following');
  if (ev) console.log(`\nevents per stream per job: ${fmt(ev.extra.events, 1)}`);

  console.log(`\n### Server commands per operation (INFO commandstats; Lua scripts' inner commands included)\n`);
  for (const r of rows.filter((x) => x.unit === 'op' || x.unit === 'minute')) {
    const top = Object.entries(r.server)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([k, v]) => `${k} ${q(v, r.per)}`)
      .join(', ');
    console.log(`- ${r.name}: ${top || '—'}`);
  }

  console.log(
    `\n### Keys left after ${keyRows.jobsRun} jobs (DBSIZE ${keyRows.dbsize}; used_memory ${fmt(keyRows.memory / 1024 / 1024, 2)} MiB)\n`,
  );
  console.log('| key pattern | type | keys | items | MEMORY USAGE bytes | bytes per key | bytes per job run |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [pattern, p] of keyRows)
    console.log(
      `| \`${pattern}\` | ${p.type} | ${p.keys} | ${p.items} | ${p.bytes} | ${fmt(p.bytes / p.keys, 0)} | ${fmt(p.bytes / keyRows.jobsRun, 0)} |`,
    );

  console.log(
    `\n### Single-primary ceiling on this machine (redis-benchmark, 50 clients, no pipelining; load average at the time ${formatLoad(loadAtCeiling)}; shared and noisy)\n`,
  );
  console.log(
    Object.entries(benchRps)
      .map(([k, v]) => `${k} ${fmt(v, 0)}/s`)
      .join('; '),
  );
  const plain = Math.min(...['GET', 'SET', 'HSET', 'INCR'].map((k) => benchRps[k]).filter(Number.isFinite));
  const ceiling = (r) => {
    if (!r) return 'n/a';
    const perOp = (r.gateway.writes + r.worker.writes) / r.per;
    const cpu = r.netCpu / r.per;
    return `${fmt(plain / perOp, 0)}/s (${fmt(perOp, 1)} round trips each at ${fmt(plain, 0)}/s; ${fmt(cpu * 1e6, 0)} µs Redis CPU each one at a time)`;
  };
  console.log(
    `\none primary, by round trips at redis-benchmark's slowest plain rate: extracts (new URL) ${ceiling(find('extract, new'))}; cached extracts ${ceiling(find('extract, cached'))}; convert jobs ${ceiling(job)}; merge jobs ${ceiling(find('job: merge'))}`,
  );
  for (const r of rows.filter((x) => x.name.includes('under load'))) {
    const busy = r.netCpu / r.seconds;
    if (!r.extra) {
      console.log(
        `${r.name}: ${fmt(r.per / r.seconds, 1)} jobs/s, Redis main thread ${fmt(busy * 100, 1)}% busy, ${fmt((r.netCpu * 1e6) / r.per, 0)} µs of Redis CPU each → one core of Redis holds about ${fmt(r.per / r.seconds / busy, 0)} jobs/s`,
      );
      continue;
    }
    console.log(
      `${r.name}: ${fmt(r.extra.rps, 0)} extracts/s (${r.extra.non2xx} non-2xx), Redis main thread ${fmt(busy * 100, 1)}% busy, ${fmt((r.netCpu * 1e6) / r.per, 1)} µs of Redis CPU each → one core of Redis holds about ${fmt(r.extra.rps / busy, 0)}/s of them`,
    );
  }
  const gIdle = find('gateway idle (no');
  const both = find('gateway + 1');
  if (gIdle && both)
    console.log(
      `idle: each gateway ${fmt(gIdle.gateway.commands / gIdle.per, 0)} commands/min, each worker ${fmt(both.worker.commands / both.per, 0)} commands/min (${fmt(both.worker.commands / both.per / 60, 2)}/s)`,
    );
  console.log(`(redis-cost benchmark took ${fmt((Date.now() - t0) / 1000, 0)} s)`);
}

function scaleTally(t, s) {
  const out = emptyTally();
  for (const k of ['connections', 'writes', 'commands', 'bytesIn', 'bytesOut']) out[k] = t[k] * s;
  for (const [k, v] of Object.entries(t.byName)) out.byName[k] = v * s;
  return out;
}

function sumNames(a, b) {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRedisCost();
