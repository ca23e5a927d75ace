// Media for the smart cut tests, made at test time: 7 s of 320x240 H.264 at 30 fps with B-frames
// and a keyframe every second, scrolling so that neighbouring frames differ (SSIM ≈ 0.5), with a
// white frame and a 1 kHz beep together at 2.6 s and 4.2 s; its video and audio apart, HLS and DASH
// renditions with 1 s segments; the same picture and sound in HEVC (x265, closed GOPs, 4 B-frames),
// as a file and as HLS; a VP9 file and an H.264 file with a single keyframe.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Origin } from '@reelay/testkit';
import { ffmpegBinary } from '@reelay/testkit';

const run = promisify(execFile);
const ffmpeg = (args: string[]) => run(ffmpegBinary(), ['-hide_banner', '-loglevel', 'error', '-y', ...args]);
const ffprobeBin = () => process.env.FFPROBE_PATH || 'ffprobe';

export const FPS = 30;
/** Where the white frames (and beeps) are, in seconds. */
export const FLASHES = [2.6, 4.2];
const flashFrames = FLASHES.map((t) => `between(n\\,${Math.round(t * FPS)}\\,${Math.round(t * FPS)})`).join('+');
const beeps = FLASHES.map((t) => `between(t\\,${t}\\,${(t + 0.04).toFixed(2)})`).join('+');

export async function makeSmartMedia(dir: string): Promise<string> {
  const out = path.join(dir, 'smart-media');
  fs.mkdirSync(path.join(out, 'hls'), { recursive: true });
  fs.mkdirSync(path.join(out, 'dash'), { recursive: true });
  fs.mkdirSync(path.join(out, 'hevc-hls'), { recursive: true });
  const muxed = path.join(out, 'muxed.mp4');
  const hevc = path.join(out, 'hevc.mp4');
  await Promise.all([makeSource(muxed, 'h264', 7), makeSource(hevc, 'hevc', 7)]);
  await Promise.all([
    ffmpeg([
      '-i',
      hevc,
      '-c',
      'copy',
      '-f',
      'hls',
      '-hls_time',
      '1',
      '-hls_playlist_type',
      'vod',
      '-hls_segment_filename',
      path.join(out, 'hevc-hls', 'seg%03d.ts'),
      path.join(out, 'hevc-hls', 'index.m3u8'),
    ]),
    ffmpeg(['-i', muxed, '-map', '0:v', '-c', 'copy', '-movflags', '+faststart', path.join(out, 'video.mp4')]),
    ffmpeg(['-i', muxed, '-map', '0:a', '-c', 'copy', path.join(out, 'audio.m4a')]),
    ffmpeg([
      '-i',
      muxed,
      '-c',
      'copy',
      '-f',
      'hls',
      '-hls_time',
      '1',
      '-hls_playlist_type',
      'vod',
      '-hls_segment_filename',
      path.join(out, 'hls', 'seg%03d.ts'),
      path.join(out, 'hls', 'index.m3u8'),
    ]),
    ffmpeg([
      '-i',
      muxed,
      '-map',
      '0:v',
      '-map',
      '0:a',
      '-c',
      'copy',
      '-f',
      'dash',
      '-seg_duration',
      '1',
      '-use_template',
      '1',
      '-use_timeline',
      '1',
      '-init_seg_name',
      'init-$RepresentationID$.m4s',
      '-media_seg_name',
      'chunk-$RepresentationID$-$Number%05d$.m4s',
      path.join(out, 'dash', 'manifest.mpd'),
    ]),
    ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=160x120:rate=25',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440',
      '-t',
      '4',
      '-c:v',
      'libvpx-vp9',
      '-deadline',
      'realtime',
      '-cpu-used',
      '8',
      '-g',
      '25',
      '-c:a',
      'libopus',
      path.join(out, 'vp9.webm'),
    ]),
    // One keyframe for the whole file: what a source built to defeat smart cut looks like.
    ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=160x120:rate=25',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440',
      '-t',
      '6',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-g',
      '100000',
      '-sc_threshold',
      '0',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      path.join(out, 'sparse.mp4'),
    ]),
  ]);
  return out;
}

