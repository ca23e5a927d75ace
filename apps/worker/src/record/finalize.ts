// The recording's parts made into one playable, seekable file: ffmpeg's concat demuxer joins the
// parts end to end (each part restarts the timeline, so a gap takes no time in the file), streams
// are copied, and mp4 gets its index at the front (faststart). Codecs mp4 cannot hold go to mkv.
import fs from 'node:fs/promises';
import path from 'node:path';
import { FfmpegError, runFfmpeg, type ChildLimits } from '@reelay/media';

export interface Finalized {
  file: string;
  container: 'mp4' | 'mkv';
}

/** The concat list (ffconcat): part names only, each a file in the recording's folder. */
export function concatList(parts: readonly string[]): string {
  return ['ffconcat version 1.0', ...parts.map((p) => `file '${p.replace(/'/g, "'\\''")}'`), ''].join('\n');
}

export function finalizeArgs(list: string, output: string, container: 'mp4' | 'mkv'): string[] {
  const args = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-f', 'concat', '-safe', '0', '-i', list, '-map', '0:v?', '-map', '0:a?', '-c', 'copy'];
  if (container === 'mp4') args.push('-movflags', '+faststart', '-f', 'mp4');
  else args.push('-f', 'matroska');
  return [...args, output];
}

export async function finalize(opts: { ffmpeg: string; dir: string; parts: readonly string[]; format?: 'mp4' | 'mkv'; signal: AbortSignal; killSignal?: AbortSignal; timeoutMs: number; limits?: ChildLimits }): Promise<Finalized> {
  const list = path.join(opts.dir, 'parts.ffconcat');
  await fs.writeFile(list, concatList(opts.parts));
  const tries: ('mp4' | 'mkv')[] = opts.format === 'mkv' ? ['mkv'] : opts.format === 'mp4' ? ['mp4'] : ['mp4', 'mkv'];
  let failure: unknown;
  for (const container of tries) {
    const file = path.join(opts.dir, `recording.${container}`);
    try {
      await runFfmpeg({ binary: opts.ffmpeg, args: finalizeArgs(list, file, container), cwd: opts.dir, signal: opts.signal, killSignal: opts.killSignal, timeoutMs: opts.timeoutMs, limits: opts.limits });
      return { file, container };
    } catch (err) {
      if (!(err instanceof FfmpegError) || opts.signal.aborted) throw err;
      failure = err;
      await fs.rm(file, { force: true });
    }
  }
  throw failure;
}
