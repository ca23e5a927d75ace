// Benchmark (issue 18): how exact clips are, per mode (fast, precise) and input kind (a progressive
// MP4, a merge pair, HLS, DASH), through the whole service. The source's video paints its frame number
// in binary (ten bars, the leftmost the lowest bit), so the first frame a player shows of an artifact
// says where its content starts; ffprobe gives its length and its first video and audio timestamps.
// Each row is judged against DESIGN.md's promise: fast may begin up to one keyframe interval before
// start; precise starts at start and lasts end − start within 0.1 s.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { dumpLogs, makeOnce, run, startStack } from './jobs.mjs';
import { fmt, formatLoad, requireTool } from './lib.mjs';

const SECONDS = Number(process.env.BENCH_CLIP_SECONDS ?? 30);
/** Ranges as "start-end,start-end": mid-GOP starts of two lengths, and one on a keyframe. */
const RANGES = (process.env.BENCH_CLIP_RANGES ?? '2.5-7.5,10.25-12.75,16-24')
  .split(',')
  .map((r) => r.split('-').map(Number));
const execFileP = promisify(execFile);
const FPS = 25;
const GOP_SECONDS = 2;
const BITS = 10; // frame numbers up to 1023: 40 s at 25 fps
const TOLERANCE = 0.1; // DESIGN.md's, for precise clips
const EPS = 0.001;

