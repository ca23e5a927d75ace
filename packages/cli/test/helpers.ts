// The real stack the CLI talks to in its end-to-end tests: a gateway and a worker on a private queue
// and data folder, the run's Redis, the ffmpeg test media on a local origin, and a forwarding proxy
// in front of the gateway that records every request and can cut or stall an artifact transfer. The
// CLI itself runs as a child process from its build, as a user runs it.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from '@jest/globals';
import { createLogger } from '@reelay/observability';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { buildGateway, testConfig, type TestGateway } from '../../../apps/gateway/test/helpers.js';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const ENTRY = path.join(ROOT, 'packages/cli/dist/main.js');

/** What the proxy does to the next response whose path matches: cut the connection or stall it
 *  after N body bytes, or cut it once the first server-sent event has gone through. */
export interface Interference {
  path: RegExp;
  kind: 'cut' | 'stall';
  after: number | 'first-event';
}

export interface Proxy {
  base: string;
  /** Method, path and the headers that matter, for every request forwarded. */
  seen: {
    method: string;
    path: string;
    range?: string;
    ifRange?: string;
    lastEventId?: string;
    body: string;
    status?: number;
  }[];
  /** Applies to the next matching request only. */
  interfere(rule: Interference): void;
  close(): Promise<void>;
}

