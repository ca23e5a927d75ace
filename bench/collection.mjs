// Benchmark: a collection download (DESIGN.md "Collections") against yt-dlp fetching the same files.
// A podcast feed of BENCH_COLLECTION_FILES (12) audio files of ~3.5 MB each on the slow origin
// (bench/slow-origin.mjs: 40 ms before each answer, 2 MB/s per connection); rounds alternate:
// reelay (POST collection_url with the default settings → the parent completed) and
// `yt-dlp` given the same 12 file URLs. Targets (issue 22): reelay ≤ 0.4× yt-dlp; the parent's own
// overhead < 5 %, as the issue defines it: POST → last child done, minus the time some child was
// processing, over POST → last child done. The bundle's ZIP, written after the last child, is in
// the ratio's time and printed on its own (with it, the share of the wall no child covered).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dumpLogs, jobRef, makeOnce, percentile, run, sleep, startStack } from './jobs.mjs';
import { fmt, formatLoad, requireTool, startSlowOrigin } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_COLLECTION_ROUNDS ?? 3);
const FILES = Number(process.env.BENCH_COLLECTION_FILES ?? 12);
const SECONDS = Number(process.env.BENCH_COLLECTION_SECONDS ?? 220); // 128 kbit/s: ~3.5 MB
const TARGETS = { ratio: 0.4, overhead: 0.05 };
const median = (xs) => percentile(xs, 50);
/** Where each child's stage times go, one JSON line per child (optional; the summary is printed). */
const PROFILE_FILE = process.env.BENCH_COLLECTION_PROFILE;

/**
 * Where a round's time went, per child (ms from the POST): created (the flow written), picked up (a
 * worker took it), first byte (its proxy moved one), done; with the worker's phases of that job
 * (its 'job output stored' log line) and the parent's own end.
 */
function profileRound(round, t0, parent, views, workerLog) {
  const logged = new Map();
  for (const line of workerLog.split('\n')) {
    if (!line.includes('job output stored')) continue;
    try {
      const entry = JSON.parse(line);
      logged.set(entry.job, entry); // the job's reference (jobRef), never its id
    } catch {
      // a partial line at the end of the file
    }
  }
  const at = (iso) => Date.parse(iso) - t0;
  const lines = views.map((j) => {
    const log = logged.get(jobRef(j.id)) ?? {};
    const picked = at(j.started_at);
    return {
      round,
      id: j.id,
      created: at(j.created_at),
      picked,
      first_byte: log.first_byte_ms !== undefined ? picked + log.first_byte_ms : undefined,
      done: at(j.finished_at),
      phases: log.phases_ms,
      bytes: log.bytes_fetched,
    };
  });
  const med = (f) => fmt(median(lines.map(f).filter((x) => Number.isFinite(x))), 0);
  const lastDone = Math.max(...lines.map((l) => l.done));
  // The most children running at once: what the worker's concurrency let through.
  const events = lines
    .flatMap((l) => [
      [l.picked, 1],
      [l.done, -1],
    ])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let running = 0;
  let most = 0;
  for (const [, d] of events) most = Math.max(most, (running += d));
  const summary = [
    `  round ${round + 1}: POST → children created ${med((l) => l.created)} ms; per child (median): queued ${med((l) => l.picked - l.created)} ms,`,
    `picked up → first byte ${med((l) => l.first_byte - l.picked)} ms, first byte → done ${med((l) => l.done - l.first_byte)} ms`,
    `(whole-file fetch ${med((l) => l.phases?.fetch)}, probe ${med((l) => l.phases?.probe)}, ffmpeg ${med((l) => l.phases?.ffmpeg)}, verify ${med((l) => l.phases?.verify)}, store ${med((l) => l.phases?.store)} ms);`,
    `at most ${most} running at once; last child done → parent completed ${fmt(at(parent.finished_at) - lastDone, 0)} ms`,
  ].join(' ');
  return { summary, lines };
}

/** Union length of [start, end] intervals (ms). */
function covered(intervals) {
  let total = 0;
  let until = -Infinity;
  for (const [s, e] of [...intervals].sort((a, b) => a[0] - b[0])) {
    if (e <= until) continue;
    total += e - Math.max(s, until);
    until = e;
  }
  return total;
}

async function json(base, route, init) {
  const res = await fetch(`${base}${route}`, init);
  const body = await res.json();
  if (!body.success) throw new Error(`${route}: ${JSON.stringify(body.error)}`);
  return body.data;
}

