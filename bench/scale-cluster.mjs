// node bench/scale-cluster.mjs (after pnpm build): throughput of N gateways + N workers on a Redis
// Cluster (3 primaries, 3 replicas) against 1 gateway + 1 worker on the same cluster, for a queue of
// short jobs (a remux of a 2 s clip to MKV, copied, no re-encode). Every job is extracted and
// submitted through the gateways in turn before the workers may start, so the figure is the
// draining rate of a full queue: jobs / (last finished_at − first started_at). Scaling efficiency
// is (rate with N) / (N × rate with 1). On a machine with fewer cores than processes the processes
// share them, which caps the efficiency: the load average is printed beside every run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatLoad } from './lib.mjs';
import { spawnApp } from './scale-scenario.mjs';

const JOBS = Number(process.env.BENCH_CLUSTER_JOBS ?? 500);
const WIDE = Number(process.env.BENCH_CLUSTER_PROCESSES ?? 4);
const RUNS = Number(process.env.BENCH_CLUSTER_RUNS ?? 1);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const WORKER_ENTRY = path.join(root, 'apps/worker/test/fixtures/worker-process.mjs');
const GATEWAY_ENTRY = path.join(root, 'apps/gateway/dist/main.js');

/** The machine's CPU time so far, busy and all, in seconds (from /proc/stat). */
function machineCpu() {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const tick = 100; // USER_HZ
  const idle = fields[3] + (fields[4] ?? 0);
  const all = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: (all - idle) / tick, all: all / tick };
}

/** CPU seconds used so far by every redis-server on the machine (the cluster's six nodes). */
function redisCpu() {
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(redis-server)')) continue;
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(rest[11]) + Number(rest[12]); // utime, stime
    } catch {
      // gone meanwhile
    }
  }
  return ticks / 100;
}

