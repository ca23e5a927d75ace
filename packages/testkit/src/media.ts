// Test media made by ffmpeg's lavfi sources at test time (nothing binary is committed). Files are
// small and made once per directory: a second call finds them and returns at once.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestMedia {
  dir: string;
  /** H.264 + AAC, 320x240, 2 s, faststart. */
  muxedMp4: string;
  /** H.264 only, 640x360, 2 s. */
  videoOnlyMp4: string;
  /** AAC only, 2 s. */
  audioOnlyM4a: string;
  mp3: string;
  png: string;
  jpg: string;
  /** An HLS rendition (media playlist + segments) of muxedMp4: `hls/index.m3u8`. */
  hlsDir: string;
  /** A segmented DASH rendition of muxedMp4: `dash/manifest.mpd`. */
  dashDir: string;
}

export function ffmpegBinary(): string {
  return process.env.FFMPEG_PATH || 'ffmpeg';
}

async function ffmpeg(args: string[]): Promise<void> {
  await run(ffmpegBinary(), ['-hide_banner', '-loglevel', 'error', '-y', ...args], { maxBuffer: 1 << 20 });
}

const VIDEO_SRC = (size: string, seconds: number) => [
  '-f',
  'lavfi',
  '-i',
  `testsrc2=size=${size}:rate=25:duration=${seconds}`,
];
const AUDIO_SRC = (seconds: number) => [
  '-f',
  'lavfi',
  '-i',
  `sine=frequency=440:sample_rate=44100:duration=${seconds}`,
];
const H264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '25'];

/** The run's media (REELAY_TEST_MEDIA, set by the jest global setup), made on first use. */
export function testMedia(): Promise<TestMedia> {
  const dir = process.env.REELAY_TEST_MEDIA;
  if (!dir) throw new Error('REELAY_TEST_MEDIA is not set: run the tests through jest (pnpm test)');
  return makeTestMedia(dir);
}

function layout(dir: string): TestMedia {
  return {
    dir,
    muxedMp4: path.join(dir, 'muxed.mp4'),
    videoOnlyMp4: path.join(dir, 'video-only.mp4'),
    audioOnlyM4a: path.join(dir, 'audio-only.m4a'),
    mp3: path.join(dir, 'audio.mp3'),
    png: path.join(dir, 'image.png'),
    jpg: path.join(dir, 'image.jpg'),
    hlsDir: path.join(dir, 'hls'),
    dashDir: path.join(dir, 'dash'),
  };
}

/**
 * Makes the media in `dir` unless it is there. Built in a private folder and renamed into place, so
 * parallel test workers never see half-made files.
 */
export async function makeTestMedia(dir: string): Promise<TestMedia> {
  if (fs.existsSync(dir)) return layout(dir);
  const work = `${dir}.tmp-${process.pid}-${Date.now()}`;
  const media = layout(work);
  fs.mkdirSync(work, { recursive: true });

  await Promise.all([
    ffmpeg([
      ...VIDEO_SRC('320x240', 2),
      ...AUDIO_SRC(2),
      ...H264,
      '-c:a',
      'aac',
      '-b:a',
      '64k',
      '-shortest',
      '-movflags',
      '+faststart',
      media.muxedMp4,
    ]),
    ffmpeg([...VIDEO_SRC('640x360', 2), ...H264, '-an', '-movflags', '+faststart', media.videoOnlyMp4]),
    ffmpeg([...AUDIO_SRC(2), '-vn', '-c:a', 'aac', '-b:a', '96k', media.audioOnlyM4a]),
    ffmpeg([...AUDIO_SRC(2), '-c:a', 'libmp3lame', '-b:a', '64k', media.mp3]),
    ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=64x48', '-frames:v', '1', media.png]),
    ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=64x48', '-frames:v', '1', media.jpg]),
  ]);
  fs.mkdirSync(media.hlsDir, { recursive: true });
  fs.mkdirSync(media.dashDir, { recursive: true });
  await Promise.all([
    ffmpeg([
      '-i',
      media.muxedMp4,
      '-c',
      'copy',
      '-f',
      'hls',
      '-hls_time',
      '1',
      '-hls_playlist_type',
      'vod',
      '-hls_segment_filename',
      path.join(media.hlsDir, 'seg%03d.ts'),
      path.join(media.hlsDir, 'index.m3u8'),
    ]),
    ffmpeg([
      '-i',
      media.muxedMp4,
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
      path.join(media.dashDir, 'manifest.mpd'),
    ]),
  ]);
  try {
    fs.renameSync(work, dir);
  } catch {
    fs.rmSync(work, { recursive: true, force: true }); // another worker won the race
  }
  return layout(dir);
}
