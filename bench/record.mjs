// Benchmark: recording a live stream (issue 23). ffmpeg makes a live HLS stream in real time (1 s
// segments, a sliding window) into the bench origin's folder; the whole service records it (gateway
// and worker processes, live.duration = BENCH_RECORD_SECONDS, default 600) while `ffmpeg -i <live
// m3u8> -c copy` records the same stream beside it, as the baseline. Figures: the lag from a segment
// appearing in the playlist to its bytes being in the recording (p50/p99; goal p99 ≤ one target
// duration), the worker's CPU seconds per recorded minute against the baseline ffmpeg's (goal ≤
// 1.5×), and the worker's RSS over the recording (flat: its first and last quarter compared).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuMs, dumpLogs, percentile, sleep, startStack, stopChild } from './jobs.mjs';
import { fmt, requireTool } from './lib.mjs';

const SECONDS = Number(process.env.BENCH_RECORD_SECONDS ?? 600);
const WARMUP_MS = Number(process.env.BENCH_RECORD_WARMUP_MS ?? 10_000);
const IDLE_MS = Number(process.env.BENCH_RECORD_IDLE_MS ?? 20_000);
const TARGET_DURATION_MS = 1_000;

const rss = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  } catch {
    return NaN;
  }
};
const cpuTotal = (pid) => {
  const c = cpuMs(pid);
  return c.self + c.children;
};
/** The worker's CPU split: user and system time of its own threads, and its waited-for children (ffprobe, ffmpeg). */
const cpuSplit = (pid) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[11]) * 10, sys: Number(f[12]) * 10, children: (Number(f[13]) + Number(f[14])) * 10 };
};
const minus = (a, b) => ({ user: a.user - b.user, sys: a.sys - b.sys, children: a.children - b.children });