async function drain({ testkit, cluster, origin, processes, tag }) {
  const dirs = [];
  const apps = [];
  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-scale-cluster-'));
    dirs.push(d);
    return d;
  };
  try {
    const shared = tmp();
    const common = {
      REDIS_URL: cluster.url,
      EGRESS_ALLOWLIST: '127.0.0.1',
      LOG_LEVEL: 'info',
      RATE_LIMIT_V1_PER_MIN: '0',
      MAX_ACTIVE_JOBS_PER_CLIENT: '0',
      DATA_DIR: shared,
    };
    const gateways = [];
    for (let i = 0; i < processes; i++) {
      const port = await testkit.freePort();
      const g = spawnApp([GATEWAY_ENTRY], { ...common, PORT: String(port) });
      g.base = `http://127.0.0.1:${port}`;
      apps.push(g);
      gateways.push(g);
    }
    await Promise.all(
      gateways.map((g) =>
        g.waitFor(
          (l) => typeof l.msg === 'string' && l.msg.startsWith('gateway listening'),
          'a gateway to start',
          90_000,
        ),
      ),
    );
    // Fill the queue first: one request at a time per gateway, all gateways in parallel.
    const ids = [];
    const per = Math.ceil(JOBS / processes);
    await Promise.all(
      gateways.map(async (g, gi) => {
        for (let i = gi * per; i < Math.min(JOBS, (gi + 1) * per); i++) {
          const url = origin.url(`/media/clip.mp4?${tag}=${i}`);
          const post = (p, body) =>
            fetch(`${g.base}${p}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
            });
          const x = await post('/api/v1/extract', { url });
          await x.arrayBuffer();
          const res = await post('/api/v1/download', { url, format: 'mkv' });
          if (res.status !== 202) throw new Error(`download answered ${res.status}: ${await res.text()}`);
          ids.push((await res.json()).data.job_id);
        }
      }),
    );
    const load = os.loadavg();
    const cpu0 = machineCpu();
    const redis0 = redisCpu();
    for (let i = 0; i < processes; i++)
      apps.push(spawnApp([WORKER_ENTRY, JSON.stringify({ metricsPort: 0 })], { ...common, WORKER_CONCURRENCY: '2' }));
    // Wait for every job through the gateways (one poll loop per gateway).
    const ends = new Map();
    await Promise.all(
      gateways.map(async (g, gi) => {
        const mine = ids.filter((_, i) => i % processes === gi);
        while (mine.some((id) => !ends.has(id))) {
          for (const id of mine.filter((x) => !ends.has(x))) {
            const view = (await (await fetch(`${g.base}/api/v1/jobs/${id}`)).json()).data;
            if (view.status === 'completed' || view.status === 'failed') ends.set(id, view);
          }
          await new Promise((r) => setTimeout(r, 250));
        }
      }),
    );
    const cpu1 = machineCpu();
    const redisSeconds = redisCpu() - redis0;
    const views = [...ends.values()];
    const first = Math.min(...views.map((v) => Date.parse(v.started_at ?? v.finished_at)));
    const last = Math.max(...views.map((v) => Date.parse(v.finished_at)));
    const failed = views.filter((v) => v.status !== 'completed').length;
    // Busy share of every core while the queue drained (the gateways' polling included), and the CPU
    // time per job of the whole machine and of the Redis Cluster alone.
    const busy = (cpu1.busy - cpu0.busy) / (cpu1.all - cpu0.all);
    return {
      jobs: views.length,
      failed,
      seconds: (last - first) / 1000,
      rate: views.length / ((last - first) / 1000),
      load,
      loadAfter: os.loadavg(),
      busy,
      cpuPerJob: (cpu1.busy - cpu0.busy) / views.length,
      redisPerJob: redisSeconds / views.length,
    };
  } finally {
    for (const app of apps) if (app.child.exitCode === null) app.child.kill('SIGKILL');
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

export async function benchScaleCluster() {
  const testkit = await import('@reelay/testkit');
  const [cluster, origin, media] = await Promise.all([
    testkit.startRedisCluster(),
    testkit.startOrigin(),
    testkit.makeTestMedia(
      process.env.REELAY_TEST_MEDIA ?? path.join(os.tmpdir(), `reelay-test-media-v1-${process.getuid?.() ?? 0}`),
    ),
  ]);
  origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
  const results = [];
  try {
    for (let run = 1; run <= RUNS; run++) {
      const one = await drain({ testkit, cluster, origin, processes: 1, tag: `one${run}` });
      console.log(
        `scale-cluster run ${run}: 1+1 drained ${one.jobs} jobs in ${one.seconds.toFixed(1)} s (${one.failed} failed)`,
      );
      const wide = await drain({ testkit, cluster, origin, processes: WIDE, tag: `wide${run}` });
      const efficiency = wide.rate / (WIDE * one.rate);
      results.push({ one, wide, efficiency });
      const cpu = (r) =>
        `CPU busy ${(r.busy * 100).toFixed(0)}%, ${(r.cpuPerJob * 1000).toFixed(0)} ms CPU per job (Redis ${(r.redisPerJob * 1000).toFixed(1)} ms)`;
      console.log(`scale-cluster run ${run}: 1+1 ${cpu(one)}; ${WIDE}+${WIDE} ${cpu(wide)}`);
      console.log(
        `scale-cluster run ${run}: ${JOBS} jobs, 1+1: ${one.rate.toFixed(1)} jobs/s (${one.seconds.toFixed(1)} s, load ${formatLoad(one.load)}), ${WIDE}+${WIDE}: ${wide.rate.toFixed(1)} jobs/s (${wide.seconds.toFixed(1)} s, load ${formatLoad(wide.load)}); speed-up ${(wide.rate / one.rate).toFixed(2)}×, scaling efficiency ${(efficiency * 100).toFixed(0)}%; failed ${one.failed + wide.failed}; ${os.cpus().length} cores`,
      );
    }
  } finally {
    await origin.close();
    await cluster.stop();
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchScaleCluster();
