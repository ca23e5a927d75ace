// A program run on a pseudo-terminal, as a person runs it in a terminal: it sees a TTY on stdin,
// stdout and stderr, and a Ctrl-C typed into it reaches the whole foreground process group as SIGINT
// from the terminal driver (pnpm, its shell and the program alike), not as a signal sent to one pid.
// Python's pty module does the terminal side (python3 is on every machine the tests run on: yt-dlp
// needs it), because util-linux `script` reports a child killed by SIGINT as exit status 130, the very
// difference some tests are about.
import { spawn } from 'node:child_process';

// Copies the terminal's output to stdout and stdin to the terminal (typing); at the end writes the
// child's fate as the last line of stderr: {"code": N} or {"signal": N}.
const DRIVER = `
import json, os, pty, select, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
inputs = [fd, 0]
while True:
    ready, _, _ = select.select(inputs, [], [])
    if 0 in ready:
        data = os.read(0, 1024)
        if data:
            os.write(fd, data)
        else:
            inputs.remove(0)
    if fd in ready:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b''
        if not data:
            break
        os.write(1, data)
_, status = os.waitpid(pid, 0)
fate = {'code': os.WEXITSTATUS(status)} if os.WIFEXITED(status) else {'signal': os.WTERMSIG(status)}
sys.stderr.write(json.dumps(fate) + '\\n')
`;

export interface PtyRun {
  /** Everything the terminal showed so far (stdout and stderr of the program, with \\r\\n line ends). */
  output(): string;
  /** Types into the terminal: '\\x03' is Ctrl-C. */
  type(text: string): void;
  /** Resolves once `pattern` has appeared in the output; rejects after `timeoutMs`, or if the program ended first. */
  waitFor(pattern: RegExp | string, timeoutMs?: number): Promise<void>;
  /** How the program ended: an exit code, or the signal that killed it (a number, as the kernel reports it). */
  done: Promise<{ code?: number; signal?: number; output: string }>;
  /** SIGKILL to the driver's terminal session, for clean-up after a failed test. */
  kill(): void;
}

export function runInPty(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string | undefined> },
): PtyRun {
  const env = Object.fromEntries(Object.entries(options.env).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >;
  const child = spawn('python3', ['-c', DRIVER, command, ...args], {
    cwd: options.cwd,
    env: { TERM: 'xterm-256color', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  let errors = '';
  const waiters = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    for (const wake of waiters) wake();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
  const done = new Promise<{ code?: number; signal?: number; output: string }>((resolve, reject) =>
    child.once('close', () => {
      for (const wake of waiters) wake();
      const last = errors.trim().split('\n').at(-1) ?? '';
      try {
        resolve({ ...(JSON.parse(last) as { code?: number; signal?: number }), output });
      } catch {
        reject(new Error(`the pty driver failed: ${errors}`));
      }
    }),
  );
  let ended = false;
  void done.finally(() => (ended = true)).catch(() => undefined);
  return {
    output: () => output,
    type: (text) => void child.stdin.write(text),
    waitFor: (pattern, timeoutMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        const seen = () => (typeof pattern === 'string' ? output.includes(pattern) : pattern.test(output));
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${String(pattern)} in:\n${output}`));
        }, timeoutMs);
        const check = () => {
          if (seen()) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve();
          } else if (ended || child.exitCode !== null) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`the program ended before ${String(pattern)} appeared:\n${output}`));
          }
        };
        waiters.add(check);
        check();
      }),
    done,
    kill: () => {
      try {
        child.kill('SIGKILL');
      } catch {
        /* gone */
      }
    },
  };
}

/**
 * What a terminal shows after `raw` was written to it, line by line: carriage returns and cursor
 * columns overwrite, erase-in-line clears, colours and other escape sequences take no room. Enough
 * for progress bars that redraw one line (cli-progress), which is what the CLI draws.
 */
export function screenLines(raw: string): string[] {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    if (ch === '\x1b') {
      const csi = /^\x1b\[([?\d;]*)([A-Za-z])/.exec(raw.slice(i, i + 16));
      if (!csi) {
        // An operating-system command (a title) runs to BEL or ST; anything else is ESC and one character
        // (ESC 7 and ESC 8 save and restore the cursor).
        const osc = raw[i + 1] === ']' ? /^\x1b\][^\x07\x1b]*(\x07|\x1b\\)?/.exec(raw.slice(i)) : null;
        i += osc ? osc[0].length - 1 : 1;
        continue;
      }
      i += csi[0].length - 1;
      const n = Number(csi[1].split(';')[0] || 0);
      if (csi[2] === 'G') col = Math.max(0, (n || 1) - 1);
      else if (csi[2] === 'K') {
        const line = lines[row];
        if (n === 0) line.length = Math.min(line.length, col);
        else if (n === 2) line.length = 0;
        else for (let c = 0; c <= col && c < line.length; c++) line[c] = ' ';
      }
      continue;
    }
    if (ch === '\r') col = 0;
    else if (ch === '\n') {
      row += 1;
      lines[row] ??= [];
      col = 0;
    } else if (ch === '\b') col = Math.max(0, col - 1);
    else if (ch >= ' ') {
      const line = lines[row];
      while (line.length < col) line.push(' ');
      line[col] = ch;
      col += 1;
    }
  }
  const text = lines.map((line) => line.join('').trimEnd());
  while (text.length && text[text.length - 1] === '') text.pop();
  return text;
}