export async function benchRecord() {
  requireTool('ffmpeg', 'apt-get install ffmpeg');
  requireTool('redis-server', 'apt-get install redis-server');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-bench-record-'));
  const logs = { gateway: path.join(scratch, 'gateway.log'), worker: path.join(scratch, 'worker.log') };
  const stack = await startStack(scratch, logs);
  // The bench origin serves one flat folder: the stream's files go there under a name of their own.
  const name = `live-${process.pid}`;
  const liveDir = stack.filesDir;
  let live;
  let baseline;
  try {
    // BENCH_CPU_PROF=<dir>: the worker writes a V8 CPU profile there when it stops (where the loop's time goes).
    const worker = await stack.startWorker({
      WORKER_CONCURRENCY: '1',
      ...(process.env.BENCH_CPU_PROF
        ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_CPU_PROF}` }
        : {}),
    });
    live = spawn(
      'ffmpeg',
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-re',
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=640x360:rate=25',
        '-f',
        'lavfi',
        '-i',
        'sine=frequency=440:sample_rate=48000',
        '-t',
        String(SECONDS + 30 + (WARMUP_MS + IDLE_MS) / 1000),
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-g',
        '25',
        '-keyint_min',
        '25',
        '-sc_threshold',
        '0',
        '-pix_fmt',
        'yuv420p',
        '-c:a',
        'aac',
        '-b:a',
        '96k',
        '-f',
        'hls',
        '-hls_time',
        '1',
        '-hls_list_size',
        '6',
        '-hls_flags',
        'delete_segments',
        '-hls_segment_filename',
        path.join(liveDir, `${name}-%d.ts`),
        path.join(liveDir, `${name}.m3u8`),
      ],
      { stdio: 'ignore' },
    );
    const playlist = path.join(liveDir, `${name}.m3u8`);
    const deadline = Date.now() + 20_000;
    while (!(fs.existsSync(playlist) && (fs.readFileSync(playlist, 'utf8').match(/#EXTINF/g) ?? []).length >= 2)) {
      if (Date.now() > deadline) throw new Error('the live stream did not start');
      await sleep(100);
    }
    const url = stack.fileUrl(`${name}.m3u8`);
    const [item] = (await stack.api.extract(url)).media;
    if (!item?.is_live) throw new Error('the extract did not see a live stream');
    const workerPid = worker.child.pid;
    // The worker's own cost when idle (heartbeat, BullMQ's lock and stalled checks), for comparison.
    // Measured after a warm-up: the first seconds of a process still load modules and compile.
    const idleMs = IDLE_MS;
    await sleep(WARMUP_MS);
    const idleBefore = cpuTotal(workerPid);
    await sleep(idleMs);
    const idlePerMinute = (cpuTotal(workerPid) - idleBefore) / 1000 / (idleMs / 60_000);
    const cpuBefore = cpuTotal(workerPid);
    const splitBefore = cpuSplit(workerPid);
    const wallBefore = Date.now();
    const id = await stack.api.submit({ url: item.sources[0].url, live: { duration: SECONDS } });
    // The baseline, beside it: ffmpeg reading the same playlist, stream copy, for the same time.
    baseline = spawn(
      'ffmpeg',
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-i',
        url,
        '-c',
        'copy',
        '-t',
        String(SECONDS),
        '-f',
        'mpegts',
        '-y',
        path.join(scratch, 'baseline.ts'),
      ],
      { stdio: 'ignore' },
    );
    const baselineExit = new Promise((resolve) => baseline.once('exit', resolve));
    // Lag: when each segment is first listed, and when the recorder's state first counts it.
    const listedAt = new Map();
    const writtenAt = new Map();
    const state = path.join(stack.dataDir, 'recordings', id, 'state.json');
    const memory = [];
    let baselineCpu = 0;
    let lastSeq;
    let lastRss = 0;
    let job = await stack.api.job(id);
    while (job.status === 'queued' || job.status === 'processing') {
      const now = Date.now();
      try {
        for (const m of fs.readFileSync(playlist, 'utf8').matchAll(new RegExp(`^${name}-(\\d+)\\.ts$`, 'gm')))
          if (!listedAt.has(Number(m[1]))) listedAt.set(Number(m[1]), now);
      } catch {
        /* being rewritten */
      }
      try {
        const seq = JSON.parse(fs.readFileSync(state, 'utf8')).lastSeq;
        if (seq !== undefined && seq !== lastSeq) {
          for (let s = (lastSeq ?? seq - 1) + 1; s <= seq; s++) if (!writtenAt.has(s)) writtenAt.set(s, now);
          lastSeq = seq;
        }
      } catch {
        /* not yet, or being replaced */
      }
      try {
        baselineCpu = cpuTotal(baseline.pid); // its last reading before it exits
      } catch {
        /* it has exited */
      }
      if (now - lastRss >= 1_000) {
        memory.push(rss(workerPid));
        lastRss = now;
        job = await stack.api.job(id);
      }
      await sleep(20);
    }
    const cpuWorker = cpuTotal(workerPid) - cpuBefore;
    const split = minus(cpuSplit(workerPid), splitBefore);
    const wallMinutes = (Date.now() - wallBefore) / 60_000;
    if (job.status !== 'completed') throw new Error(`the recording ended ${job.status}: ${JSON.stringify(job.error)}`);
    await Promise.race([baselineExit, sleep(5_000)]);
    const lags = [...writtenAt]
      .filter(([seq]) => listedAt.has(seq))
      .map(([seq, at]) => Math.max(0, at - listedAt.get(seq)));
    const minutes = job.recording.seconds / 60;
    console.log(`\n## live recording (${SECONDS} s of a real-time live HLS stream, 1 s segments)`);
    console.log(
      `recorded ${fmt(job.recording.seconds)} s, ${fmt(job.recording.bytes / 1048576)} MiB, ${job.recording.gaps.length} gaps, ended ${job.ended}`,
    );
    console.log(
      `lag listed → in the recording: p50 ${fmt(percentile(lags, 50), 0)} ms, p99 ${fmt(percentile(lags, 99), 0)} ms over ${lags.length} segments (goal p99 ≤ ${TARGET_DURATION_MS} ms: ${percentile(lags, 99) <= TARGET_DURATION_MS ? 'met' : 'NOT met'})`,
    );
    const quarter = Math.max(1, Math.floor(memory.length / 4));
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(
      `worker RSS: first quarter ${fmt(mean(memory.slice(0, quarter)))} MiB, last quarter ${fmt(mean(memory.slice(-quarter)))} MiB, max ${fmt(Math.max(...memory))} MiB`,
    );
    const perMinute = cpuWorker / 1000 / minutes;
    const baselinePerMinute = baselineCpu / 1000 / (SECONDS / 60);
    const ratio = perMinute / baselinePerMinute;
    console.log(`worker CPU per minute while idle (no job, after warm-up): ${fmt(idlePerMinute, 2)} s`);
    console.log(
      `worker CPU while recording, per recorded minute: user ${fmt(split.user / 1000 / minutes, 2)} s, system ${fmt(split.sys / 1000 / minutes, 2)} s, children (ffprobe, the final ffmpeg) ${fmt(split.children / 1000 / minutes, 2)} s`,
    );
    const marginal = (cpuWorker / 1000 - idlePerMinute * wallMinutes) / minutes;
    const baselineMinute = baselineCpu / 1000 / (SECONDS / 60);
    const loop = marginal - split.children / 1000 / minutes;
    console.log(
      `CPU per recorded minute above the idle worker's: ${fmt(marginal, 2)} s (${fmt(marginal / baselineMinute, 2)}× ffmpeg), of which the recording loop's own (not the final ffmpeg) ${fmt(loop, 2)} s (${fmt(loop / baselineMinute, 2)}×)`,
    );
    console.log(
      `CPU per recorded minute: worker ${fmt(perMinute, 2)} s, ffmpeg -c copy beside it ${fmt(baselinePerMinute, 2)} s, ratio worker/ffmpeg ${fmt(ratio, 2)}× (goal ≤ 1.5×: ${ratio <= 1.5 ? 'met' : 'NOT met'})`,
    );
  } catch (err) {
    dumpLogs(logs);
    throw err;
  } finally {
    live?.kill('SIGKILL');
    if (baseline) await stopChild(baseline, 2_000);
    await stack.stop();
    for (const file of fs.readdirSync(liveDir))
      if (file.startsWith(`${name}`)) fs.rmSync(path.join(liveDir, file), { force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRecord();
