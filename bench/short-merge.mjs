// Benchmark: the common case of a social video, a short merge (a 720p H.264 video-only MP4 and its
// AAC audio-only M4A, stream copy, +faststart) from an origin on loopback, through the whole service,
// against the same ffmpeg command run bare, rounds alternated, medians. Two pairs: 30 s (28 MB) and
// 52 s (49 MB, issue 27's case), each round with fresh media URLs (a new query string, as a new
// extract would give). Beside it, where the job's time goes: the queue's pick-up, the worker's steps
// (from its "job output stored" log line: folder, ffmpeg split by the proxy's first and last byte to
// it, the check of the file, the store's write, the last progress write), BullMQ's completion (the
// job record), the gateway's answers, the proxy's requests and Range parts; and the worker's RSS.
// Target (issue 27): job created → finished ≤ 1.3× bare ffmpeg (issue 19's was 1.5×).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Api, dumpLogs, makeOnce, percentile, run, sleep, startStack, workerLines } from './jobs.mjs';
import { fmt, formatLoad, requireTool, sampleRss } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_SHORT_ROUNDS ?? 7);
/** Pair lengths in seconds: 30 s is 28 MB, 52 s 49 MB. */
const PAIRS = (process.env.BENCH_SHORT_SECONDS ?? '30,52').split(',').map(Number);
const TARGET = 1.3;
const median = (xs) => percentile(xs, 50);

