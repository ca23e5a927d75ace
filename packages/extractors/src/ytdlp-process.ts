// Finding and running the yt-dlp binary: an argument array and no shell, the URL after `--` so it can
// never be read as an option, a hermetic set of flags, an environment without proxy variables (so
// nothing bypasses `--proxy`), a hard time limit (SIGKILL to its whole process group: it may start
// helpers of its own), bounded output, and only a short sanitised line of stderr kept, because yt-dlp
// echoes URLs, tokens included, into its messages.
import fs from 'node:fs';
import path from 'node:path';
import { CHILD_ENV_NAMES } from '@reelay/config';
import { execFailure, spawnBounded, type ChildLimits } from '@reelay/media';

/** The flags every run gets; the URL and the proxy are added per run. */
export const YTDLP_FLAGS: readonly string[] = [
  '-J', // the info JSON on stdout, nothing downloaded
  '--no-playlist',
  '--ignore-config', // alias --no-config: no system, user or portable configuration files
  '--no-config-locations',
  '--no-cache-dir',
  '--no-warnings',
  '--socket-timeout',
  '10',
];

/**
 * The run's arguments; `cookiesFile` is a private copy of COOKIES_FILE (yt-dlp writes into it).
 * `playlist`: a playlist is listed flat (entries' URLs, not resolved) from item `start` to `end`
 * (1-based, inclusive), so a channel of 10^5 videos costs yt-dlp no more than one page of them.
 */
export function ytdlpArgs(
  url: URL,
  proxyUrl: string,
  cookiesFile?: string,
  playlist?: { start: number; end: number },
): string[] {
  const range = playlist
    ? ['--flat-playlist', '--playlist-start', String(playlist.start), '--playlist-end', String(playlist.end)]
    : [];
  return [
    ...YTDLP_FLAGS,
    ...range,
    '--proxy',
    proxyUrl,
    ...(cookiesFile ? ['--cookies', cookiesFile] : []),
    '--',
    url.href,
  ];
}

/**
 * The child's environment: only the config's CHILD_ENV_NAMES, taken from `base`, so a pip, venv or
 * distribution install finds its Python and certificates. Nothing else is: no HTTP_PROXY,
 * HTTPS_PROXY, ALL_PROXY or NO_PROXY in any case (NO_PROXY would send matching hosts around
 * `--proxy`, straight to the network), and no secret of the gateway's such as REDIS_URL.
 */
export function childEnv(base: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of CHILD_ENV_NAMES) {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/**
 * The yt-dlp binary: YTDLP_PATH when it names an executable file, else `yt-dlp` on `searchPath` (the
 * PATH the config read). `problem` explains a YTDLP_PATH that cannot be used, for the start-up log.
 */
export function locateYtdlp(configured: string | undefined, searchPath: string): { binary?: string; problem?: string } {
  if (configured) {
    return isExecutable(configured)
      ? { binary: configured }
      : { problem: `YTDLP_PATH=${configured} is not an executable file` };
  }
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, 'yt-dlp');
    if (isExecutable(candidate)) return { binary: candidate };
  }
  return {};
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false; // missing or not executable: the caller reports it as not found
  }
}

export interface RunOptions {
  binary: string;
  args: readonly string[];
  env: Record<string, string>;
  timeoutMs: number;
  /** Stops the run (client gone, session cut off). */
  signal?: AbortSignal;
  maxStdoutBytes: number;
  /** Memory and CPU bounds (JOB_MAX_*): a page or manifest built to inflate cannot grow it without end. */
  limits?: ChildLimits;
}

export interface RunOutcome {
  /** How the run ended: on its own, killed at the time limit, stopped by the signal, or killed for output past the limit. */
  ended: 'exited' | 'timeout' | 'aborted' | 'too_large' | 'resource_limit';
  /** With `resource_limit`: which bound, as a sentence. */
  limit?: string;
  exitCode: number | null;
  stdout: string;
  /** The last few KB of stderr: read it only through errorLine(). */
  stderr: string;
}

const STDERR_TAIL = 8 * 1024;

/** Runs the binary to its end; rejects only when it cannot be started. */
export async function runYtdlp(opts: RunOptions): Promise<RunOutcome> {
  // How the run ended, set by the kills below (an object, as closures write it).
  const run: { ended: RunOutcome['ended'] } = { ended: 'exited' };
  const { subprocess, watch } = spawnBounded(opts.binary, opts.args, opts.limits, {
    env: opts.env,
    extendEnv: false, // only the variables childEnv kept: never a proxy variable of this process
    stdin: 'ignore',
    detached: true, // its own process group, so that one kill reaches whatever it started
    buffer: { stdout: true, stderr: false }, // stderr is kept as a bounded tail below
    stripFinalNewline: false,
    reject: false,
  });
  const kill = (why: RunOutcome['ended']) => {
    if (run.ended === 'exited') run.ended = why;
    try {
      if (subprocess.pid !== undefined) process.kill(-subprocess.pid, 'SIGKILL');
    } catch {
      subprocess.kill('SIGKILL'); // the group is already gone; the child itself may not be reaped yet
    }
  };
  const timer = setTimeout(() => kill('timeout'), opts.timeoutMs);
  const onAbort = () => kill('aborted');
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });

  let stdoutBytes = 0;
  subprocess.stdout?.on('data', (chunk: Buffer) => {
    stdoutBytes += chunk.length;
    if (stdoutBytes > opts.maxStdoutBytes) kill('too_large');
  });
  let stderr = '';
  subprocess.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
  });
  try {
    const result = await subprocess;
    watch?.stop();
    // A binary that could not be started has neither an exit code nor a signal (or, under the
    // bounds' shell, the shell's 127 or 126).
    if (result.failed && result.exitCode === undefined && result.signal === undefined && run.ended === 'exited')
      throw result.cause ?? new Error(result.shortMessage);
    const errno = watch && run.ended === 'exited' ? execFailure(result.exitCode, stderr) : undefined;
    if (errno) throw Object.assign(new Error(`spawn ${opts.binary} ${errno}`), { code: errno });
    const limit = result.failed && run.ended === 'exited' ? watch?.limitExceeded(stderr) : undefined;
    if (limit)
      return {
        ended: 'resource_limit',
        limit: watch!.describe('yt-dlp', limit),
        exitCode: result.exitCode ?? null,
        stdout: '',
        stderr,
      };
    const stdout = run.ended === 'too_large' ? '' : String(result.stdout ?? '');
    return { ended: run.ended, exitCode: result.exitCode ?? null, stdout, stderr };
  } finally {
    watch?.stop();
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * yt-dlp's last error as one short line fit for a log or a message: its `ERROR:` line without the
 * "please report this issue" advice, URLs and absolute paths replaced, at most 200 characters.
 */
export function errorLine(stderr: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const line = [...lines].reverse().find((l) => l.startsWith('ERROR:')) ?? lines.at(-1) ?? '';
  return (
    line
      .replace(/^ERROR:\s*/, '')
      .replace(/;?\s*(?:please report this issue|Confirm you are on the latest version).*$/i, '')
      // A URL ends at whitespace; closing punctuation right after it is yt-dlp's, not the URL's.
      .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S*?(?=[)\]'",.;]*(?:\s|$))/gi, '<url>')
      .replace(/(^|[\s'"(=])\/(?:[^\s/'"]+\/)+[^\s'"]*/g, '$1<path>')
      .replace(/[\u0000-\u001f\u007f]/g, '')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 200)
  );
}
