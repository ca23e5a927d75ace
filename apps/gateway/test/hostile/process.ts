// A real gateway process for hostile-input tests: the built app (apps/gateway/dist/main.js) with its
// production server settings, on the run's Redis, with the local origin allow-listed, so the peak
// memory a test asserts is the gateway's own (VmHWM of its pid), not the test runner's.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { measurePeak, recordFigure, type Measured } from '@reelay/testkit';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/** Builds the gateway from the current sources (incremental: seconds when nothing changed). */
export function buildGatewayApp(): void {
  const build = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'apps/gateway/tsconfig.json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (build.status !== 0) throw new Error(`build failed: ${build.stdout}${build.stderr}`);
}

export interface GatewayProcess {
  base: string;
  pid: number;
  /** Runs fn and reports its time and the gateway's peak memory over it. */
  measure<T>(name: string, fn: () => Promise<T>, outcome: (value: T) => string): Promise<Measured<T>>;
  stop(): Promise<void>;
}

export async function startGatewayProcess(env: Record<string, string> = {}): Promise<GatewayProcess> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-hostile-'));
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'apps/gateway/dist/main.js')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      PATH: process.env.PATH,
      REDIS_URL: process.env.REDIS_URL,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      EGRESS_ALLOWLIST: '127.0.0.1',
      RATE_LIMIT_V1_PER_MIN: '0',
      EXTRACT_CACHE_SECONDS: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
  });
  const lines = readline.createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the gateway did not start within 15 s')), 15_000);
    child.once('exit', (code) => reject(new Error(`the gateway exited (${code}) before listening`)));
    lines.on('line', (line) => {
      const m = /"port":(\d+).*gateway listening/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  const pid = child.pid!;
  return {
    base: `http://127.0.0.1:${port}`,
    pid,
    async measure(name, fn, outcome) {
      const m = await measurePeak(fn, pid);
      recordFigure(`gateway ${name}`, m, 'value' in m.outcome ? outcome(m.outcome.value) : String(m.outcome.error));
      return m;
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
