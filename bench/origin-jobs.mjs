// Benchmark: jobs against a realistic origin (bench/slow-origin.mjs: a delay before each response, a
// throughput limit per connection), where fetching one piece at a time is what costs, side by side
// with the tools people use instead, rounds alternated, medians:
// 1. HLS remux of 150 × 2 s segments: the job (created → finished) vs bare ffmpeg on the same
//    playlist vs `yt-dlp --concurrent-fragments 8` (its native HLS downloader, then its ffmpeg fix-up
//    into mp4). Targets (issue 27): job ≤ 0.30× bare ffmpeg and ≤ 0.75× yt-dlp (issue 19's: 0.35, 1.0).
// 2. Merge of a ~40 MB video-only + audio-only pair: the job vs bare ffmpeg vs `aria2c -x 8 -s 8`
//    (both files at once, 8 connections each) followed by ffmpeg's copy of the local files. Targets:
//    job ≤ 0.4× bare ffmpeg and (issue 27) ≤ 1.0× aria2 (issue 19's: 1.1).
// The job fetches in parallel (JOB_FETCH_CONCURRENCY, default 8): its proxy serves HLS segments
// ahead of ffmpeg and splits the large video file into Range parts; each target is printed met or
// NOT met.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Api, dumpLogs, makeOnce, percentile, run, startStack, stopChild } from './jobs.mjs';
import { fmt, formatLoad, requireTool, sampleRss, startSlowOrigin } from './lib.mjs';
import { timedJob } from './short-merge.mjs';

const ROUNDS = Number(process.env.BENCH_ORIGIN_ROUNDS ?? 3);
const SEGMENTS = Number(process.env.BENCH_HLS_SEGMENTS ?? 150);
const PAIR_SECONDS = Number(process.env.BENCH_PAIR_SECONDS ?? 120);
const TARGETS = { hlsBare: 0.3, hlsYtdlp: 0.75, pairBare: 0.4, pairAria: 1.0 };
const median = (xs) => percentile(xs, 50);
const MB = 1e6;

/** 360p H.264 + AAC in 2 s MPEG-TS segments, a keyframe at each segment start, ~0.8 Mbit/s. */
async function makeHls(filesDir) {
  const name = `hls-${SEGMENTS}`;
  const dir = path.join(filesDir, name);
  if (!fs.existsSync(path.join(dir, 'index.m3u8'))) {
    const part = `${dir}.${process.pid}.part`;
    fs.mkdirSync(part, { recursive: true });
    await run(
      'ffmpeg',
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-y',
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=640x360:rate=30',
        '-f',
        'lavfi',
        '-i',
        'sine=frequency=440:sample_rate=48000',
        '-t',
        String(SEGMENTS * 2),
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-b:v',
        '700k',
        '-maxrate',
        '700k',
        '-bufsize',
        '1400k',
        '-g',
        '60',
        '-keyint_min',
        '60',
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
        '2',
        '-hls_playlist_type',
        'vod',
        '-hls_segment_filename',
        path.join(part, 'seg%03d.ts'),
        path.join(part, 'index.m3u8'),
      ],
      { timeoutMs: 900_000 },
    );
    fs.chmodSync(part, 0o755);
    fs.renameSync(part, dir);
  }
  const bytes = fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
  return { route: `${name}/index.m3u8`, bytes };
}