export async function benchCollection() {
  for (const [tool, hint] of [
    ['ffmpeg', 'apt-get install ffmpeg'],
    ['redis-server', 'apt-get install redis-server'],
    ['yt-dlp', 'apt-get install yt-dlp'],
  ])
    requireTool(tool, hint);
  const loadStart = os.loadavg();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-bench-coll-'));
  const logs = { gateway: path.join(scratch, 'gateway.log'), worker: path.join(scratch, 'worker.log') };
  const times = { reelay: [], ytdlp: [], overhead: [], withBundle: [], bundle: [] };
  let stack;
  let slow;
  try {
    stack = await startStack(scratch, logs);
    const dir = path.join(stack.filesDir, `feed-${FILES}-${SECONDS}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.chmodSync(dir, 0o755);
    const one = path.join(dir, 'ep.m4a');
    await makeOnce(one, [
      '-f',
      'lavfi',
      '-i',
      `anoisesrc=d=${SECONDS}:c=pink:r=44100`,
      '-c:a',
      'aac',
      '-b:a',
      '128k',
      '-f',
      'mp4',
    ]);
    for (let i = 1; i <= FILES; i++)
      if (!fs.existsSync(path.join(dir, `ep${i}.m4a`))) fs.copyFileSync(one, path.join(dir, `ep${i}.m4a`));
    slow = await startSlowOrigin(stack.filesDir);
    const url = (name) => `http://127.0.0.1:${slow.port}/${path.basename(dir)}/${name}`;
    // A feed of its own each round, its files named with the round (a query the origin ignores): no
    // round reuses the last round's jobs, nor its files (the worker copies an identical request's
    // living file instead of fetching it again, apps/worker/src/reuse.ts).
    const feedOf = (round) => {
      const items = Array.from(
        { length: FILES },
        (_, i) =>
          `<item><title>Episode ${i + 1}</title><guid isPermaLink="false">ep-${i + 1}</guid><enclosure url="${url(`ep${i + 1}.m4a`)}?round=${round}" type="audio/mp4"/></item>`,
      );
      const name = `feed-${round}.html`;
      fs.writeFileSync(
        path.join(dir, name),
        `<?xml version="1.0"?><rss version="2.0"><channel><title>Bench feed</title>${items.join('')}</channel></rss>`,
      );
      fs.chmodSync(path.join(dir, name), 0o644);
      return url(name);
    };
    await stack.startWorker({ LOG_LEVEL: 'info' });
    const size = fs.statSync(one).size;
    console.log(`\n## collection download (${FILES} files of ${fmt(size / 1e6, 1)} MB, ${ROUNDS} rounds)`);
    console.log(slow.params);
    const ytdlpDir = path.join(scratch, 'ytdlp');
    for (let round = 0; round < ROUNDS; round++) {
      fs.rmSync(ytdlpDir, { recursive: true, force: true });
      fs.mkdirSync(ytdlpDir);
      const y = await run(
        'yt-dlp',
        [
          '--no-config',
          '--no-cache-dir',
          '--quiet',
          '--no-progress',
          '--no-part',
          '-o',
          path.join(ytdlpDir, '%(title)s-%(autonumber)s.%(ext)s'),
          ...Array.from({ length: FILES }, (_, i) => url(`ep${i + 1}.m4a`)),
        ],
        { timeoutMs: 900_000 },
      );
      times.ytdlp.push(y.ms);
      const feed = feedOf(round);
      const t0 = Date.now();
      const started = await json(stack.base, '/api/v1/download', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ collection_url: feed }),
      });
      let parent;
      for (;;) {
        parent = await json(stack.base, `/api/v1/jobs/${started.job_id}`);
        if (['completed', 'failed', 'cancelled'].includes(parent.status)) break;
        await sleep(50);
      }
      const wall = Date.now() - t0;
      if (parent.status !== 'completed' || parent.entries.completed !== FILES)
        throw new Error(`the collection ended ${parent.status}: ${JSON.stringify(parent.entries)}`);
      const children = (await json(stack.base, `/api/v1/jobs/${started.job_id}/children`)).children;
      const views = await Promise.all(children.map((c) => json(stack.base, `/api/v1/jobs/${c.job_id}`)));
      const spans = views.map((j) => [Date.parse(j.started_at), Date.parse(j.finished_at)]);
      times.reelay.push(wall);
      const lastDone = Math.max(...spans.map(([, end]) => end)) - t0;
      times.overhead.push((lastDone - covered(spans)) / lastDone);
      times.withBundle.push((wall - covered(spans)) / wall);
      times.bundle.push(wall - lastDone);
      const profile = profileRound(round, t0, parent, views, fs.readFileSync(logs.worker, 'utf8'));
      console.log(profile.summary);
      if (PROFILE_FILE) fs.appendFileSync(PROFILE_FILE, profile.lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    }
    const ratio = median(times.reelay) / median(times.ytdlp);
    const overhead = median(times.overhead);
    console.log(
      `yt-dlp, ${FILES} URLs one by one: median ${fmt(median(times.ytdlp) / 1000, 2)} s (${times.ytdlp.map((t) => fmt(t / 1000, 2)).join(', ')})`,
    );
    console.log(
      `reelay collection (POST → parent completed): median ${fmt(median(times.reelay) / 1000, 2)} s (${times.reelay.map((t) => fmt(t / 1000, 2)).join(', ')})`,
    );
    console.log(
      `ratio collection/yt-dlp: ${fmt(ratio, 2)} (target ≤ ${TARGETS.ratio}: ${ratio <= TARGETS.ratio ? 'met' : 'NOT met'})`,
    );
    console.log(
      `parent overhead (POST → last child done, not covered by a child's processing): ${fmt(overhead * 100, 1)} % (${times.overhead.map((o) => fmt(o * 100, 1)).join(', ')}) (target < ${TARGETS.overhead * 100} %: ${overhead < TARGETS.overhead ? 'met' : 'NOT met'})`,
    );
    console.log(
      `… after the last child, the parent's end with its ZIP bundle: median ${fmt(median(times.bundle), 0)} ms; the wall to the parent's end not covered by a child: ${fmt(median(times.withBundle) * 100, 1)} %`,
    );
    console.log(`load average before / after: ${formatLoad(loadStart)} → ${formatLoad(os.loadavg())}`);
  } catch (err) {
    dumpLogs(logs);
    throw err;
  } finally {
    if (slow?.child) slow.child.kill();
    await stack?.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchCollection();
