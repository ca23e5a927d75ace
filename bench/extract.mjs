// Benchmark: uncached POST /api/v1/extract throughput and latency at 64 connections, a new URL every
// request, for an OpenGraph page and an HLS master, next to the origin's own requests/s for the
// same documents in the same run. Targets (2 cores): ≥ 800 extracts/s with p99 < 100 ms on the
// OpenGraph page; gateway RSS < 200 MB.
import { fmt, newUrlScript, requireTool, sampleRss, startBenchGateway, startBenchOrigin, wrk } from './lib.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

export async function benchExtract() {
  requireTool('wrk', 'apt-get install wrk');
  const { startRedis } = await import('@reelay/testkit');
  const redis = await startRedis();
  // nginx serves the documents when installed: it leaves the gateway the CPU a Node origin would take
  // on a 2-core machine, and it is the baseline the figures are compared with.
  const origin = await startBenchOrigin();
  const originPort = origin.port;
  let gateway;
  const results = [];
  try {
    gateway = await startBenchGateway({ REDIS_URL: redis.url });
    const base = gateway.base;
    for (const [name, path] of [['OpenGraph page', 'og'], ['HLS master', 'hls']]) {
      const originRun = wrk({ url: `http://127.0.0.1:${originPort}/${path}/1`, seconds: SECONDS });
      const script = newUrlScript({ originPort, docPath: path, route: '/api/v1/extract' });
      // Warm up (JIT, connection pools), then measure.
      wrk({ url: `${base}/api/v1/extract`, seconds: 2, script });
      const before = await within100ms(base);
      const rss = sampleRss(gateway.child.pid);
      const run = wrk({ url: `${base}/api/v1/extract`, seconds: SECONDS, script });
      const mem = rss.stop();
      const after = await within100ms(base);
      const served = (after.fast - before.fast) / Math.max(1, after.all - before.all);
      results.push({ name, originRun, run, mem, served });
    }
  } finally {
    gateway?.child.kill('SIGTERM');
    origin.child.kill('SIGTERM');
    await redis.stop();
  }

  console.log(`\n## extract (uncached, new URL per request, 64 connections, ${SECONDS}s, origin: ${origin.kind})\n`);
  console.log('| document | origin req/s | extract req/s | extract/origin | p50 ms | p90 ms | p99 ms | gateway-timed ≤ 100 ms | errors | gateway RSS max MB |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const { name, originRun, run, mem, served } of results) {
    console.log(`| ${name} | ${fmt(originRun.rps, 0)} | ${fmt(run.rps, 0)} | ${fmt(run.rps / originRun.rps, 3)} | ${fmt(run.p50, 2)} | ${fmt(run.p90, 2)} | ${fmt(run.p99, 2)} | ${fmt(served * 100, 2)}% | ${run.non2xx} non-2xx, sockets: ${run.socketErrors} | ${fmt(mem.max, 0)} |`);
  }
  console.log('\nLatencies are wrk\'s (client side); "gateway-timed" is the share of extracts the gateway itself answered within 100 ms (its reelay_http_request_duration_seconds histogram).');
  const og = results[0];
  console.log(`\ntargets: OpenGraph ≥ 800 extracts/s: ${og.run.rps >= 800 ? 'met' : 'NOT met'}; p99 < 100 ms: ${og.run.p99 < 100 ? 'met' : 'NOT met'}; RSS < 200 MB: ${Math.max(...results.map((r) => r.mem.max)) < 200 ? 'met' : 'NOT met'}`);
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchExtract();

/** Counts of successful extracts answered within 100 ms and in all, from the gateway's histogram. */
async function within100ms(base) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const count = (le) => {
    const m = new RegExp(`reelay_http_request_duration_seconds_bucket\\{le="${le}",[^}]*route="/api/v1/extract",status="200"[^}]*\\} (\\d+)`).exec(text);
    return m ? Number(m[1]) : 0;
  };
  return { fast: count('0.1'), all: count('\\+Inf') };
}