/** A 720p video-only MP4 at a constant ~2.5 Mbit/s and a 192 kbit/s AAC M4A: ~40 MB for 120 s. */
async function makePair(filesDir) {
  const video = `pair-${PAIR_SECONDS}-video.mp4`;
  const audio = `pair-${PAIR_SECONDS}-audio.m4a`;
  await makeOnce(path.join(filesDir, video), [
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=1280x720:rate=30',
    '-t',
    String(PAIR_SECONDS),
    '-an',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-b:v',
    '2500k',
    '-minrate',
    '2500k',
    '-maxrate',
    '2500k',
    '-bufsize',
    '5000k',
    '-x264-params',
    'nal-hrd=cbr',
    '-pix_fmt',
    'yuv420p',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
  ]);
  await makeOnce(path.join(filesDir, audio), [
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:sample_rate=48000:duration=${PAIR_SECONDS}`,
    '-vn',
    '-c:a',
    'aac',
    '-b:a',
    '192k',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
  ]);
  const page = `pair-${PAIR_SECONDS}.html`;
  fs.writeFileSync(
    path.join(filesDir, page),
    `<!doctype html>\n<html><head><meta charset="utf-8"><title>Pair</title></head><body>\n<video controls width="1280" height="720">\n  <source src="${video}" type='video/mp4; codecs="avc1.64001f"'>\n  <source src="${audio}" type='audio/mp4; codecs="mp4a.40.2"'>\n</video>\n</body></html>\n`,
  );
  for (const f of [video, audio, page]) fs.chmodSync(path.join(filesDir, f), 0o644);
  return { page, bytes: fs.statSync(path.join(filesDir, video)).size + fs.statSync(path.join(filesDir, audio)).size };
}

/** The same command the worker builds for the operation (buildArgs), run bare on the same URLs. */
async function bareCommand(operation, output) {
  const { buildArgs } = await import('../packages/media/dist/index.js');
  const { args } = buildArgs(operation, { output });
  return () => run('ffmpeg', args, { timeoutMs: 600_000 });
}

/** The environment of a baseline tool: no proxy, so it talks to the loopback origin directly. */
function directEnv() {
  const env = { ...process.env };
  for (const k of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY']) delete env[k];
  return env;
}

export async function benchOriginJobs() {
  for (const [tool, hint] of [
    ['ffmpeg', 'apt-get install ffmpeg'],
    ['redis-server', 'apt-get install redis-server'],
    ['yt-dlp', 'apt-get install yt-dlp'],
    ['aria2c', 'apt-get install aria2'],
  ])
    requireTool(tool, hint);
  const loadStart = os.loadavg();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-bench-origin-'));
  const logs = { gateway: path.join(scratch, 'gateway.log'), worker: path.join(scratch, 'worker.log') };
  const hls = { bare: [], ytdlp: [], jobs: [] };
  const pair = { bare: [], aria: [], ariaDownload: [], jobs: [] };
  let stack;
  let slow;
  let rss;
  let media;
  const t0 = Date.now();
  try {
    stack = await startStack(scratch, logs);
    media = { hls: await makeHls(stack.filesDir), pair: await makePair(stack.filesDir) };
    slow = await startSlowOrigin(stack.filesDir);
    const url = (route) => `http://127.0.0.1:${slow.port}/${route}`;
    const worker = await stack.startWorker({ LOG_LEVEL: 'info' });
    const api = new Api(stack.base);
    const sampler = sampleRss(worker.child.pid);
    const job = (body) => timedJob(api, body, logs.worker);
    const env = directEnv();

    // 1. HLS remux.
    const hlsSource = (await api.extract(url(media.hls.route))).media
      .flatMap((m) => m.sources)
      .find((s) => s.stream_profile === 'hls');
    if (!hlsSource) throw new Error('the playlist gave no hls source');
    const hlsBare = await bareCommand(
      { type: 'remux', manifest: 'hls', container: 'mp4', audioCodec: 'mp4a.40.2', input: { url: hlsSource.url } },
      path.join(scratch, 'bare-hls.mp4'),
    );
    const ytdlpOut = path.join(scratch, 'ytdlp-hls.mp4');
    const ytdlp = async () => {
      fs.rmSync(ytdlpOut, { force: true });
      const done = await run(
        'yt-dlp',
        [
          '--no-config',
          '--no-cache-dir',
          '--quiet',
          '--no-progress',
          '--no-part',
          '--force-overwrites',
          '--concurrent-fragments',
          '8',
          '-o',
          ytdlpOut,
          hlsSource.url,
        ],
        { timeoutMs: 600_000, env },
      );
      if (!(fs.statSync(ytdlpOut, { throwIfNoEntry: false })?.size > 0))
        throw new Error('yt-dlp exited 0 without its output');
      return done;
    };
    for (let i = 0; i < ROUNDS; i++) {
      hls.bare.push((await hlsBare()).ms);
      hls.ytdlp.push((await ytdlp()).ms);
      hls.jobs.push(await job({ url: hlsSource.url, filename: `hls-${i}` }));
    }

    // 2. The ~40 MB pair.
    const sources = (await api.extract(url(media.pair.page))).media.flatMap((m) => m.sources);
    const video = sources.find((s) => s.stream_profile === 'video_only');
    const audio = sources.find((s) => s.stream_profile === 'audio_only');
    const pairBare = await bareCommand(
      { type: 'merge', container: 'mp4', videoInput: { url: video.url }, audioInput: { url: audio.url } },
      path.join(scratch, 'bare-pair.mp4'),
    );
    const ariaDir = path.join(scratch, 'aria');
    const localMerge = () =>
      run(
        'ffmpeg',
        [
          '-hide_banner',
          '-loglevel',
          'error',
          '-y',
          '-i',
          path.join(ariaDir, 'v'),
          '-i',
          path.join(ariaDir, 'a'),
          '-map',
          '0:v:0',
          '-map',
          '1:a:0',
          '-c',
          'copy',
          '-movflags',
          '+faststart',
          path.join(scratch, 'aria-pair.mp4'),
        ],
        { timeoutMs: 600_000 },
      );
    const aria = async () => {
      fs.rmSync(ariaDir, { recursive: true, force: true });
      fs.mkdirSync(ariaDir);
      const list = path.join(scratch, 'aria.txt');
      fs.writeFileSync(list, `${video.url}\n  out=v\n${audio.url}\n  out=a\n`);
      // -k 1M: aria2's default least piece (20 MiB) would split a 40 MB file in two, not eight.
      const download = await run(
        'aria2c',
        [
          '-q',
          '-x',
          '8',
          '-s',
          '8',
          '-k',
          '1M',
          '-j',
          '2',
          '--allow-overwrite=true',
          '--auto-file-renaming=false',
          '-d',
          ariaDir,
          '-i',
          list,
        ],
        { timeoutMs: 600_000, env },
      );
      const merge = await localMerge();
      return { download: download.ms, total: download.ms + merge.ms };
    };
    for (let i = 0; i < ROUNDS; i++) {
      pair.bare.push((await pairBare()).ms);
      const a = await aria();
      pair.aria.push(a.total);
      pair.ariaDownload.push(a.download);
      pair.jobs.push(await job({ video_url: video.url, audio_url: audio.url, filename: `pair-${i}` }));
    }
    rss = sampler.stop();
  } catch (err) {
    dumpLogs(logs);
    throw err;
  } finally {
    await stopChild(slow?.child);
    await stack?.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }

  const verdict = (ratio, target) => `${fmt(ratio, 2)}× (target ≤ ${target}×: ${ratio <= target ? 'met' : 'NOT met'})`;
  const row = (name, xs) => console.log(`| ${name} | ${fmt(median(xs), 0)} | ${xs.map((x) => fmt(x, 0)).join(', ')} |`);
  const steps = (jobs) => {
    for (const step of Object.keys(jobs[0].steps))
      row(
        `… ${step}`,
        jobs.map((j) => j.steps[step]),
      );
    row(
      "the proxy: ffmpeg's requests",
      jobs.map((j) => j.requests),
    );
    row(
      'the proxy: Range parts fetched beside them',
      jobs.map((j) => j.rangeParts),
    );
    row(
      "client: POST → first event on the job's event stream",
      jobs.map((j) => j.firstEvent),
    );
    row(
      'client: POST → first event with a status other than queued',
      jobs.map((j) => j.firstChange),
    );
  };
  console.log(
    `\n## jobs against a realistic origin (${slow.params}; one worker; ${ROUNDS} rounds alternated, medians; ${os.availableParallelism()} cores; load average 1/5/15 min at start ${formatLoad(loadStart)}, at end ${formatLoad(os.loadavg())})\n`,
  );

  console.log(
    `### HLS remux: ${SEGMENTS} × 2 s segments, 360p H.264 + AAC, ${fmt(media.hls.bytes / MB, 1)} MB, into mp4 (${slow.params})\n`,
  );
  console.log('| path | median ms | runs ms |');
  console.log('|---|---|---|');
  row('**bare ffmpeg** on the playlist (the command the worker builds)', hls.bare);
  row("**yt-dlp --concurrent-fragments 8** (Debian's yt-dlp, then its ffmpeg fix-up into mp4)", hls.ytdlp);
  row(
    '**job created → finished**',
    hls.jobs.map((j) => j.total),
  );
  steps(hls.jobs);
  const hlsJob = median(hls.jobs.map((j) => j.total));
  console.log(`\nratio HLS job/bare ffmpeg: ${verdict(hlsJob / median(hls.bare), TARGETS.hlsBare)}`);
  console.log(`ratio HLS job/yt-dlp: ${verdict(hlsJob / median(hls.ytdlp), TARGETS.hlsYtdlp)}`);

  console.log(
    `\n### merge of a ${fmt(media.pair.bytes / MB, 1)} MB pair: ${PAIR_SECONDS} s 720p H.264 video-only + AAC audio-only, stream copy (${slow.params})\n`,
  );
  console.log('| path | median ms | runs ms |');
  console.log('|---|---|---|');
  row('**bare ffmpeg** on both URLs (the command the worker builds)', pair.bare);
  row('**aria2c -x 8 -s 8 -k 1M**, both files at once, then ffmpeg on the local files', pair.aria);
  row("… of which aria2c's download", pair.ariaDownload);
  row(
    '**job created → finished**',
    pair.jobs.map((j) => j.total),
  );
  steps(pair.jobs);
  const pairJob = median(pair.jobs.map((j) => j.total));
  console.log(`\nratio pair job/bare ffmpeg: ${verdict(pairJob / median(pair.bare), TARGETS.pairBare)}`);
  console.log(`ratio pair job/aria2: ${verdict(pairJob / median(pair.aria), TARGETS.pairAria)}`);
  console.log(`worker RSS over these jobs: ${fmt(rss.start, 0)} MB at start, ${fmt(rss.max, 0)} MB peak`);
  console.log(
    `(realistic-origin benchmark took ${fmt((Date.now() - t0) / 1000, 0)} s; inputs cached in ${stack.filesDir})`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchOriginJobs();
