// Profiles the gateway under the extract benchmark's load: `node bench/profile-extract.mjs [og|hls]`
// runs the built gateway with --cpu-prof for BENCH_SECONDS of wrk at 64 connections (a new URL every
// request) and prints the functions with the most self time. Not part of `pnpm bench`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fmt, newUrlScript, spawnNode, startBenchOrigin, waitForHttp, wrk } from './lib.mjs';

const docPath = process.argv[2] ?? 'og';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const { startRedis, freePort } = await import('@reelay/testkit');
const redis = await startRedis();
const origin = await startBenchOrigin();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-prof-'));
const port = await freePort();
const { child } = await spawnNode(
  ['--cpu-prof', '--cpu-prof-dir', dir, 'apps/gateway/dist/main.js'],
  {
    PORT: String(port),
    EGRESS_ALLOWLIST: '127.0.0.1',
    REDIS_URL: redis.url,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    RATE_LIMIT_V1_PER_MIN: '0',
  },
  { firstLine: false },
);
const base = `http://127.0.0.1:${port}`;
try {
  await waitForHttp(`${base}/healthz`); // it listens once Redis answers; /readyz would wait for a worker
  const script = newUrlScript({ originPort: origin.port, docPath, route: '/api/v1/extract' });
  const run = wrk({ url: `${base}/api/v1/extract`, seconds: SECONDS, script });
  console.log(
    `extract ${docPath}: ${fmt(run.rps, 0)} req/s, p50 ${fmt(run.p50, 1)} ms, p99 ${fmt(run.p99, 1)} ms, non-2xx ${run.non2xx}`,
  );
} finally {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  origin.child.kill('SIGTERM');
  await redis.stop();
}
const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) {
  const node = byId.get(profile.samples[i]);
  const f = node.callFrame;
  const where = f.url
    ? `${f.url.replace(/^.*node_modules\/\.pnpm\/([^/]+)\/node_modules\//, '$1 ').replace(/^file:\/\/.*\/(apps|packages)\//, '$1/')}:${f.lineNumber + 1}`
    : '';
  const key = `${f.functionName || '(anonymous)'} ${where}`;
  self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
// Group by package too: a flat profile shows up as a spread over libraries.
const byPkg = new Map();
for (const [key, us] of self) {
  const pkg =
    /\s(\S+@[\d.]+)\s/.exec(key)?.[1] ??
    /\s(apps|packages)\/([^/]+)/.exec(key)?.slice(1).join('/') ??
    (key.includes('node:') ? 'node' : key.split(' ')[0]);
  byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + us);
}
// Inclusive time of a few suspects: samples with any frame of theirs on the stack.
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const suspects = {
  'node:http client': /node:_http_client|node:_http_agent/,
  got: /got@/,
  undici: /undici@/,
  pino: /pino@|sonic-boom@/,
  'access log': /apps\/gateway\/dist\/http\/access-log/,
  ioredis: /ioredis@/,
  htmlparser2: /htmlparser2@|domhandler@|css-select@|domutils@/,
  'express/router/body-parser': /express@|router@|body-parser@|raw-body@/,
  'prom-client': /prom-client@/,
  zod: /zod@/,
  'packages/egress': /packages\/egress\//,
  'packages/extractors': /packages\/extractors\//,
  'apps/gateway': /apps\/gateway\//,
};
const inclusive = Object.fromEntries(Object.keys(suspects).map((k) => [k, 0]));
for (let i = 0; i < profile.samples.length; i++) {
  const seen = new Set();
  for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) {
    const url = byId.get(id).callFrame.url;
    for (const [k, re] of Object.entries(suspects)) if (!seen.has(k) && re.test(url)) seen.add(k);
  }
  for (const k of seen) inclusive[k] += dt[i] ?? 0;
}
console.log('\ninclusive (share of all samples with the package on the stack):');
for (const [k, us] of Object.entries(inclusive).sort((a, b) => b[1] - a[1]))
  console.log(`${fmt((us / total) * 100, 1).padStart(5)}%  ${k}`);
if (process.env.PROFILE_CALLERS) {
  // For one package (PROFILE_CALLERS=ioredis), which code outside it leads into it.
  const re = new RegExp(process.env.PROFILE_CALLERS);
  const callers = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    let inside = false;
    for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id).callFrame;
      if (re.test(f.url)) inside = true;
      else if (inside) {
        const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(apps|packages|node_modules\/\.pnpm)\//, '')}:${f.lineNumber + 1}`;
        callers.set(key, (callers.get(key) ?? 0) + (dt[i] ?? 0));
        break;
      }
    }
  }
  console.log(`\ncallers into ${process.env.PROFILE_CALLERS}:`);
  for (const [key, us] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 12))
    console.log(`${fmt((us / total) * 100, 1).padStart(5)}%  ${key}`);
}
console.log('\ntop self time:');
for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30))
  console.log(`${fmt((us / total) * 100, 1).padStart(5)}%  ${key}`);
console.log('\nby package:');
for (const [pkg, us] of [...byPkg].sort((a, b) => b[1] - a[1]).slice(0, 15))
  console.log(`${fmt((us / total) * 100, 1).padStart(5)}%  ${pkg}`);
fs.rmSync(dir, { recursive: true, force: true });
