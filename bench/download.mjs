// Benchmark: direct downloads through the gateway against fetching the same file straight from the
// origin and through a bare Node `http.get → pipe` proxy with the same client (curl), in the same
// run. Targets (issue 10.4): a 512 MiB download at most 1.1× the bare Node pipe's time (the Node
// floor); gateway RSS growth under 30 MB during 20 parallel 128 MiB streams. Issue 16: a second
// gateway runs the same build with EGRESS_CLIENT=http (the node:http client egress had before got);
// the got gateway's CPU per download must stay ≤ 1.1× the node:http one's, in the same rounds.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fmt, requireTool, sampleRss, spawnNode, startBenchGateway, startBenchOrigin } from './lib.mjs';

const MiB = 1024 * 1024;
const ROUNDS = Number(process.env.BENCH_DOWNLOAD_ROUNDS ?? 5);
/** Sizes of the single download and of each of the 20 parallel ones (smaller for a smoke run). */
const BIG_MIB = Number(process.env.BENCH_DOWNLOAD_MIB ?? 512);
const MID_MIB = Math.max(1, Math.round(BIG_MIB / 4));

/** A process's user + system CPU time in clock ticks (10 ms), from /proc. */
function cpuTicks(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function makeFile(file, mib) {
  if (fs.existsSync(file) && fs.statSync(file).size === mib * MiB) return;
  const block = Buffer.alloc(MiB);
  for (let i = 0; i < block.length; i += 4) block.writeUInt32LE((Math.random() * 0xffffffff) >>> 0, i);
  const fd = fs.openSync(file, 'w');
  for (let i = 0; i < mib; i++) {
    block.writeUInt32LE(i, 0); // no two blocks alike
    fs.writeSync(fd, block);
  }
  fs.closeSync(fd);
}

/** Times one curl download (seconds) of a GET or a JSON POST; bytes are discarded. */
function curlTime(url, body) {
  const args = ['-s', '-o', '/dev/null', '-w', '%{time_total} %{size_download} %{http_code}'];
  if (body) args.push('-H', 'content-type: application/json', '--data', JSON.stringify(body));
  args.push(url);
  const out = spawnSync('curl', args, { encoding: 'utf8' });
  const [seconds, bytes, code] = out.stdout.trim().split(' ');
  if (code !== '200') throw new Error(`curl ${url} answered ${code}`);
  return { seconds: Number(seconds), bytes: Number(bytes) };
}

function curlParallel(n, url, body) {
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise((resolve, reject) => {
          const child = spawn(
            'curl',
            [
              '-s',
              '-o',
              '/dev/null',
              '-w',
              '%{http_code}',
              '-H',
              'content-type: application/json',
              '--data',
              JSON.stringify(body),
              url,
            ],
            { stdio: ['ignore', 'pipe', 'inherit'] },
          );
          let out = '';
          child.stdout.on('data', (d) => (out += d));
          // 'close', not 'exit': a fast download can exit before its status code has been read.
          child.once('close', () =>
            out === '200' ? resolve() : reject(new Error(`parallel download answered ${out}`)),
          );
        }),
    ),
  );
}