/**
 * The scrolling picture with its white frames and beeps, `seconds` long, in H.264 (x264 veryfast:
 * 3 B-frames, pyramid) or HEVC (x265 veryfast: 4 B-frames, pyramid; closed GOPs, as a source that
 * can be spliced has them), with a keyframe every second.
 */
export async function makeSource(file: string, codec: 'h264' | 'hevc', seconds: number): Promise<void> {
  const video =
    codec === 'hevc'
      ? [
          '-c:v',
          'libx265',
          '-preset',
          'veryfast',
          '-x265-params',
          `keyint=${FPS}:min-keyint=${FPS}:scenecut=0:open-gop=0:log-level=error`,
          '-tag:v',
          'hvc1',
        ]
      : ['-c:v', 'libx264', '-preset', 'veryfast', '-g', String(FPS), '-sc_threshold', '0'];
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=320x240:rate=${FPS},scroll=h=0.03,drawbox=color=white:t=fill:enable=${flashFrames}`,
    '-f',
    'lavfi',
    '-i',
    `aevalsrc=0.8*sin(2*PI*1000*t)*(${beeps}):s=48000`,
    '-t',
    String(seconds),
    ...video,
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-b:a',
    '96k',
    '-movflags',
    '+faststart',
    file,
  ]);
}

/** Serves the media under /s/. */
export function serveSmartMedia(origin: Origin, dir: string): void {
  for (const [name, type] of [
    ['muxed.mp4', 'video/mp4'],
    ['hevc.mp4', 'video/mp4'],
    ['video.mp4', 'video/mp4'],
    ['audio.m4a', 'audio/mp4'],
    ['vp9.webm', 'video/webm'],
    ['sparse.mp4', 'video/mp4'],
  ])
    origin.file(`/s/${name}`, path.join(dir, name), type);
  for (const name of fs.readdirSync(path.join(dir, 'hls')))
    origin.file(
      `/s/hls/${name}`,
      path.join(dir, 'hls', name),
      name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t',
    );
  for (const name of fs.readdirSync(path.join(dir, 'hevc-hls')))
    origin.file(
      `/s/hevc-hls/${name}`,
      path.join(dir, 'hevc-hls', name),
      name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t',
    );
  for (const name of fs.readdirSync(path.join(dir, 'dash')))
    origin.file(
      `/s/dash/${name}`,
      path.join(dir, 'dash', name),
      name.endsWith('.mpd') ? 'application/dash+xml' : 'video/iso.segment',
    );
}

const text = (bin: string, args: string[]) =>
  execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** ffmpeg's stderr when decoding the whole file, errors only: empty for a clean file. */
export function decodeErrors(file: string): string {
  try {
    return execFileSync(ffmpegBinary(), ['-v', 'error', '-i', file, '-f', 'null', '-'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch (err) {
    return String((err as { stderr?: string }).stderr ?? err);
  }
}

export interface Packet {
  pts: number;
  dts: number;
  key: boolean;
}

/** The video packets of a file in decode order. */
export function videoPackets(file: string): Packet[] {
  return text(ffprobeBin(), [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'packet=pts_time,dts_time,flags',
    '-of',
    'csv=p=0',
    file,
  ])
    .trim()
    .split('\n')
    .map((line) => {
      const [pts, dts, flags] = line.split(',');
      return { pts: Number(pts), dts: Number(dts), key: flags.includes('K') };
    });
}

// What is left of a packet: H.264 without SPS, PPS and AUD units; HEVC's coded slices alone (NAL
// types 0-31), as its parameter sets come with the SEI that x265 stores beside them in hvcC, and
// hevc_mp4toannexb puts all of them before each keyframe.
const PICTURES = { h264: 'remove_types=7|8|9', hevc: 'pass_types=0-31' };

/**
 * The video packets' MD5s in decode order, parameter sets and access unit delimiters removed (they
 * are what the splice adds, and MPEG-TS adds delimiters): the coded pictures as the source has them.
 */
export function pictureHashes(file: string, codec: 'h264' | 'hevc' = 'h264'): { pts: number; hash: string }[] {
  const out = text(ffmpegBinary(), [
    '-v',
    'error',
    '-i',
    file,
    '-map',
    '0:v:0',
    '-c',
    'copy',
    '-bsf:v',
    `filter_units=${PICTURES[codec]}`,
    '-f',
    'framemd5',
    '-',
  ]);
  const tb = /#tb 0: (\d+)\/(\d+)/.exec(out)!;
  const scale = Number(tb[1]) / Number(tb[2]);
  return out
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const f = l.split(',').map((s) => s.trim());
      return { pts: Number(f[2]) * scale, hash: f[5] };
    });
}

/** Runs ffmpeg and returns its stderr, where filters such as ssim and silencedetect report. */
export function ffmpegLog(args: string[]): string {
  const r = spawnSync(ffmpegBinary(), ['-hide_banner', '-nostdin', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr.slice(-500)}`);
  return r.stderr;
}