async function makePair(dir, seconds) {
  const video = `short-${seconds}-video.mp4`;
  const audio = `short-${seconds}-audio.m4a`;
  await makeOnce(path.join(dir, video), [
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=1280x720:rate=30',
    '-t',
    String(seconds),
    '-an',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
  ]);
  await makeOnce(path.join(dir, audio), [
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:sample_rate=48000:duration=${seconds}`,
    '-vn',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
  ]);
  for (const name of [video, audio]) fs.chmodSync(path.join(dir, name), 0o644);
  /**
   * A page naming the pair under fresh URLs (a query string of its own): each round extracts its own
   * page, as a client with a new link would, so nothing kept per URL makes a round cheaper.
   */
  const page = (round) => {
    const name = `short-${seconds}-${process.pid}-${round}.html`;
    const q = `?round=${round}-${Date.now()}`;
    fs.writeFileSync(
      path.join(dir, name),
      `<!doctype html>\n<html><head><meta charset="utf-8"><title>Short clip</title></head><body>\n<video controls width="1280" height="720">\n  <source src="${video}${q}" type='video/mp4; codecs="avc1.64001f"'>\n  <source src="${audio}${q}" type='audio/mp4; codecs="mp4a.40.2"'>\n</video>\n</body></html>\n`,
    );
    fs.chmodSync(path.join(dir, name), 0o644);
    return name;
  };
  return { page, bytes: fs.statSync(path.join(dir, video)).size + fs.statSync(path.join(dir, audio)).size };
}

/**
 * The job's event stream (GET /api/v1/jobs/{id}/events) read until its terminal event: when the
 * first event (the current state) arrived, when one first showed a status other than queued, and the
 * terminal job. A tiny SSE reader: the stream's `data:` lines are the Job as GET answers it.
 */
async function followEvents(base, id, sent) {
  const res = await fetch(`${base}/api/v1/jobs/${id}/events`);
  if (res.status !== 200) throw new Error(`events of job ${id}: HTTP ${res.status}`);
  let firstEvent;
  let firstChange;
  let buffered = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    buffered += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (!data) continue; // a comment (keep-alive) or the retry: line
      const job = JSON.parse(data);
      firstEvent ??= performance.now() - sent;
      if (firstChange === undefined && job.status !== 'queued') firstChange = performance.now() - sent;
      if (['completed', 'failed', 'expired'].includes(job.status)) return { job, firstEvent, firstChange };
    }
  }
  throw new Error(`the event stream of job ${id} ended without a terminal event`);
}

/**
 * One job: POST, then its event stream until it ends; the job record's times and the worker's log
 * line say where its time went.
 */
export async function timedJob(api, body, logFile) {
  const sent = performance.now();
  const id = await api.submit(body);
  const accepted = performance.now() - sent;
  const { job, firstEvent, firstChange } = await followEvents(api.base, id, sent);
  if (job.status !== 'completed') throw new Error(`job ${id} ${job.status}: ${JSON.stringify(job.error)}`);
  const seen = performance.now() - sent;
  const created = Date.parse(job.created_at);
  const started = Date.parse(job.started_at);
  const finished = Date.parse(job.finished_at);
  await sleep(50); // the log line is written before the job completes; let the file catch up
  const w = workerLines(logFile, id);
  // Without them the breakdown means nothing: the smoke run fails instead of printing n/a.
  if (!w.phases) throw new Error(`the worker logged no phases_ms for job ${id} (is its LOG_LEVEL info?)`);
  const p = w.phases;
  return {
    total: finished - created,
    accepted,
    firstEvent,
    firstChange,
    seen,
    requests: w.requests,
    rangeParts: w.rangeParts,
    steps: {
      'queue pick-up (created → started)': started - created,
      'worker: started → processor': w.started - started,
      'processor: plan and job folder': p.prepare,
      'processor: ffmpeg (through the egress proxy)': p.ffmpeg,
      '… ffmpeg: start → first byte from the proxy (process start, inputs opened)': p.ffmpeg_to_first_byte,
      '… ffmpeg: first → last byte from the proxy (the transfer)': p.ffmpeg_transfer,
      '… ffmpeg: last byte → exit (index written, moved to the front by +faststart)': p.ffmpeg_after_last_byte,
      'processor: check of the file': p.verify,
      "processor: the store's write": p.store,
      'processor: last progress write': p.progress,
      'completion: stored → finished (BullMQ, the job record)': finished - w.stored,
    },
  };
}

export async function benchShortMerge() {
  requireTool('ffmpeg', 'apt-get install ffmpeg');
  requireTool('redis-server', 'apt-get install redis-server');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-bench-short-'));
  const logs = { gateway: path.join(scratch, 'gateway.log'), worker: path.join(scratch, 'worker.log') };
  const ratios = {};
  let stack;
  try {
    stack = await startStack(scratch, logs);
    const worker = await stack.startWorker({ LOG_LEVEL: 'info' });
    const api = new Api(stack.base);
    const { judgeOutput, moovBeforeMdat, probe, verifyOutput } = await import('../packages/media/dist/index.js');
    for (const seconds of PAIRS) {
      const loadStart = os.loadavg();
      const pair = await makePair(stack.filesDir, seconds);
      const results = await benchPair({
        stack,
        api,
        worker,
        scratch,
        logs,
        seconds,
        pair,
        media: { judgeOutput, moovBeforeMdat, probe, verifyOutput },
      });
      ratios[seconds] = report(results, { seconds, bytes: pair.bytes, origin: stack.origin.kind, loadStart });
    }
  } catch (err) {
    dumpLogs(logs);
    throw err;
  } finally {
    await stack?.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return { ratio: Math.max(...Object.values(ratios)), ratios };
}

/** The rounds of one pair: bare ffmpeg and a job alternated, each round on fresh URLs. */
async function benchPair({ stack, api, worker, scratch, logs, seconds, pair, media }) {
  const results = { bare: [], jobs: [], checkInProcess: [], checkFfprobe: [] };
  const pages = [];
  /** A fresh page's pair (its own extract, not timed). */
  const fresh = async (round) => {
    const name = pair.page(round);
    pages.push(path.join(stack.filesDir, name));
    const sources = (await api.extract(stack.fileUrl(name))).media.flatMap((m) => m.sources);
    return {
      video: sources.find((s) => s.stream_profile === 'video_only').url,
      audio: sources.find((s) => s.stream_profile === 'audio_only').url,
    };
  };
  const bareOut = path.join(scratch, 'bare.mp4');
  const bare = (urls) =>
    run('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-i',
      urls.video,
      '-i',
      urls.audio,
      '-map',
      '0:v:0',
      '-map',
      '1:a:0',
      '-c',
      'copy',
      '-movflags',
      '+faststart',
      bareOut,
    ]);
  const job = (urls, n) =>
    timedJob(api, { video_url: urls.video, audio_url: urls.audio, filename: `short-${seconds}-${n}` }, logs.worker);
  // The file's check both ways on the bare output, in this process, under the same load: the
  // worker's (in-process for an mp4) and the ffprobe check it replaced.
  const expected = { video: true, audio: true, faststart: true, durationSeconds: seconds };
  const timed = async (fn) => {
    const t = performance.now();
    const problems = await fn();
    if (problems.length > 0) throw new Error(`the bare output failed its check: ${problems.join('; ')}`);
    return performance.now() - t;
  };
  const checks = {
    inProcess: () => timed(() => media.verifyOutput(bareOut, expected)),
    ffprobe: () =>
      timed(async () => media.judgeOutput(await media.probe(bareOut), expected, await media.moovBeforeMdat(bareOut))),
  };
  try {
    const warm = await fresh('warm');
    await bare(warm);
    await job(warm, 'warm');
    await checks.inProcess();
    await checks.ffprobe();
    const sampler = sampleRss(worker.child.pid);
    for (let i = 0; i < ROUNDS; i++) {
      const urls = await fresh(i);
      results.bare.push((await bare(urls)).ms);
      results.jobs.push(await job(urls, i));
      results.checkInProcess.push(await checks.inProcess());
      results.checkFfprobe.push(await checks.ffprobe());
    }
    results.rss = sampler.stop();
    return results;
  } finally {
    for (const file of pages) fs.rmSync(file, { force: true });
  }
}

function report(results, { seconds, bytes, origin, loadStart }) {
  console.log(
    `\n## short merge (${seconds} s 720p pair, ${fmt(bytes / 1e6, 1)} MB, origin: ${origin} on loopback, no delay or rate limit, fresh URLs each round; one worker; ${ROUNDS} rounds alternated, medians; load average 1/5/15 min at start ${formatLoad(loadStart)}, at end ${formatLoad(os.loadavg())})\n`,
  );
  const bareMs = median(results.bare);
  const totalMs = median(results.jobs.map((j) => j.total));
  console.log('| path | median ms | runs ms |');
  console.log('|---|---|---|');
  const row = (name, xs) => console.log(`| ${name} | ${fmt(median(xs), 0)} | ${xs.map((x) => fmt(x, 0)).join(', ')} |`);
  row('**bare ffmpeg**, same URLs (baseline)', results.bare);
  row(
    '**job created → finished**',
    results.jobs.map((j) => j.total),
  );
  for (const step of Object.keys(results.jobs[0].steps))
    row(
      `… ${step}`,
      results.jobs.map((j) => j.steps[step]),
    );
  row(
    "the proxy: ffmpeg's requests",
    results.jobs.map((j) => j.requests),
  );
  row(
    'the proxy: Range parts fetched beside them',
    results.jobs.map((j) => j.rangeParts),
  );
  row(
    'client: POST → 202',
    results.jobs.map((j) => j.accepted),
  );
  row(
    "client: POST → first event on the job's event stream (its current state)",
    results.jobs.map((j) => j.firstEvent),
  );
  row(
    'client: POST → first event with a status other than queued',
    results.jobs.map((j) => j.firstChange),
  );
  row(
    'client: POST → terminal event seen',
    results.jobs.map((j) => j.seen),
  );
  row(
    "the file's check on the bare output, in the bench process: in-process (the worker's for mp4/m4a)",
    results.checkInProcess,
  );
  row('… the same check by ffprobe (what the worker ran before)', results.checkFfprobe);
  const ratio = totalMs / bareMs;
  console.log(
    `\nratio short merge job/bare ffmpeg (${seconds} s pair): ${fmt(ratio, 2)}× (target ≤ ${TARGET}×: ${ratio <= TARGET ? 'met' : 'NOT met'})`,
  );
  console.log(
    `worker RSS during the rounds: ${fmt(results.rss.start, 0)} MB at start, ${fmt(results.rss.max, 0)} MB peak`,
  );
  return ratio;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchShortMerge();
