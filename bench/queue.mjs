// Benchmark: queue latency and throughput. A burst of small jobs (2 s MP3 → WAV) submitted at once
// through the gateway to 1, then 2 workers of WORKER_CONCURRENCY=2 each: time-to-start (created_at →
// started_at from the job records, p50/p99) and throughput (jobs / first created → last finished).
// Baseline, in the same run: the same conversions run as bare ffmpeg processes from a pool of the same
// parallelism (workers × concurrency), straight from the origin, before and after the burst (the faster
// counts); its time-to-start is when the pool launched each command. Targets: throughput ≥ 0.7× the pool's, p50 time-to-start ≤ 1.5× the pool's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dumpLogs, percentile, run, sleep, startStack, timings } from './jobs.mjs';
import { fmt, formatLoad, requireTool } from './lib.mjs';

const BURST = Number(process.env.BENCH_QUEUE_BURST ?? 50);
const CONCURRENCY = Number(process.env.BENCH_QUEUE_CONCURRENCY ?? 2);
const WORKERS = (process.env.BENCH_QUEUE_WORKERS ?? '1,2').split(',').map(Number);
const SEQUENTIAL = Number(process.env.BENCH_QUEUE_JOBS ?? 10);
const TARGET_THROUGHPUT = 0.7;
const TARGET_START = 1.5;

/** Runs `n` commands from a pool of `parallel`; returns each one's start offset (ms) and the makespan. */
async function pool(n, parallel, command) {
  const t0 = performance.now();
  const starts = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) {
        const i = next++;
        starts[i] = performance.now() - t0;
        await command(i);
      }
    }),
  );
  return { starts, makespan: performance.now() - t0 };
}