async function startProxy(target: string): Promise<Proxy> {
  const sockets = new Set<import('node:net').Socket>();
  const rules: Interference[] = [];
  const proxy = { seen: [], interfere: (rule: Interference) => void rules.push(rule) } as unknown as Proxy;
  const server = http.createServer((req, res) => {
    const entry: Proxy['seen'][number] = {
      method: req.method!,
      path: req.url!,
      range: req.headers.range,
      ifRange: req.headers['if-range'] as string | undefined,
      lastEventId: req.headers['last-event-id'] as string | undefined,
      body: '',
    };
    proxy.seen.push(entry);
    req.on('data', (c: Buffer) => (entry.body += c.toString()));
    const ruleAt = rules.findIndex((r) => r.path.test(req.url!));
    const rule = ruleAt >= 0 ? rules.splice(ruleAt, 1)[0] : undefined;
    const upstream = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (up) => {
      entry.status = up.statusCode;
      res.writeHead(up.statusCode!, up.headers);
      if (!rule) return void up.pipe(res);
      let sent = 0;
      let text = '';
      up.on('data', (chunk: Buffer) => {
        if (res.writableEnded) return;
        text += chunk.toString('latin1');
        // Where to stop: after N bytes, or at the blank line that ends the first `job` event.
        const eventEnd = text.indexOf('\n\n', text.indexOf('event: job'));
        const limit =
          rule.after === 'first-event'
            ? text.includes('event: job') && eventEnd >= 0
              ? eventEnd + 2
              : Infinity
            : rule.after;
        const part = chunk.subarray(0, Math.max(0, limit - sent));
        sent += part.length;
        if (sent < limit) return void res.write(part);
        // cut: the connection closes mid-body (after what was written, short of its end); stall: it
        // stays open and silent until the client leaves.
        res.write(part, () => {
          if (rule.kind === 'cut') res.socket?.end();
        });
        up.destroy();
      });
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  return proxy;
}

export interface CliStack {
  origin: Origin;
  media: TestMedia;
  gateway: TestGateway;
  /** The gateway's own address (the proxy forwards to it). */
  direct: string;
  proxy: Proxy;
  /** A fresh folder per test to run the CLI in. */
  workDir(): string;
}

/** Registers beforeAll/afterAll that build the CLI and start the stack; stops it all afterwards. */
export function useCliStack(name: string): CliStack {
  const stack = {} as CliStack;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `reelay-cli-${name}-`));
  const queuePrefix = `test-cli-${name}-${randomBytes(4).toString('hex')}`;
  const env = { DATA_DIR: path.join(dataDir, 'data'), RATE_LIMIT_V1_PER_MIN: '0', MAX_ACTIVE_JOBS_PER_CLIENT: '1000' };
  let worker: RunningWorker | undefined;
  let server: http.Server | undefined;
  let dirs = 0;
  beforeAll(async () => {
    const build = spawnSync(
      process.execPath,
      [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'packages/cli/tsconfig.json'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    if (build.status !== 0) throw new Error(`the CLI does not build:\n${build.stdout}${build.stderr}`);
    stack.media = await testMedia();
    stack.origin = await startOrigin();
    stack.gateway = await buildGateway({ env, deps: { queuePrefix } });
    server = stack.gateway.app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server!.once('listening', resolve));
    stack.direct = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    stack.proxy = await startProxy(stack.direct);
    worker = await startWorker({
      config: testConfig(env),
      logger: createLogger({ name: 'worker-test', level: 'silent' }),
      metricsPort: 0,
      prefix: queuePrefix,
      dataDir: env.DATA_DIR,
    });
    stack.workDir = () => {
      const dir = path.join(dataDir, `run-${(dirs += 1)}`);
      fs.mkdirSync(dir);
      return dir;
    };
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await stack.proxy?.close();
    server?.closeAllConnections();
    if (server) await new Promise((resolve) => server!.close(resolve));
    await stack.gateway?.close();
    await stack.origin?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return stack;
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunningCli {
  child: import('node:child_process').ChildProcess;
  stderr(): string;
  done: Promise<CliRun>;
}

/**
 * Where a run keeps its jobs' control tokens: beside its folder (never the user's own state), so runs
 * in one folder share them as one user's runs do.
 */
export const stateHome = (cwd: string) => `${cwd}-state`;

/** Starts `reelay ARGS` in `cwd` with REELAY_SERVER set (unless the args name a server). */
export function startCli(
  args: string[],
  options: { cwd: string; server?: string; env?: Record<string, string> },
): RunningCli {
  const child = spawn(process.execPath, [ENTRY, ...args], {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH,
      HOME: os.homedir(),
      XDG_STATE_HOME: stateHome(options.cwd),
      ...(options.server ? { REELAY_SERVER: options.server } : {}),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<CliRun>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, stderr: () => stderr, done };
}

export function runCli(
  args: string[],
  options: { cwd: string; server?: string; env?: Record<string, string> },
): Promise<CliRun> {
  return startCli(args, options).done;
}

/** ffprobe's stream types of a file: ['video', 'audio'] for a merged mp4. */
export function streamTypes(file: string): string[] {
  const probe = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type', '-of', 'csv=p=0', file], {
    encoding: 'utf8',
  });
  return probe.stdout.split('\n').filter(Boolean).sort().reverse();
}

export async function until(check: () => boolean, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Runs `reelay ARGS` on a pseudo-terminal (util-linux `script`), its stdout sent to `stdoutFile`:
 *  `terminal()` is exactly what the terminal showed, i.e. stderr; `type()` is typing into it (a
 *  Ctrl-C typed there is delivered by the terminal as SIGINT, as to a person's shell). */
export function startInTerminal(
  args: string[],
  options: { cwd: string; server: string; stdoutFile: string; env?: Record<string, string> },
) {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = `${[process.execPath, ENTRY, ...args].map(quote).join(' ')} > ${quote(options.stdoutFile)}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH,
      HOME: os.homedir(),
      XDG_STATE_HOME: stateHome(options.cwd),
      TERM: 'xterm-256color',
      REELAY_SERVER: options.server,
      ...options.env,
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let terminal = '';
  child.stdout!.on('data', (c: Buffer) => (terminal += c.toString()));
  const done = new Promise<{ code: number | null; terminal: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, terminal })),
  );
  return { terminal: () => terminal, type: (text: string) => child.stdin!.write(text), done };
}

export function runInTerminal(
  args: string[],
  options: { cwd: string; server: string; stdoutFile: string; env?: Record<string, string> },
): Promise<{ code: number | null; terminal: string }> {
  const run = startInTerminal(args, options);
  return run.done;
}