/** The first audio stream decoded to 16-bit PCM (optionally through a filter), as bytes. */
export function decodedAudio(input: string[], filter?: string): Buffer {
  const r = spawnSync(
    ffmpegBinary(),
    [
      '-hide_banner',
      '-nostdin',
      '-loglevel',
      'error',
      ...input,
      '-map',
      '0:a:0',
      ...(filter ? ['-af', filter] : []),
      '-f',
      's16le',
      '-',
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr.toString().slice(-500)}`);
  return r.stdout;
}

/** SSIM (all planes) of the first frames of two inputs, each given as its ffmpeg input arguments. */
export function ssim(a: string[], b: string[]): number {
  const log = ffmpegLog([
    ...a,
    ...b,
    '-lavfi',
    '[0:v]trim=end_frame=1,setpts=0[x];[1:v]trim=end_frame=1,setpts=0[y];[x][y]ssim',
    '-f',
    'null',
    '-',
  ]);
  return Number(/All:([\d.]+)/.exec(log)![1]);
}

/**
 * The SSIM (all planes) of each frame of a clip against the source's frames of [start, end), the
 * n-th with the n-th, and how many frames the clip has. With a scrolling picture a frame one step
 * early or late scores about 0.5, so every score ≥ 0.95 means every frame is where it belongs.
 * (Paired by number, not time: Matroska keeps milliseconds, and 0.033 would meet 0.0333's neighbour.)
 */
export function frameSsims(
  clip: string,
  source: string,
  start: number,
  end: number,
): { count: number; scores: number[] } {
  const stats = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-ssim-')), 'ssim.log');
  try {
    ffmpegLog([
      '-i',
      clip,
      '-i',
      source,
      '-lavfi',
      `[0:v]settb=1/${FPS},setpts=N[x];[1:v]trim=start=${start - 0.001}:end=${end - 0.001},settb=1/${FPS},setpts=N[y];[x][y]ssim=stats_file=${stats}:shortest=1`,
      '-f',
      'null',
      '-',
    ]);
    const scores = [...fs.readFileSync(stats, 'utf8').matchAll(/All:([\d.]+)/g)].map((m) => Number(m[1]));
    return { count: videoPackets(clip).length, scores };
  } finally {
    fs.rmSync(path.dirname(stats), { recursive: true, force: true });
  }
}

/** When the white frames show, in seconds. */
export function flashTimes(input: string[]): number[] {
  const log = ffmpegLog([
    '-loglevel',
    'info',
    ...input,
    '-map',
    '0:v:0',
    '-vf',
    'signalstats,metadata=print:key=lavfi.signalstats.YAVG',
    '-f',
    'null',
    '-',
  ]);
  const times: number[] = [];
  let pts = NaN;
  for (const line of log.split('\n')) {
    const frame = /pts_time:([\d.-]+)/.exec(line);
    if (frame) pts = Number(frame[1]);
    const avg = /YAVG=([\d.]+)/.exec(line);
    if (avg && Number(avg[1]) > 200) times.push(pts);
  }
  return times;
}

/** When the beeps start, in seconds: where silence ends. */
export function beepTimes(input: string[]): number[] {
  const log = ffmpegLog([
    '-loglevel',
    'info',
    ...input,
    '-map',
    '0:a:0',
    '-af',
    'silencedetect=noise=-30dB:d=0.02',
    '-f',
    'null',
    '-',
  ]);
  return [...log.matchAll(/silence_end: ([\d.]+)/g)].map((m) => Number(m[1]));
}