export async function benchQueue() {
  requireTool('ffmpeg', 'apt-get install ffmpeg');
  requireTool('redis-server', 'apt-get install redis-server');
  const loadStart = os.loadavg();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-bench-queue-'));
  const logDir = process.env.BENCH_JOBS_LOG_DIR ? path.resolve(process.env.BENCH_JOBS_LOG_DIR) : scratch;
  fs.mkdirSync(logDir, { recursive: true });
  const logs = { gateway: path.join(logDir, 'gateway.log'), worker: path.join(logDir, 'worker.log') };
  const t0 = Date.now();
  const results = [];
  const sequential = [];
  let stack;
  try {
    stack = await startStack(scratch, logs);
    const { api } = stack;
    await stack.startWorker({ WORKER_CONCURRENCY: String(CONCURRENCY) });
    const tone = (await api.extract(stack.fileUrl('tone.mp3'))).media[0].sources[0];
    const submit = (name) => api.submit({ url: tone.url, format: 'wav', filename: name });
    const bareOut = (i) => path.join(scratch, `bare-${i % 8}.wav`);
    const bare = (i) =>
      run('ffmpeg', [
        '-hide_banner',
        '-loglevel',
        'error',
        '-y',
        '-i',
        tone.url,
        '-vn',
        '-c:a',
        'pcm_s16le',
        '-f',
        'wav',
        bareOut(i),
      ]);

    // An idle worker, one job at a time: the least a job waits.
    await api.waitJob(await submit('q-warm'));
    for (let i = 0; i < SEQUENTIAL; i++) sequential.push(timings(await api.waitJob(await submit(`q-${i}`))));

    for (const workers of WORKERS) {
      await stack.stopWorkers();
      for (let w = 0; w < workers; w++) await stack.startWorker({ WORKER_CONCURRENCY: String(CONCURRENCY) });
      // Warm-up: enough jobs for every worker slot to have run one.
      await api.waitAll(
        await Promise.all(Array.from({ length: 2 * workers * CONCURRENCY }, (_, i) => submit(`warm-${workers}-${i}`))),
      );
      const parallel = workers * CONCURRENCY;
      await bare(0);
      // The pool runs before and after the burst and the faster run is the baseline: other load on
      // the machine comes and goes, and this way it cannot flatter the jobs.
      const before = await pool(BURST, parallel, bare);
      await sleep(200);
      const ids = await Promise.all(Array.from({ length: BURST }, (_, i) => submit(`burst-${workers}-${i}`)));
      const jobs = await api.waitAll(ids);
      const after = await pool(BURST, parallel, bare);
      const base = after.makespan < before.makespan ? after : before;
      const created = jobs.map((j) => Date.parse(j.created_at));
      const makespan = Math.max(...jobs.map((j) => Date.parse(j.finished_at))) - Math.min(...created);
      const t = jobs.map(timings);
      results.push({
        workers,
        parallel,
        waits: t.map((x) => x.wait),
        processing: t.map((x) => x.processing),
        makespan,
        submitSpread: Math.max(...created) - Math.min(...created),
        throughput: (BURST * 1000) / makespan,
        bareStarts: base.starts,
        bareThroughput: (BURST * 1000) / base.makespan,
        bareRuns: [before.makespan, after.makespan],
      });
    }
  } catch (err) {
    dumpLogs(logs);
    throw err;
  } finally {
    await stack?.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }

  console.log(
    `\n## queue (burst of ${BURST} jobs, 2 s MP3 → WAV, WORKER_CONCURRENCY=${CONCURRENCY} per worker; origin: ${stack.origin.kind}; ${os.availableParallelism()} cores; load average 1/5/15 min at start ${formatLoad(loadStart)}, at end ${formatLoad(os.loadavg())})\n`,
  );
  console.log(
    '| scenario | time-to-start p50 ms | p99 ms | started → finished p50 ms | throughput jobs/s | all done in ms |',
  );
  console.log('|---|---|---|---|---|---|');
  const seqWaits = sequential.map((x) => x.wait);
  console.log(
    `| idle worker, one job at a time (${SEQUENTIAL} jobs) | ${fmt(percentile(seqWaits, 50), 0)} | ${fmt(percentile(seqWaits, 99), 0)} | ${fmt(
      percentile(
        sequential.map((x) => x.processing),
        50,
      ),
      0,
    )} | | |`,
  );
  for (const r of results) {
    console.log(
      `| bare ffmpeg pool of ${r.parallel} (baseline for ${r.workers} worker${r.workers > 1 ? 's' : ''}; faster of ${r.bareRuns.map((x) => fmt(x, 0)).join(' / ')} ms before / after) | ${fmt(percentile(r.bareStarts, 50), 0)} | ${fmt(percentile(r.bareStarts, 99), 0)} | | ${fmt(r.bareThroughput, 1)} | ${fmt((BURST * 1000) / r.bareThroughput, 0)} |`,
    );
    console.log(
      `| **${r.workers} worker${r.workers > 1 ? 's' : ''} × ${CONCURRENCY}** (submitted within ${fmt(r.submitSpread, 0)} ms) | ${fmt(percentile(r.waits, 50), 0)} | ${fmt(percentile(r.waits, 99), 0)} | ${fmt(percentile(r.processing, 50), 0)} | ${fmt(r.throughput, 1)} | ${fmt(r.makespan, 0)} |`,
    );
  }
  console.log('');
  for (const r of results) {
    const tput = r.throughput / r.bareThroughput;
    const start = percentile(r.waits, 50) / percentile(r.bareStarts, 50);
    console.log(
      `${r.workers} worker(s): throughput ${fmt(r.throughput, 1)} jobs/s = ${fmt(tput, 2)}× the bare pool (target ≥ ${TARGET_THROUGHPUT}×: ${tput >= TARGET_THROUGHPUT ? 'met' : 'NOT met'}); p50 time-to-start ${fmt(start, 2)}× the pool's (target ≤ ${TARGET_START}×: ${start <= TARGET_START ? 'met' : 'NOT met'})`,
    );
  }
  if (results.length > 1) {
    const [first, last] = [results[0], results.at(-1)];
    console.log(
      `scaling ${first.workers} → ${last.workers} workers: throughput ${fmt(last.throughput / first.throughput, 2)}× (bare pool ${first.parallel} → ${last.parallel}: ${fmt(last.bareThroughput / first.bareThroughput, 2)}×; on ${os.availableParallelism()} cores more processes than cores cannot add much)`,
    );
  }
  console.log('Job timestamps have millisecond resolution.');
  if (stack.api.spuriousExpired.length > 0)
    console.log(
      `note: ${stack.api.spuriousExpired.length} poll(s) saw a completing job as "expired" without finished_at (a race in the gateway); polled again.`,
    );
  console.log(`(queue benchmark took ${fmt((Date.now() - t0) / 1000, 0)} s)`);
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchQueue();
