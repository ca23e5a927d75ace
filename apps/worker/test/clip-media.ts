// Media for the clip and tag tests: 6 s at 25 fps with a keyframe every second (so a fast clip's
// early start is measurable), its video and audio apart, an HLS and a DASH rendition with 1 s
// segments, and a thumbnail. Made once per test file with stream copies after one small encode.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Origin } from '@reelay/testkit';
import { ffmpegBinary } from '@reelay/testkit';

const run = promisify(execFile);
const ffmpeg = (args: string[]) => run(ffmpegBinary(), ['-hide_banner', '-loglevel', 'error', '-y', ...args]);

export const CLIP_MEDIA_SECONDS = 6;

export async function makeClipMedia(dir: string): Promise<string> {
  const out = path.join(dir, 'clip-media');
  fs.mkdirSync(path.join(out, 'hls'), { recursive: true });
  fs.mkdirSync(path.join(out, 'dash'), { recursive: true });
  const muxed = path.join(out, 'muxed.mp4');
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=160x120:rate=25:duration=${CLIP_MEDIA_SECONDS}`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:duration=${CLIP_MEDIA_SECONDS}`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-g',
    '25',
    '-c:a',
    'aac',
    '-b:a',
    '48k',
    '-shortest',
    '-metadata',
    'title=Original title',
    '-metadata',
    'artist=Original artist',
    '-movflags',
    '+faststart',
    muxed,
  ]);
  await Promise.all([
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
    ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=96x64', '-frames:v', '1', path.join(out, 'thumb.png')]),
  ]);
  return out;
}

/** Serves the clip media under /c/: muxed.mp4, video.mp4, audio.m4a, thumb.png, hls/*, dash/*. */
export function serveClipMedia(origin: Origin, dir: string): void {
  origin.file('/c/muxed.mp4', path.join(dir, 'muxed.mp4'), 'video/mp4');
  origin.file('/c/video.mp4', path.join(dir, 'video.mp4'), 'video/mp4');
  origin.file('/c/audio.m4a', path.join(dir, 'audio.m4a'), 'audio/mp4');
  origin.file('/c/thumb.png', path.join(dir, 'thumb.png'), 'image/png');
  for (const name of fs.readdirSync(path.join(dir, 'hls')))
    origin.file(
      `/c/hls/${name}`,
      path.join(dir, 'hls', name),
      name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t',
    );
  for (const name of fs.readdirSync(path.join(dir, 'dash')))
    origin.file(
      `/c/dash/${name}`,
      path.join(dir, 'dash', name),
      name.endsWith('.mpd') ? 'application/dash+xml' : 'video/iso.segment',
    );
}

/** What ffprobe says about a file: format, streams with their dispositions, and all tags. */
export interface Probed {
  format: { format_name: string; start_time?: string; duration?: string; tags?: Record<string, string> };
  streams: {
    codec_type: string;
    codec_name: string;
    nb_read_packets?: string;
    disposition?: { attached_pic: number };
    tags?: Record<string, string>;
  }[];
}

export function ffprobe(file: string, extra: string[] = []): Probed {
  const out = execFileSync(
    process.env.FFPROBE_PATH || 'ffprobe',
    ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', ...extra, file],
    { encoding: 'utf8' },
  );
  return JSON.parse(out) as Probed;
}

/** The presentation time of the first packet of the first stream of `type`, in seconds. */
export function firstPts(file: string, type: 'v' | 'a'): number {
  const out = execFileSync(
    process.env.FFPROBE_PATH || 'ffprobe',
    [
      '-v',
      'error',
      '-select_streams',
      `${type}:0`,
      '-show_entries',
      'packet=pts_time',
      '-read_intervals',
      '%+#1',
      '-of',
      'csv=p=0',
      file,
    ],
    { encoding: 'utf8' },
  );
  return Number.parseFloat(out.trim().split('\n')[0]); // csv may end the line with a comma
}
