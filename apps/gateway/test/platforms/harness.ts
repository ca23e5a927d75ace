// Shared setup of the per-platform download tests: the local origin playing the platform (its API
// answers from the extractor fixtures, its media the ffmpeg-made test files), the real gateway with
// PLATFORM_* pointing at that origin, and one real worker per file on the gateway's queue prefix and
// data folder. Helpers extract a post, download a source byte for byte, and run a job to its artifact.
import { afterAll, beforeAll, expect } from '@jest/globals';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { parseConfig } from '@reelay/config';
import type { ExtractResult, JobView, Source } from '@reelay/contracts';
import { probe, type ProbeResult } from '@reelay/media';
import { createLogger } from '@reelay/observability';
import { ffmpegBinary, serveFile, startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { startWorker, type RunningWorker } from '@reelay/worker';
import { binary, buildGateway, type TestGateway } from '../helpers.js';

export { fixture } from '@reelay/testkit';

const run = promisify(execFile);

export const sha256 = (data: Buffer | string): string =>
  createHash('sha256')
    .update(typeof data === 'string' ? fs.readFileSync(data) : data)
    .digest('hex');

/** [type, codec] of each stream, in order. */
export const streams = (info: ProbeResult | undefined): [string, string | undefined][] =>
  (info?.streams ?? []).map((s) => [s.type, s.codec]);

export type ImageKind = 'jpg' | 'png' | 'gif' | 'webp';

export interface Downloaded {
  status: number;
  sha256: string;
  contentType: string | undefined;
  headers: Record<string, string>;
}

export interface JobRun {
  /** The status and error of the POST that was to start the job. */
  started: { status: number; error: unknown; locationIsStatusUrl: boolean };
  job: JobView;
  /** ffprobe's view of the artifact; undefined unless the job completed. */
  info?: ProbeResult;
  /** The artifact's Content-Type as served, and whether it matches the job's record of it. */
  artifactTypeMatches: boolean;
}

export interface HarnessOptions {
  /** Short name for temp folders and the queue prefix. */
  name: string;
  /** PLATFORM_* (and other) gateway variables, once the origin's address is known. */
  env?: (origin: Origin) => Record<string, string>;
  /** Images to make with ffmpeg, each with its own pixels: name → format. */
  images?: Record<string, ImageKind>;
  /** Routes of the origin; runs before the gateway is built. */
  setup: (h: Harness) => void;
}

export interface Harness {
  origin: Origin;
  media: TestMedia;
  gw: TestGateway;
  /** A private folder for made files and fetched artifacts. */
  tmp: string;
  /** The path of an image made for this file. */
  image(name: string): string;
  /** A copy of `file` with a few bytes appended, so two routes serve different bytes. */
  variant(file: string, tag: string): string;
  /** Serves the test HLS rendition with its playlist at `playlistPath` and segments beside it. */
  serveHls(playlistPath: string): void;
  /** Serves the test DASH rendition with its manifest at `mpdPath` and init/chunk files beside it. */
  serveDash(mpdPath: string): void;
  /** Referer headers the origin saw for the HLS and DASH files it served, by route. */
  referers: Map<string, string[]>;
  /** The origin's request count for paths under `prefix` (queries included). */
  hitsUnder(prefix: string): number;
  /** POST /api/v1/extract; the result must be a success. */
  extract(url: string): Promise<ExtractResult>;
  /** The first source of media item `index` that has every field of `match`. */
  source(result: ExtractResult, match: Partial<Source>, index?: number): Source;
  /** POST /api/v1/download {url}: the status, the SHA-256 of the bytes streamed, their type and the headers. */
  download(url: string): Promise<Downloaded>;
  /**
   * POST /api/v1/download that starts a job, followed until it ends: the 202 answer, the job as last
   * seen, and (when it completed) ffprobe's view of its artifact and the artifact's Content-Type.
   */
  runJob(body: Record<string, string>): Promise<JobRun>;
}

/** Registers beforeAll/afterAll for one test file and returns the harness they fill in. */
export function platformHarness(options: HarnessOptions): Harness {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `reelay-gw-${options.name}-`));
  const dataDir = path.join(tmp, 'data');
  const prefix = `test-${options.name}-${randomBytes(4).toString('hex')}`;
  const images = new Map<string, string>();
  let worker: RunningWorker | undefined;

  const h = {
    tmp,
    referers: new Map<string, string[]>(),
    image(name: string): string {
      const file = images.get(name);
      if (!file) throw new Error(`no image named ${name}`);
      return file;
    },
    variant(file: string, tag: string): string {
      const out = path.join(tmp, `${tag}-${path.basename(file)}`);
      fs.writeFileSync(out, Buffer.concat([fs.readFileSync(file), Buffer.from(`\n${tag}\n`)]));
      return out;
    },
    serveRecorded(route: string, file: string, contentType: string): void {
      h.origin.route(route, (req, res) => {
        const seen = h.referers.get(route) ?? [];
        seen.push(String(req.headers.referer ?? ''));
        h.referers.set(route, seen);
        serveFile(req, res, file, contentType);
      });
    },
    serveHls(playlistPath: string): void {
      const dir = path.posix.dirname(playlistPath);
      h.serveRecorded(playlistPath, path.join(h.media.hlsDir, 'index.m3u8'), 'application/vnd.apple.mpegurl');
      for (const name of fs.readdirSync(h.media.hlsDir).filter((n) => n.endsWith('.ts')))
        h.serveRecorded(`${dir}/${name}`, path.join(h.media.hlsDir, name), 'video/mp2t');
    },
    serveDash(mpdPath: string): void {
      const dir = path.posix.dirname(mpdPath);
      h.serveRecorded(mpdPath, path.join(h.media.dashDir, 'manifest.mpd'), 'application/dash+xml');
      for (const name of fs.readdirSync(h.media.dashDir).filter((n) => n.endsWith('.m4s')))
        h.serveRecorded(`${dir}/${name}`, path.join(h.media.dashDir, name), 'video/iso.segment');
    },
    hitsUnder(prefixPath: string): number {
      return [...h.origin.hits].filter(([p]) => p.startsWith(prefixPath)).reduce((n, [, count]) => n + count, 0);
    },
    async extract(url: string): Promise<ExtractResult> {
      const res = await request(h.gw.app).post('/api/v1/extract').send({ url });
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 200, error: undefined });
      return res.body.data as ExtractResult;
    },
    source(result: ExtractResult, match: Partial<Source>, index = 0): Source {
      const sources = result.media[index]?.sources ?? [];
      const found = sources.find((s) => Object.entries(match).every(([k, v]) => s[k as keyof Source] === v));
      expect({ match, found: found !== undefined, sources }).toMatchObject({ match, found: true });
      return found!;
    },
    async download(url: string): Promise<Downloaded> {
      const res = await request(h.gw.app).post('/api/v1/download').send({ url }).buffer(true).parse(binary);
      const headers = res.headers as Record<string, string>;
      return { status: res.status, sha256: sha256(res.body as Buffer), contentType: headers['content-type'], headers };
    },
    async runJob(body: Record<string, string>): Promise<JobRun> {
      const res = await request(h.gw.app).post('/api/v1/download').send(body);
      const statusUrl: string | undefined = res.body.data?.status_url;
      const started = {
        status: res.status,
        error: res.body.error,
        locationIsStatusUrl: statusUrl !== undefined && res.headers.location === statusUrl,
      };
      if (!statusUrl) return { started, job: res.body.data, artifactTypeMatches: false };
      const deadline = Date.now() + 20_000;
      let job: JobView;
      for (;;) {
        job = (await request(h.gw.app).get(statusUrl).expect(200)).body.data;
        if (['completed', 'failed', 'expired'].includes(job.status) || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      if (job.status !== 'completed' || !job.artifact) return { started, job, artifactTypeMatches: false };
      const file = await request(h.gw.app).get(job.artifact.url).buffer(true).parse(binary);
      const local = path.join(tmp, `${job.id}-${job.artifact.filename}`);
      fs.writeFileSync(local, file.body as Buffer);
      return {
        started,
        job,
        info: await probe(local),
        artifactTypeMatches: file.status === 200 && file.headers['content-type'] === job.artifact.content_type,
      };
    },
  } as Harness & { serveRecorded(route: string, file: string, contentType: string): void };

  beforeAll(async () => {
    h.media = await testMedia();
    h.origin = await startOrigin();
    const names = Object.entries(options.images ?? {});
    await Promise.all(
      names.map(async ([name, kind], i) => {
        // A different size per image gives each its own pixels; GIFs move for half a second.
        const out = path.join(tmp, `${name}.${kind}`);
        const source =
          kind === 'gif' ? `testsrc2=size=${64 + 2 * i}x48:rate=10:duration=0.5` : `testsrc2=size=${64 + 2 * i}x48`;
        await run(ffmpegBinary(), [
          '-hide_banner',
          '-loglevel',
          'error',
          '-y',
          '-f',
          'lavfi',
          '-i',
          source,
          ...(kind === 'gif' ? [] : ['-frames:v', '1']),
          out,
        ]);
        images.set(name, out);
      }),
    );
    options.setup(h);
    h.gw = await buildGateway({
      env: { DATA_DIR: dataDir, ...options.env?.(h.origin) },
      deps: { queuePrefix: prefix },
    });
    const config = parseConfig({
      REDIS_URL: process.env.REDIS_URL,
      EGRESS_ALLOWLIST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      WORKER_CONCURRENCY: '1',
    });
    worker = await startWorker({
      config,
      logger: createLogger({ name: `${options.name}-worker`, level: 'silent' }),
      metricsPort: 0,
      prefix,
      dataDir,
    });
  });

  afterAll(async () => {
    await worker?.stop();
    await h.gw?.close();
    await h.origin?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  return h;
}
