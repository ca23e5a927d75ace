// ffmpeg making a REAL live DASH stream in real time (type="dynamic", 1 s segments, a sliding
// window): a SegmentTemplate with a SegmentTimeline ($Number$ names), or with a fixed duration on
// the clock (use_timeline 0). Video and audio are separate representations (ids 0 and 1), as
// ffmpeg writes them. Served by startFolderOrigin like the live HLS streams.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LiveStream } from './live-hls.js';

export function startLiveDash(options: { seconds?: number; timeline?: boolean; windowSize?: number } = {}): LiveStream {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-live-dash-'));
  const args = [
    '-hide_banner',
    '-loglevel',
    'error',
    '-re',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=160x120:rate=10',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=22050',
  ];
  if (options.seconds) args.push('-t', String(options.seconds));
  args.push(
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-tune',
    'zerolatency',
    '-g',
    '10',
    '-keyint_min',
    '10',
    '-sc_threshold',
    '0',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-b:a',
    '32k',
  );
  args.push(
    '-f',
    'dash',
    '-seg_duration',
    '1',
    '-window_size',
    String(options.windowSize ?? 5),
    '-extra_window_size',
    '3',
    '-use_template',
    '1',
    '-use_timeline',
    options.timeline === false ? '0' : '1',
    '-remove_at_exit',
    '0',
  );
  args.push(
    '-init_seg_name',
    'init-$RepresentationID$.m4s',
    '-media_seg_name',
    'chunk-$RepresentationID$-$Number%05d$.m4s',
    path.join(dir, 'manifest.mpd'),
  );
  const child = spawn('ffmpeg', args, { stdio: ['pipe', 'ignore', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The video representation's finished segments (ffmpeg writes each as .tmp and renames it).
  const numbers = () =>
    (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
      .map((f) => /^chunk-0-(\d+)\.m4s$/.exec(f))
      .filter((m) => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
  return {
    dir,
    process: child,
    async listed(n, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!(fs.existsSync(path.join(dir, 'manifest.mpd')) && numbers().length >= n)) {
        if (Date.now() > deadline)
          throw new Error(`the live DASH stream made fewer than ${n} segments in ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    window: numbers,
    async end() {
      child.stdin?.end('q');
      await exited;
    },
    kill() {
      child.kill('SIGKILL');
    },
  };
}