/** The four input kinds, made once with one encode and stream copies, flat (either origin serves them). */
async function makeMedia(dir) {
  const p = (name) => path.join(dir, `clipacc-${SECONDS}-${name}`);
  const bars = `if(bitand(floor(N/pow(2,floor(X*${BITS}/W))),1),235,16)`;
  await makeOnce(p('muxed.mp4'), [
    '-f',
    'lavfi',
    '-i',
    `nullsrc=size=320x96:rate=${FPS}:duration=${SECONDS},format=gray,geq=lum='${bars}',format=yuv420p`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:sample_rate=48000:duration=${SECONDS}`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-g',
    String(GOP_SECONDS * FPS),
    '-keyint_min',
    String(GOP_SECONDS * FPS),
    '-sc_threshold',
    '0',
    '-c:a',
    'aac',
    '-b:a',
    '64k',
    '-shortest',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
  ]);
  await makeOnce(p('video.mp4'), [
    '-i',
    p('muxed.mp4'),
    '-map',
    '0:v',
    '-c',
    'copy',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
  ]);
  await makeOnce(p('audio.m4a'), [
    '-i',
    p('muxed.mp4'),
    '-map',
    '0:a',
    '-c',
    'copy',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
  ]);
  if (!fs.existsSync(p('hls.m3u8'))) {
    await run('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-i',
      p('muxed.mp4'),
      '-c',
      'copy',
      '-f',
      'hls',
      '-hls_time',
      String(GOP_SECONDS),
      '-hls_playlist_type',
      'vod',
      '-hls_segment_filename',
      p('hls-%03d.ts'),
      p('hls.m3u8'),
    ]);
  }
  if (!fs.existsSync(p('dash.mpd'))) {
    const prefix = `clipacc-${SECONDS}-dash`;
    await run('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-i',
      p('muxed.mp4'),
      '-map',
      '0:v',
      '-map',
      '0:a',
      '-c',
      'copy',
      '-f',
      'dash',
      '-seg_duration',
      String(GOP_SECONDS),
      '-use_template',
      '1',
      '-use_timeline',
      '1',
      '-init_seg_name',
      `${prefix}-init-$RepresentationID$.m4s`,
      '-media_seg_name',
      `${prefix}-$RepresentationID$-$Number%05d$.m4s`,
      p('dash.mpd'),
    ]);
  }
  // The pair as a page names it (the origin serves every file as application/octet-stream).
  fs.writeFileSync(
    p('pair.html'),
    `<!doctype html>\n<html><head><meta charset="utf-8"><title>Clip pair</title></head><body>\n<video controls>\n  <source src="${path.basename(p('video.mp4'))}" type='video/mp4; codecs="avc1.64000c"'>\n  <source src="${path.basename(p('audio.m4a'))}" type='audio/mp4; codecs="mp4a.40.2"'>\n</video>\n</body></html>\n`,
  );
  for (const name of fs.readdirSync(dir)) if (name.startsWith('clipacc-')) fs.chmodSync(path.join(dir, name), 0o644);
  return (name) => `clipacc-${SECONDS}-${name}`;
}

const isVideo = (s) => s.has_video === true || s.width !== undefined;

/** The request body of each input kind, from what the extract returned for its URL. */
async function kinds(api, url) {
  const sources = async (name) => (await api.extract(url(name))).media.flatMap((m) => m.sources);
  const dash = await sources('dash.mpd');
  const pair = await sources('pair.html');
  return [
    { kind: 'progressive mp4', body: { url: (await sources('muxed.mp4'))[0].url } },
    {
      kind: 'merge pair',
      body: {
        video_url: pair.find((s) => s.stream_profile === 'video_only')?.url,
        audio_url: pair.find((s) => s.stream_profile === 'audio_only')?.url,
      },
    },
    { kind: 'HLS', body: { url: (await sources('hls.m3u8'))[0].url } },
    { kind: 'DASH pair', body: { video_url: dash.find(isVideo)?.url, audio_url: dash.find((s) => !isVideo(s))?.url } },
  ];
}

const probeJson = async (args, file) =>
  JSON.parse((await run('ffprobe', ['-v', 'error', '-of', 'json', ...args, file])).out);

/** The first packet's pts of the first `type` stream (seconds), as clips.test.ts reads it. */
async function firstPts(file, type) {
  const info = await probeJson(
    ['-select_streams', `${type}:0`, '-show_entries', 'packet=pts_time', '-read_intervals', '%+#1'],
    file,
  );
  return Number(info.packets?.[0]?.pts_time);
}

/** The source frame numbers of the frames a player shows (edit lists applied), read from the bars. */
async function shownFrames(file) {
  // As bytes: run() decodes its output as UTF-8, which would merge or replace bytes above 127.
  const { stdout: bytes } = await execFileP(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      file,
      '-map',
      '0:v:0',
      '-vf',
      `scale=${BITS}:1:flags=area`,
      '-vsync',
      'passthrough',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'gray',
      'pipe:1',
    ],
    { encoding: 'buffer', maxBuffer: 64 << 20, timeout: 60_000 },
  );
  const frames = [];
  for (let i = 0; i + BITS <= bytes.length; i += BITS) {
    let n = 0;
    for (let b = 0; b < BITS; b++) if (bytes[i + b] > 128) n |= 1 << b;
    frames.push(n);
  }
  return frames;
}

/** What the artifact is, measured, and whether DESIGN.md's promise for its mode holds. */
async function measure(file, clip) {
  const duration = Number((await probeJson(['-show_entries', 'format=duration'], file)).format.duration);
  const video = await firstPts(file, 'v');
  const audio = await firstPts(file, 'a');
  const frames = await shownFrames(file);
  const length = clip.end - clip.start;
  const shownStart = frames[0] / FPS; // source time of the first frame shown
  const shownEnd = (frames.at(-1) + 1) / FPS; // source time where the last frame shown ends
  // Frames shown twice or left out (an encoder's frame-rate filling): reported, not part of the promise.
  // A number that goes back can only be a misread bar, and then no figure of the row can be trusted.
  const steps = frames.slice(1).map((n, i) => n - frames[i]);
  if (steps.some((d) => d < 0))
    throw new Error(`${file}: the frame numbers go back (${frames.join(' ')}): the bars were misread`);
  const repeated = steps.filter((d) => d === 0).length;
  const skipped = steps.reduce((sum, d) => sum + Math.max(0, d - 1), 0);
  const r = {
    duration,
    video,
    audio,
    lengthError: duration - length,
    startOffset: shownStart - clip.start,
    endOffset: shownEnd - clip.end,
    frames: frames.length,
    repeated,
    skipped,
  };
  if (clip.mode === 'fast') {
    // Copied from the keyframe at or before start: nothing earlier than one interval, and what a
    // player shows starts within a frame of start (the frame that straddles start may go either way).
    const lead = Math.min(video, audio);
    r.met = lead >= -GOP_SECONDS - EPS && video <= EPS && Math.abs(r.startOffset) <= 1 / FPS + EPS;
  } else {
    r.met =
      Math.abs(r.lengthError) <= TOLERANCE &&
      Math.abs(video) <= TOLERANCE &&
      Math.abs(audio) <= TOLERANCE &&
      Math.abs(r.startOffset) <= TOLERANCE;
  }
  return r;
}

export async function benchClipAccuracy() {
  requireTool('ffmpeg', 'apt-get install ffmpeg');
  requireTool('ffprobe', 'apt-get install ffmpeg');
  requireTool('redis-server', 'apt-get install redis-server');
  const loadStart = os.loadavg();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-bench-clip-'));
  const logs = { gateway: path.join(scratch, 'gateway.log'), worker: path.join(scratch, 'worker.log') };
  const rows = [];
  let stack;
  try {
    stack = await startStack(scratch, logs);
    const name = await makeMedia(stack.filesDir);
    await stack.startWorker();
    const api = stack.api;
    const inputs = await kinds(api, (n) => stack.fileUrl(name(n)));
    for (const mode of ['fast', 'precise']) {
      for (const { kind, body } of inputs) {
        for (const [start, end] of RANGES) {
          const clip = { start, end, mode };
          const id = await api.submit({ ...body, clip, filename: `clip-${mode}-${start}-${end}` });
          const job = await api.waitJob(id);
          const res = await fetch(`${stack.base}${job.artifact.url}`);
          if (res.status !== 200) throw new Error(`artifact of job ${id} answered ${res.status}`);
          const file = path.join(scratch, `${id}.${job.artifact.filename.split('.').pop()}`);
          fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
          rows.push({
            mode,
            kind,
            clip,
            jobMs: Date.parse(job.finished_at) - Date.parse(job.created_at),
            ...(await measure(file, clip)),
          });
          fs.rmSync(file, { force: true });
        }
      }
    }
  } catch (err) {
    dumpLogs(logs);
    throw err;
  } finally {
    await stack?.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  console.log(
    `\n## clip accuracy (${SECONDS} s source, 320×96 H.264 ${FPS} fps, a keyframe every ${GOP_SECONDS} s, AAC 48 kHz; HLS and DASH in ${GOP_SECONDS} s segments; origin: ${stack.origin.kind} on loopback; one worker; load average 1/5/15 min at start ${formatLoad(loadStart)}, at end ${formatLoad(os.loadavg())})\n`,
  );
  console.log(
    `Promises (DESIGN.md): fast may begin up to one keyframe interval (${GOP_SECONDS} s) before start; precise starts at start and lasts end − start within ${TOLERANCE} s. "first shown" is the source time of the first frame a player shows (edit lists applied), read from the frame number painted in the video; "last shown" is where the last frame shown ends. A frame that straddles start or end may go either way (±${fmt(1000 / FPS, 0)} ms).\n`,
  );
  console.log(
    '| mode | input | start–end (length) s | duration s | length error s | first video pts s | first audio pts s | first shown − start s | last shown − end s | frames (repeated, skipped) | job ms | promise |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const { start, end } = r.clip;
    console.log(
      `| ${r.mode} | ${r.kind} | ${start}–${end} (${fmt(end - start, 2)}) | ${fmt(r.duration, 3)} | ${fmt(r.lengthError, 3)} | ${fmt(r.video, 3)} | ${fmt(r.audio, 3)} | ${fmt(r.startOffset, 3)} | ${fmt(r.endOffset, 3)} | ${r.frames} (${r.repeated}, ${r.skipped}) | ${fmt(r.jobMs, 0)} | ${r.met ? 'met' : 'NOT met'} |`,
    );
  }
  const met = rows.filter((r) => r.met).length;
  console.log(
    `\nclip accuracy: ${met} of ${rows.length} clips keep their mode's promise${met === rows.length ? '' : ' (NOT met for some)'}`,
  );
  return { rows };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchClipAccuracy();
