// Tests that need a system program (chromium, redis-sentinel, prometheus…) that `pnpm install` cannot
// provide: skipped with a message saying what to install when it is missing locally, but failing
// under CI=true, where .ci/run installs every one of them, so a missing program never passes silently.
import type { describe as Describe } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';

// jest's global, not an import: importing @jest/globals throws outside jest, and the benchmarks load
// this package too.
const jestDescribe = (): typeof Describe => (globalThis as unknown as { describe: typeof Describe }).describe;

export interface Tool {
  /** A name looked up on PATH, or an absolute path. */
  bin: string;
  /** How to get it, for the skip message (e.g. "apt-get install prometheus"). */
  install: string;
}

/** Whether `bin` (a name on PATH or an absolute path) is an executable file. */
export function hasTool(bin: string): boolean {
  const candidates = path.isAbsolute(bin)
    ? [bin]
    : (process.env.PATH ?? '')
        .split(path.delimiter)
        .filter(Boolean)
        .map((dir) => path.join(dir, bin));
  return candidates.some((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

/** `describe`, or `describe.skip` with a message when a tool is missing outside CI. */
export function describeWithTools(name: string, tools: Tool[], fn: () => void): void {
  const missing = tools.filter((tool) => !hasTool(tool.bin));
  const describe = jestDescribe();
  if (missing.length === 0 || process.env.CI) return describe(name, fn);
  const what = missing.map((tool) => `${tool.bin} (${tool.install})`).join(', ');
  // stderr, not console.warn: jest hides the console of a suite whose tests were all skipped.
  process.stderr.write(`${name}: skipped, missing ${what}; CI fails instead of skipping.\n`);
  describe.skip(name, fn);
}
