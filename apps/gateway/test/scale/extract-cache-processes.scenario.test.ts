// The extract cache between two real gateway processes (the built app) on the run's one Redis: a
// burst of extracts of one new URL through both makes one request to the page, and each process
// counts what it did in reelay_extract_cache_total. Their start-up log says which ffmpeg they found.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startOrigin, type Origin } from '@reelay/testkit';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const gateways: { child: ChildProcess; base: string; logs: Record<string, unknown>[] }[] = [];
let origin: Origin;

async function startGateway(): Promise<(typeof gateways)[number]> {
  const port = await freePort();
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    REDIS_URL: process.env.REDIS_URL,
    PORT: String(port),
    EGRESS_ALLOWLIST: '127.0.0.1',
    LOG_LEVEL: 'info',
    EXTRACT_CACHE_SECONDS: '60',
  };
  const child = spawn(process.execPath, ['apps/gateway/dist/main.js'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const gw = { child, base: `http://127.0.0.1:${port}`, logs: [] as Record<string, unknown>[] };
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.startsWith('{')) gw.logs.push(JSON.parse(line) as Record<string, unknown>);
  });
  child.stderr!.resume();
  const deadline = Date.now() + 20_000;
  while (!gw.logs.some((l) => String(l.msg).startsWith('gateway listening'))) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`gateway did not start (exit ${child.exitCode})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return gw;
}

beforeAll(async () => {
  const build = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'apps/gateway/tsconfig.json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`build failed: ${build.stdout}${build.stderr}`);
  origin = await startOrigin();
  origin.body('/clip.mp4', Buffer.alloc(1024, 1), 'video/mp4');
  gateways.push(await startGateway(), await startGateway());
}, 120_000);

afterAll(async () => {
  await Promise.all(
    gateways.map(
      (g) =>
        new Promise((resolve) =>
          g.child.exitCode !== null ? resolve(null) : (g.child.once('exit', resolve), g.child.kill('SIGTERM')),
        ),
    ),
  );
  await origin?.close();
});

/** reelay_extract_cache_total by outcome, summed over both processes. */
async function cacheCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const g of gateways) {
    const text = await (await fetch(`${g.base}/metrics`)).text();
    for (const m of text.matchAll(/^reelay_extract_cache_total\{outcome="(\w+)"[^}]*\} (\d+)/gm))
      counts[m[1]!] = (counts[m[1]!] ?? 0) + Number(m[2]);
  }
  return counts;
}

test('50 concurrent extracts of one new URL through two gateway processes make one request to the page; the rest join it', async () => {
  origin.route('/page', (_req, res) => {
    setTimeout(
      () =>
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            '<html><head><meta property="og:title" content="Two"><meta property="og:video" content="/clip.mp4"><meta property="og:video:type" content="video/mp4"></head></html>',
          ),
      300,
    );
  });
  const ask = (i: number) =>
    fetch(`${gateways[i % 2]!.base}/api/v1/extract`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: origin.url('/page') }),
    });
  const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => ask(i)));
  expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
  expect(origin.hits.get('/page')).toBe(1);
  expect(answers.filter((a) => a.headers.get('age') === null)).toHaveLength(1);
  const counts = await cacheCounts();
  // One fetched; the others joined that fetch or, arriving after it was stored, hit the cache.
  expect({
    miss: counts.miss,
    shared: (counts.joined ?? 0) + (counts.hit ?? 0),
    unshared: counts.unshared ?? 0,
  }).toEqual({ miss: 1, shared: 49, unshared: 0 });
  expect(counts.joined).toBeGreaterThan(0); // the other process really waited on this one's fetch

  const again = await ask(1);
  expect({ status: again.status, age: again.headers.get('age') !== null, hits: origin.hits.get('/page') }).toEqual({
    status: 200,
    age: true,
    hits: 1,
  });
}, 60_000);

test("each gateway's start-up log names its ffmpeg and ffprobe and where they came from", () => {
  for (const g of gateways) {
    const listening = g.logs.find((l) => String(l.msg).startsWith('gateway listening'));
    expect(listening).toMatchObject({
      ffmpeg: { path: expect.any(String), source: expect.stringMatching(/^(ffmpeg-static|PATH)$/) },
      ffprobe: { path: 'ffprobe', source: 'PATH' },
    });
  }
});
