// Whether this worker can run jobs at all: ffmpeg and ffprobe start and print their version. A
// missing or broken binary (FFMPEG_PATH=/nonexistent, not on PATH, wrong architecture) is a fact
// about the worker, reported at start-up and on /healthz, never as a failed job of some user.
// Run under child bounds like every program reelay starts (a wrong binary may be anything).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { execFailure, limitedCommand } from '@reelay/media';

const run = promisify(execFile);
/** Printing a version needs little: a binary that wants more is not the ffmpeg it claims to be. */
const CHECK_LIMITS = { memoryMb: 256, cpuSeconds: 5 };

export type ToolCheck = { ok: true; versions: { ffmpeg: string; ffprobe: string } } | { ok: false; reason: string };

async function version(
  name: 'ffmpeg' | 'ffprobe',
  binary: string,
  timeoutMs: number,
): Promise<{ line: string } | { reason: string }> {
  try {
    const command = limitedCommand(binary, ['-hide_banner', '-version'], CHECK_LIMITS);
    const { stdout } = await run(command.file, command.args, {
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      maxBuffer: 1 << 20,
    });
    const line = stdout.split('\n')[0] ?? '';
    if (!line.startsWith(`${name} version`))
      return {
        reason: `${name} (${binary}) is not ${name}: its -version printed ${JSON.stringify(line.slice(0, 80))}`,
      };
    return { line };
  } catch (err) {
    const e = err as { code?: string | number; killed?: boolean; message?: string; stderr?: string };
    const exec = execFailure(typeof e.code === 'number' ? e.code : undefined, e.stderr ?? '');
    const code = exec ?? e.code;
    const why =
      code === 'ENOENT'
        ? 'not found'
        : code === 'EACCES'
          ? 'not executable'
          : e.killed
            ? `no answer within ${timeoutMs} ms`
            : typeof code === 'number'
              ? `exited with code ${code}`
              : String(code ?? e.message);
    return {
      reason: `${name} (${binary}) cannot be run: ${why}. Set ${name === 'ffmpeg' ? 'FFMPEG_PATH' : 'FFPROBE_PATH'} to a working binary or put ${name} on PATH.`,
    };
  }
}

export async function checkTools(
  binaries: { ffmpeg: string; ffprobe: string },
  timeoutMs = 10_000,
): Promise<ToolCheck> {
  const [ffmpeg, ffprobe] = await Promise.all([
    version('ffmpeg', binaries.ffmpeg, timeoutMs),
    version('ffprobe', binaries.ffprobe, timeoutMs),
  ]);
  const reasons = [ffmpeg, ffprobe].flatMap((r) => ('reason' in r ? [r.reason] : []));
  if (reasons.length > 0) return { ok: false, reason: reasons.join(' ') };
  return {
    ok: true,
    versions: { ffmpeg: (ffmpeg as { line: string }).line, ffprobe: (ffprobe as { line: string }).line },
  };
}
