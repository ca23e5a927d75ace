// Benchmark: job event streams (GET /api/v1/jobs/{id}/events). STREAMS clients on one gateway process
// follow one merge job each round (60 s 720p video-only + AAC audio-only, stream copy): the gateway's
// RSS and CPU while the streams open, while they sit idle, and while the job runs and its events fan
// out; and the time from the job's completion (finished_at, written by the worker) to the terminal
// event at each client, p50/p99. The worker is started after the streams are open, so every stream
// sees the job from queued to completed. Baseline in the same run: the same gateway idle, no streams.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuMs, dumpLogs, percentile, sleep, startStack } from './jobs.mjs';
import { fmt, formatLoad, requireTool, sampleRss } from './lib.mjs';

const STREAMS = Number(process.env.BENCH_EVENTS_STREAMS ?? 500);
const ROUNDS = Number(process.env.BENCH_EVENTS_ROUNDS ?? 5);
const IDLE_MS = 3_000;
/** Target: p99 completion → terminal event at the client with STREAMS streams open. */
const TARGET_P99_MS = 250;

/** Opens one stream; resolves once its first event arrived, with a promise of the terminal event. */
function follow(base, id) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/api/v1/jobs/${id}/events`, { agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`events answered ${res.statusCode}`));
      res.setEncoding('utf8');
      const stream = { events: 0, terminalAt: undefined, firstSeen: false };
      let text = '';
      stream.ended = new Promise((done, fail) => {
        res.on('data', (chunk) => {
          text += chunk;
          stream.events = (text.match(/^event: job$/gm) ?? []).length;
          if (!stream.firstSeen && stream.events > 0) {
            stream.firstSeen = true;
            resolve(stream);
          }
          if (stream.terminalAt === undefined && text.includes('"status":"completed"')) stream.terminalAt = Date.now();
        });
        res.on('end', () =>
          stream.terminalAt === undefined
            ? fail(new Error(`stream ended without completed:\n${text.slice(-500)}`))
            : done(),
        );
        res.on('error', fail);
      });
    });
    req.on('error', reject);
  });
}

export async function benchEvents() {
  requireTool('ffmpeg', 'apt-get install ffmpeg');
  requireTool('redis-server', 'apt-get install redis-server');
  const loadStart = os.loadavg();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-bench-events-'));
  const logs = { gateway: path.join(scratch, 'gateway.log'), worker: path.join(scratch, 'worker.log') };
  const t0 = Date.now();
  const rounds = [];
  let stack;
  let idle;
  try {
    stack = await startStack(scratch, logs);
    const { api } = stack;
    const gw = stack.gateway.pid;
    const pair = await api.extract(stack.fileUrl('pair.html'));
    const sources = pair.media.flatMap((m) => m.sources);
    const body = (n) => ({
      video_url: sources.find((s) => s.stream_profile === 'video_only').url,
      audio_url: sources.find((s) => s.stream_profile === 'audio_only').url,
      filename: `events-${n}`,
    });
    // Baseline: the gateway idle, after a warm-up round of a few streams (JIT, the reader started).
    {
      const id = await api.submit(body('warm'));
      const warm = await Promise.all(Array.from({ length: 5 }, () => follow(stack.base, id)));
      await stack.startWorker();
      await Promise.all(warm.map((s) => s.ended));
      await stack.stopWorkers();
    }
    await sleep(500);
    const idleRss = sampleRss(gw);
    const idleCpu = cpuMs(gw).self;
    await sleep(IDLE_MS);
    idle = { rss: idleRss.stop().max, cpu: cpuMs(gw).self - idleCpu };

    for (let r = 0; r < ROUNDS; r++) {
      const id = await api.submit(body(r));
      const rss = sampleRss(gw);
      let cpu = cpuMs(gw).self;
      let t = performance.now();
      const streams = await Promise.all(Array.from({ length: STREAMS }, () => follow(stack.base, id)));
      const open = { ms: performance.now() - t, cpu: cpuMs(gw).self - cpu };
      cpu = cpuMs(gw).self;
      await sleep(IDLE_MS);
      const held = { cpu: cpuMs(gw).self - cpu, rss: rss.stop().max };
      const run = sampleRss(gw);
      cpu = cpuMs(gw).self;
      t = performance.now();
      await stack.startWorker();
      await Promise.all(streams.map((s) => s.ended));
      const fanout = { cpu: cpuMs(gw).self - cpu, ms: performance.now() - t, rss: run.stop().max };
      const job = await api.job(id);
      const finished = Date.parse(job.finished_at);
      rounds.push({
        open,
        held,
        fanout,
        delays: streams.map((s) => s.terminalAt - finished),
        events: streams.map((s) => s.events),
      });
      await stack.stopWorkers();
    }
  } catch (err) {
    dumpLogs(logs);
    throw err;
  } finally {
    await stack?.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const loadEnd = os.loadavg();
  const delays = rounds.flatMap((r) => r.delays);
  const events = rounds.flatMap((r) => r.events);
  const med = (xs) => percentile(xs, 50);
  const p50 = percentile(delays, 50);
  const p99 = percentile(delays, 99);
  console.log(
    `\n## job event streams (${STREAMS} streams on one gateway process, ${ROUNDS} merge jobs; ${os.availableParallelism()} cores; load average 1/5/15 min at start ${formatLoad(loadStart)}, at end ${formatLoad(loadEnd)})\n`,
  );
  console.log('| gateway process | RSS MB (peak) | CPU ms | wall ms |');
  console.log('|---|---|---|---|');
  console.log(
    `| idle, no streams, ${IDLE_MS / 1000} s (baseline) | ${fmt(idle.rss, 0)} | ${fmt(idle.cpu, 0)} | ${IDLE_MS} |`,
  );
  console.log(
    `| opening ${STREAMS} streams (median round) | — | ${fmt(med(rounds.map((r) => r.open.cpu)), 0)} | ${fmt(med(rounds.map((r) => r.open.ms)), 0)} |`,
  );
  console.log(
    `| ${STREAMS} streams open and idle, ${IDLE_MS / 1000} s | ${fmt(Math.max(...rounds.map((r) => r.held.rss)), 0)} | ${fmt(med(rounds.map((r) => r.held.cpu)), 0)} | ${IDLE_MS} |`,
  );
  console.log(
    `| the job runs: its events to ${STREAMS} streams until each ends | ${fmt(Math.max(...rounds.map((r) => r.fanout.rss)), 0)} | ${fmt(med(rounds.map((r) => r.fanout.cpu)), 0)} | ${fmt(med(rounds.map((r) => r.fanout.ms)), 0)} |`,
  );
  console.log(
    `\nevents per stream (median): ${fmt(med(events), 0)}; completion (finished_at) → terminal event at the client over ${delays.length} streams: p50 ${fmt(p50, 0)} ms, p99 ${fmt(p99, 0)} ms, max ${fmt(Math.max(...delays), 0)} ms`,
  );
  console.log(
    `target: p99 ≤ ${TARGET_P99_MS} ms with ${STREAMS} streams: ${p99 <= TARGET_P99_MS ? 'met' : 'NOT met'}; RSS with ${STREAMS} streams − idle: ${fmt(Math.max(...rounds.map((r) => r.fanout.rss)) - idle.rss, 0)} MB`,
  );
  console.log(`(events benchmark took ${fmt((Date.now() - t0) / 1000, 0)} s)`);
  return { p50, p99 };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchEvents();
