// Benchmark: what surface A's gate adds to an extract. POST /api (API key check + rate limit in one
// Redis round trip, usage counted after the response) against POST /api/v1/extract on the same
// OpenGraph page, in the same run, with a new URL every request. The added cost is the difference of
// the median latencies at one connection (so queueing does not blur it), measured in short runs that
// alternate the two routes; the figure is the median of the differences of adjacent pairs, so load
// that drifts during the run (other processes on the machine) cancels out. Throughput at 64
// connections is shown beside it. Target: < 1 ms at the median.
import { fmt, newUrlScript, requireTool, startBenchGateway, startBenchOrigin, wrk } from './lib.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
// So high that no request is refused: the run measures the gate's cost, not its refusals.
const KEY_LIMIT = 1_000_000_000;

/** Signs up through the gateway's own routes and creates a key; returns its secret. */
export async function createKey(base) {
  const json = { 'content-type': 'application/json' };
  const signup = await fetch(`${base}/account/signup`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email: `bench-${Date.now()}@example.com`, password: 'benchmark password' }),
  });
  if (signup.status !== 201) throw new Error(`signup answered ${signup.status}: ${await signup.text()}`);
  const cookie = signup.headers
    .getSetCookie()
    .find((c) => c.startsWith('reelay_session='))
    .split(';')[0];
  const key = await fetch(`${base}/account/keys`, {
    method: 'POST',
    headers: { ...json, cookie },
    body: JSON.stringify({ name: 'bench' }),
  });
  if (key.status !== 201) throw new Error(`key creation answered ${key.status}: ${await key.text()}`);
  const secret = (await key.json()).data?.secret;
  if (!secret) throw new Error('key creation answered no secret');
  return { secret, cookie };
}

/**
 * fetch with one retry: between wrk runs the gateway may close an idle keep-alive connection just as
 * fetch reuses it.
 */
const fetchAgain = (url, init) => fetch(url, init).catch(() => fetch(url, init));

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Cumulative counts of the gateway's gate-time histogram for /api, by upper bound in seconds. */
async function gateBuckets(base) {
  const text = await (await fetchAgain(`${base}/metrics`)).text();
  const buckets = new Map();
  for (const m of text.matchAll(/^reelay_surface_gate_duration_seconds_bucket\{([^}]*)\} (\d+)$/gm)) {
    if (!m[1].includes('surface="api"')) continue;
    const le = /le="([^"]+)"/.exec(m[1])[1];
    buckets.set(le === '+Inf' ? Infinity : Number(le), Number(m[2]));
  }
  return buckets;
}

/** The median of the observations between two readings, interpolated within its bucket. */
function bucketMedian(before, after) {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => after.get(b) - (before.get(b) ?? 0));
  const half = counts[counts.length - 1] / 2;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i] < half) continue;
    const lower = i ? bounds[i - 1] : 0;
    const below = i ? counts[i - 1] : 0;
    return Number.isFinite(bounds[i])
      ? lower + ((bounds[i] - lower) * (half - below)) / Math.max(1, counts[i] - below)
      : lower;
  }
  return NaN;
}

export async function benchSurfaceA() {
  requireTool('wrk', 'apt-get install wrk');
  const { startRedis } = await import('@reelay/testkit');
  const redis = await startRedis();
  const origin = await startBenchOrigin();
  let gateway;
  const routes = { baseline: { path: '/api/v1/extract', headers: {} }, api: { path: '/api', headers: {} } };
  const single = { baseline: [], api: [] };
  const loaded = {};
  let usage;
  let gateMedian;
  let apiRequests = 0;
  let refused = 0;
  let base;
  try {
    gateway = await startBenchGateway({ REDIS_URL: redis.url, RATE_LIMIT_KEY_PER_MIN: String(KEY_LIMIT) });
    base = gateway.base;
    const { secret, cookie } = await createKey(base);
    routes.api.headers = { 'X-API-Key': secret };
    const run = (name, connections, seconds) => {
      const result = wrk({
        url: base + routes[name].path,
        connections,
        threads: Math.min(2, connections),
        seconds,
        script: newUrlScript({
          originPort: origin.port,
          docPath: 'og',
          route: routes[name].path,
          headers: routes[name].headers,
        }),
      });
      if (name === 'api') {
        apiRequests += result.requests;
        refused += result.non2xx;
      }
      return result;
    };
    run('baseline', 8, 2); // warm-up: JIT, connection pools, the script cache
    run('api', 8, 2);
    const gateBefore = await gateBuckets(base);
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 ? ['api', 'baseline'] : ['baseline', 'api'])
        single[name].push(run(name, 1, Math.max(2, Math.round(SECONDS / 4))));
    }
    gateMedian = bucketMedian(gateBefore, await gateBuckets(base));
    for (const name of ['baseline', 'api']) loaded[name] = run(name, 64, SECONDS);
    const keys = await (await fetchAgain(`${base}/account/keys`, { headers: { cookie } })).json();
    usage = keys.data.keys[0].usage;
  } finally {
    gateway?.child.kill('SIGTERM');
    origin.child.kill('SIGTERM');
    await redis.stop();
  }

  const p50 = (name) => median(single[name].map((r) => r.p50));
  const added = median(single.api.map((r, i) => r.p50 - single.baseline[i].p50));
  console.log(`\n## surface A gate (POST /api vs POST /api/v1/extract, same OpenGraph page, origin: ${origin.kind})\n`);
  console.log(`RATE_LIMIT_KEY_PER_MIN=${KEY_LIMIT} for this run, so it measures the gate's cost, not refusals.\n`);
  console.log(
    `| route | 1 conn p50 ms: median of ${ROUNDS} runs (each run) | 1 conn p90 ms (median) | 1 conn p99 ms (median) | 64 conn req/s | 64 conn p50 ms | 64 conn p99 ms | non-2xx |`,
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const name of ['baseline', 'api']) {
    const of = (pct) => median(single[name].map((r) => r[pct]));
    const heavy = loaded[name];
    const non2xx = single[name].reduce((sum, r) => sum + r.non2xx, 0) + heavy.non2xx;
    console.log(
      `| ${routes[name].path} | ${fmt(p50(name), 3)} (${single[name].map((r) => fmt(r.p50, 3)).join(', ')}) | ${fmt(of('p90'), 3)} | ${fmt(of('p99'), 3)} | ${fmt(heavy.rps, 0)} | ${fmt(heavy.p50, 2)} | ${fmt(heavy.p99, 2)} | ${non2xx} |`,
    );
  }
  console.log(
    `\nadded by key check + limit + usage at the median (1 connection, median of paired differences): ${fmt(added * 1000, 0)} µs; throughput ratio at 64 connections: ${fmt(loaded.api.rps / loaded.baseline.rps, 3)}`,
  );
  console.log(
    `the gate itself (key check + limit, one Redis round trip) as the gateway times it, median at 1 connection: ${fmt(gateMedian * 1e6, 0)} µs`,
  );
  console.log(
    `usage counted for the key: ${usage.total_requests} requests (${usage.successful_requests} successful); wrk completed ${apiRequests} on /api (requests in flight when a run stops are counted by the gateway, not by wrk)`,
  );
  console.log(
    `\ntarget: added cost < 1 ms at the median: ${added < 1 && refused === 0 ? 'met' : 'NOT met'}${refused ? ` (${refused} /api requests were refused)` : ''}`,
  );
  return { single, loaded, added, gateMedian, usage };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSurfaceA();