export async function benchDirectDownload() {
  requireTool('curl', 'apt-get install curl');
  const { startRedis } = await import('@reelay/testkit');
  const dir = path.join(os.tmpdir(), 'reelay-bench-files');
  fs.mkdirSync(dir, { recursive: true });
  fs.chmodSync(dir, 0o755);
  makeFile(path.join(dir, `big-${BIG_MIB}.mp4`), BIG_MIB);
  makeFile(path.join(dir, `mid-${MID_MIB}.mp4`), MID_MIB);

  const redis = await startRedis();
  const origin = await startBenchOrigin({ files: dir });
  let gateway;
  let httpGateway;
  const fileUrl = (name) => `http://127.0.0.1:${origin.port}/files/${name}`;
  try {
    gateway = await startBenchGateway({ REDIS_URL: redis.url, LOG_LEVEL: 'warn' });
    httpGateway = await startBenchGateway({ REDIS_URL: redis.url, LOG_LEVEL: 'warn', EGRESS_CLIENT: 'http' });
    const base = gateway.base;
    for (const name of [`big-${BIG_MIB}.mp4`, `mid-${MID_MIB}.mp4`]) {
      const res = await fetch(`${base}/api/v1/extract`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: fileUrl(name) }),
      });
      if (!res.ok) throw new Error(`extract of ${name} failed: ${await res.text()}`);
    }
    // Warm the page cache, connections and JIT of every path once, then alternate the runs. Each
    // proxy's CPU time per download is read from /proc beside the wall time: unlike wall time, what
    // else runs on the machine hardly changes it.
    const pipe = await spawnNode(['bench/pipe-proxy.mjs', fileUrl(`big-${BIG_MIB}.mp4`)]);
    const paths = {
      direct: () => curlTime(fileUrl(`big-${BIG_MIB}.mp4`)),
      bare: () => curlTime(`http://127.0.0.1:${pipe.line}/`),
      through: () => curlTime(`${base}/api/v1/download`, { url: fileUrl(`big-${BIG_MIB}.mp4`) }),
      throughHttp: () => curlTime(`${httpGateway.base}/api/v1/download`, { url: fileUrl(`big-${BIG_MIB}.mp4`) }),
    };
    const cpuOf = { bare: pipe.child.pid, through: gateway.child.pid, throughHttp: httpGateway.child.pid };
    for (const run of Object.values(paths)) run();
    const times = { direct: [], bare: [], through: [], throughHttp: [] };
    const cpu = { bare: [], through: [], throughHttp: [] };
    for (let i = 0; i < ROUNDS; i++) {
      // got and node:http take turns going first.
      const order =
        i % 2 === 0 ? ['direct', 'bare', 'through', 'throughHttp'] : ['direct', 'bare', 'throughHttp', 'through'];
      for (const [name, run] of order.map((n) => [n, paths[n]])) {
        const before = cpuOf[name] && cpuTicks(cpuOf[name]);
        times[name].push(run().seconds);
        if (cpuOf[name]) cpu[name].push((cpuTicks(cpuOf[name]) - before) * 10);
      }
    }
    const { direct, bare, through } = times;
    pipe.child.kill('SIGTERM');
    const best = (xs) => Math.min(...xs);

    const rss = sampleRss(gateway.child.pid);
    await curlParallel(20, `${base}/api/v1/download`, { url: fileUrl(`mid-${MID_MIB}.mp4`) });
    const mem = rss.stop();

    console.log(`\n## direct download (${BIG_MIB} MiB, curl, origin: ${origin.kind}; best of ${ROUNDS}, alternated)\n`);
    console.log('| path | seconds | MiB/s |');
    console.log('|---|---|---|');
    console.log(`| origin directly | ${fmt(best(direct), 3)} | ${fmt(BIG_MIB / best(direct), 0)} |`);
    console.log(
      `| bare Node pipe proxy (http.get → res, no checks) | ${fmt(best(bare), 3)} | ${fmt(BIG_MIB / best(bare), 0)} |`,
    );
    console.log(`| through the gateway (got) | ${fmt(best(through), 3)} | ${fmt(BIG_MIB / best(through), 0)} |`);
    console.log(
      `| through the gateway, EGRESS_CLIENT=http (node:http) | ${fmt(best(times.throughHttp), 3)} | ${fmt(BIG_MIB / best(times.throughHttp), 0)} |`,
    );
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(
      `\nCPU per ${BIG_MIB} MiB download (ms, median of ${ROUNDS}): bare Node pipe ${median(cpu.bare)} (${cpu.bare.join(', ')}), gateway ${median(cpu.through)} (${cpu.through.join(', ')}): ${fmt(median(cpu.through) / median(cpu.bare), 2)}×`,
    );
    // Per round, got's CPU over node:http's (the two ran back to back), then the median.
    const cpuRatio = median(cpu.through.map((ms, i) => ms / cpu.throughHttp[i]));
    console.log(
      `CPU per ${BIG_MIB} MiB download, got / node:http gateway: ${fmt(cpuRatio, 3)}× (node:http ${median(cpu.throughHttp)} ms: ${cpu.throughHttp.join(', ')}; target ≤ 1.1×: ${cpuRatio <= 1.1 ? 'met' : 'NOT met'})`,
    );
    const ratio = best(through) / best(bare);
    console.log(
      `\nratio gateway/bare Node pipe: ${fmt(ratio, 2)}× (target ≤ 1.1×: ${ratio <= 1.1 ? 'met' : 'NOT met'}); gateway/origin directly: ${fmt(best(through) / best(direct), 2)}×`,
    );
    const growth = mem.max - mem.start;
    console.log(
      `20 parallel ${MID_MIB} MiB streams: gateway RSS ${fmt(mem.start, 0)} → max ${fmt(mem.max, 0)} MB, growth ${fmt(growth, 0)} MB (target < 30 MB: ${growth < 30 ? 'met' : 'NOT met'})`,
    );
    return { ratio, growth, cpuRatio };
  } finally {
    gateway?.child.kill('SIGTERM');
    httpGateway?.child.kill('SIGTERM');
    origin.child.kill('SIGTERM');
    await redis.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchDirectDownload();
