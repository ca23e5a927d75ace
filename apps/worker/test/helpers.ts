// Test helpers: real workers against the run's Redis with a private BullMQ prefix and data folder per
// test file, jobs enqueued the way the gateway enqueues them, the test media on a local origin, and
// small probes of what happened (a trap server, processes still running).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Job, Queue, type JobsOptions } from 'bullmq';
import { parseConfig, type Config } from '@reelay/config';
import { DOWNLOAD_QUEUE, type JobInput, type JobPayload, type JobResult } from '@reelay/contracts';
import { createLogger } from '@reelay/observability';
import { afterAll, beforeAll } from '@jest/globals';
import { startOrigin, testMedia, testRedisClient, type Origin, type TestMedia } from '@reelay/testkit';
import { startWorker, type RunningWorker, type WorkerDeps } from '../src/worker.js';
import type { RedisClient } from '@reelay/redis';

export function newJobId(): string {
  return randomBytes(16).toString('base64url');
}

/** A private folder for one test file's artifacts and temp files. */
export function tempDataDir(name: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `reelay-worker-${name}-`));
}

export function testConfig(env: Record<string, string> = {}): Config {
  return parseConfig({
    REDIS_URL: process.env.REDIS_URL,
    EGRESS_ALLOWLIST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    WORKER_CONCURRENCY: '2',
    ...env,
  });
}

export async function startTestWorker(
  options: { prefix: string; dataDir: string; env?: Record<string, string> } & Partial<WorkerDeps>,
): Promise<RunningWorker> {
  const { env, ...deps } = options;
  const config = testConfig({ DATA_DIR: options.dataDir, ...env });
  return startWorker({
    config,
    logger: createLogger({ name: 'worker-test', level: 'silent' }),
    metricsPort: 0,
    ...deps,
  });
}

/** One test file's worker stack, filled in by beforeAll and stopped by afterAll. */
export interface WorkerStack {
  prefix: string;
  media: TestMedia;
  origin: Origin;
  dataDir: string;
  worker: RunningWorker;
  queue: TestQueue;
}

/**
 * Registers beforeAll/afterAll that start the test media, a local origin (serving the media unless
 * told not to), a worker on its own queue prefix and data folder, and a producer queue; and stop them.
 */
export function useWorkerStack(
  name: string,
  options: { serveMedia?: boolean; env?: Record<string, string> } = {},
): WorkerStack {
  // Braces: a hash tag, so the queues also work on a Redis Cluster (REELAY_TEST_REDIS=cluster).
  const stack = { prefix: `{reelay-test-${name}-${process.pid}}` } as WorkerStack;
  beforeAll(async () => {
    stack.media = await testMedia();
    stack.origin = await startOrigin();
    if (options.serveMedia !== false) serveTestMedia(stack.origin, stack.media);
    stack.dataDir = tempDataDir(name);
    stack.worker = await startTestWorker({ prefix: stack.prefix, dataDir: stack.dataDir, env: options.env });
    stack.queue = new TestQueue(stack.prefix);
  });
  afterAll(async () => {
    await stack.worker?.stop();
    await stack.queue?.close();
    await stack.origin?.close();
    if (stack.dataDir) fs.rmSync(stack.dataDir, { recursive: true, force: true });
  });
  return stack;
}

export function payload(inputs: JobInput[], extra: Partial<JobPayload> = {}): JobPayload {
  const id = newJobId();
  return {
    id,
    operation: inputs.length === 2 ? 'merge' : 'convert',
    inputs,
    basename: 'clip',
    request_key: `test-${id}`,
    created_at: Date.now(),
    ...extra,
  };
}

/** The producer side, as the gateway uses it: job name `download`, job id = payload id. */
export class TestQueue {
  readonly queue: Queue;
  private readonly connection: RedisClient;

  constructor(readonly prefix: string) {
    this.connection = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
    this.queue = new Queue(DOWNLOAD_QUEUE, { connection: this.connection, prefix });
  }

  async add(job: JobPayload, opts: JobsOptions = {}): Promise<string> {
    await this.queue.add('download', job, { jobId: job.id, attempts: 1, ...opts });
    return job.id;
  }

