// The recording's parts made into one playable, seekable file: ffmpeg's concat demuxer joins the
// parts end to end (each part restarts the timeline, so a gap takes no time in the file), streams
// are copied, and mp4 gets its index at the front (faststart). Codecs mp4 cannot hold go to mkv.
// An A/V recording (dash-av.ts) joins each track's parts the same way, each part lasting in the file
// what the tracks' shared timeline gives it (av-timeline.ts), and muxes the two in the same ffmpeg.
import fs from 'node:fs/promises';
import path from 'node:path';
import { FfmpegError, runFfmpeg, type ChildLimits } from '@reelay/media';
import type { TrackPlan } from './av-timeline.js';

export interface Finalized {
  file: string;
  container: 'mp4' | 'mkv';
}

/**
 * The concat list (ffconcat): part names, each a file in the recording's folder, and with
 * `durations` how long each part but the last lasts. fMP4 parts need them: ffmpeg reports such a
 * part's duration from time 0 of the stream, not from its first sample, so a part that starts an
 * hour into a broadcast would push the next one an hour later in the file.
 */
export function concatList(parts: readonly string[], durations?: readonly number[]): string {
  const duration = (i: number) =>
    durations && i < parts.length - 1 && durations[i] !== undefined ? [`duration ${durations[i].toFixed(3)}`] : [];
  return [
    'ffconcat version 1.0',
    ...parts.flatMap((p, i) => [`file '${p.replace(/'/g, "'\\''")}'`, ...duration(i)]),
    '',
  ].join('\n');
}

export function finalizeArgs(list: string, output: string, container: 'mp4' | 'mkv'): string[] {
  const args = [
    '-hide_banner',
    '-nostdin',
    '-y',
    '-loglevel',
    'error',
    '-f',
    'concat',
    '-safe',
    '0',
    '-i',
    list,
    '-map',
    '0:v?',
    '-map',
    '0:a?',
    '-c',
    'copy',
  ];
  if (container === 'mp4') args.push('-movflags', '+faststart', '-f', 'mp4');
  else args.push('-f', 'matroska');
  return [...args, output];
}

/** A track's concat list: each part but the last lasts `duration` in the file (its media, then a hole to the next part). */
export function trackConcatList(plan: TrackPlan, folder: string): string {
  const quote = (p: string) => `'${`${folder}/${p}`.replace(/'/g, "'\\''")}'`;
  return [
    'ffconcat version 1.0',
    ...plan.entries.flatMap((e) => [
      `file ${quote(e.part)}`,
      ...(e.duration === undefined ? [] : [`duration ${e.duration.toFixed(3)}`]),
    ]),
    '',
  ].join('\n');
}

/** Video from the first list, audio from the second, each starting `offset` seconds into the file. */
export function avFinalizeArgs(
  lists: readonly { list: string; offset: number }[],
  output: string,
  container: 'mp4' | 'mkv',
): string[] {
  const args = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error'];
  for (const { list, offset } of lists)
    args.push(...(offset > 0 ? ['-itsoffset', offset.toFixed(3)] : []), '-f', 'concat', '-safe', '0', '-i', list);
  args.push('-map', '0:v', '-map', '1:a', '-c', 'copy');
  if (container === 'mp4') args.push('-movflags', '+faststart', '-f', 'mp4');
  else args.push('-f', 'matroska');
  return [...args, output];
}

export interface FinalizeOptions {
  ffmpeg: string;
  dir: string;
  format?: 'mp4' | 'mkv';
  signal: AbortSignal;
  killSignal?: AbortSignal;
  timeoutMs: number;
  limits?: ChildLimits;
}

export async function finalize(
  opts: FinalizeOptions & { parts: readonly string[]; durations?: readonly number[] },
): Promise<Finalized> {
  const list = path.join(opts.dir, 'parts.ffconcat');
  await fs.writeFile(list, concatList(opts.parts, opts.durations));
  return make(opts, (file, container) => finalizeArgs(list, file, container));
}

/** The two tracks of an A/V recording, video then audio, each a folder of `dir` laid out by its plan. */
export async function finalizeAv(
  opts: FinalizeOptions & { tracks: readonly { folder: string; plan: TrackPlan }[] },
): Promise<Finalized> {
  const lists = await Promise.all(
    opts.tracks.map(async ({ folder, plan }) => {
      const list = path.join(opts.dir, `${folder}.ffconcat`);
      await fs.writeFile(list, trackConcatList(plan, folder));
      return { list, offset: plan.offset };
    }),
  );
  return make(opts, (file, container) => avFinalizeArgs(lists, file, container));
}

async function make(
  opts: FinalizeOptions,
  args: (file: string, container: 'mp4' | 'mkv') => string[],
): Promise<Finalized> {
  const tries: ('mp4' | 'mkv')[] = opts.format === 'mkv' ? ['mkv'] : opts.format === 'mp4' ? ['mp4'] : ['mp4', 'mkv'];
  let failure: unknown;
  for (const container of tries) {
    const file = path.join(opts.dir, `recording.${container}`);
    try {
      await runFfmpeg({
        binary: opts.ffmpeg,
        args: args(file, container),
        cwd: opts.dir,
        signal: opts.signal,
        killSignal: opts.killSignal,
        timeoutMs: opts.timeoutMs,
        limits: opts.limits,
      });
      return { file, container };
    } catch (err) {
      if (!(err instanceof FfmpegError) || opts.signal.aborted) throw err;
      failure = err;
      await fs.rm(file, { force: true });
    }
  }
  throw failure;
}