  /** Polls until the job has completed or failed for good, then reads it (state first: a job read
   *  before it finished would lack its result). */
  async finished(id: string, timeoutMs = 20_000): Promise<Job<JobPayload, JobResult>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const state = await this.queue.getJobState(id);
      if (state === 'completed' || state === 'failed')
        return (await Job.fromId(this.queue, id)) as Job<JobPayload, JobResult>;
      if (Date.now() > deadline) throw new Error(`job ${id} is still ${state} after ${timeoutMs} ms`);
      await sleep(50);
    }
  }

  state(id: string): Promise<string> {
    return this.queue.getJobState(id);
  }

  async close(): Promise<void> {
    await this.queue.obliterate({ force: true });
    await this.queue.close();
    await this.connection.quit();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** The test media on the origin: /muxed.mp4, /video-only.mp4, /audio-only.m4a, /audio.mp3, /hls/*, /dash/*. */
export function serveTestMedia(origin: Origin, media: TestMedia): void {
  origin.file('/muxed.mp4', media.muxedMp4, 'video/mp4');
  origin.file('/video-only.mp4', media.videoOnlyMp4, 'video/mp4');
  origin.file('/audio-only.m4a', media.audioOnlyM4a, 'audio/mp4');
  origin.file('/audio.mp3', media.mp3, 'audio/mpeg');
  for (const name of fs.readdirSync(media.hlsDir))
    origin.file(
      `/hls/${name}`,
      path.join(media.hlsDir, name),
      name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t',
    );
  for (const name of fs.readdirSync(media.dashDir))
    origin.file(
      `/dash/${name}`,
      path.join(media.dashDir, name),
      name.endsWith('.mpd') ? 'application/dash+xml' : 'video/iso.segment',
    );
}

/**
 * Serves a file a few bytes at a time. `pace()` says how many bytes to send per 50 ms tick (0
 * pauses; Infinity sends the rest), so a test can hold a job mid-run and later let it finish.
 */
export function trickle(
  origin: Origin,
  route: string,
  file: string,
  contentType: string,
  pace: () => number,
  options: { firstOnly?: boolean } = {},
): void {
  const data = fs.readFileSync(file);
  let requests = 0;
  origin.route(route, (_req, res) => {
    res.writeHead(200, { 'content-type': contentType, 'content-length': data.length });
    // firstOnly: later requests (a second reader of the same URL) get the whole file at once.
    if (options.firstOnly && ++requests > 1) return void res.end(data);
    let sent = 0;
    const timer = setInterval(() => {
      const n = Math.min(pace(), data.length - sent);
      if (n > 0) res.write(data.subarray(sent, sent + n));
      sent += n;
      if (sent >= data.length) {
        clearInterval(timer);
        res.end();
      }
    }, 50);
    res.on('close', () => clearInterval(timer));
  });
}

/** A TCP server that records every connection made to it (the proof that nothing reached it). */
export async function startTrap(host: string): Promise<{ port: number; connections: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const trap = {
    port: 0,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = net.createServer((socket) => {
    trap.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  trap.port = (server.address() as net.AddressInfo).port;
  return trap;
}

/** Processes whose command line mentions `text` (Linux /proc), e.g. an ffmpeg writing a job's folder. */
export function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) pids.push(Number(entry));
    } catch {
      /* the process ended while we looked */
    }
  }
  return pids;
}

/** GET through the proxy the way ffmpeg does: absolute-form target, optional Basic credentials. */
export function proxyGet(
  proxyPort: number,
  target: string,
  options: { auth?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.auth) headers['proxy-authorization'] = `Basic ${Buffer.from(options.auth).toString('base64')}`;
    const req = http.request(
      { host: '127.0.0.1', port: proxyPort, method: 'GET', path: target, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** user:pass from a session's http_proxy URL. */
export function credentialsOf(env: Record<string, string | undefined>): string {
  const url = new URL(env.http_proxy!);
  return `${url.username}:${url.password}`;
}

/** The values of every series of `name` whose labels include `labels` (Prometheus text format). */
function series(text: string, name: string, labels: Record<string, string>): number[] {
  const values: number[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...match[2].matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) values.push(Number(match[3]));
  }
  return values;
}

/** The first matching series' value; undefined when there is none. */
export function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  return series(text, name, labels)[0];
}

/** The sum over every matching series (e.g. across error codes). */
export function sampleSum(text: string, name: string, labels: Record<string, string>): number {
  return series(text, name, labels).reduce((a, b) => a + b, 0);
}
