// A worker with MEDIA_PROXY_URLS and COOKIES_FILE: what ffmpeg reads for a job leaves through the
// media proxy (a real tinyproxy, whose log says so), never the extraction one, with the cookie file's
// cookies for the origin.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { decodeJobError } from '@reelay/contracts';
import {
  describeWithTools,
  freePort,
  PROXY_TOOLS,
  serveFile,
  startOrigin,
  startTinyproxy,
  testMedia,
  type Origin,
  type RealProxy,
  type TestMedia,
} from '@reelay/testkit';
import type { RunningWorker } from '../src/worker.js';
import { payload, startTestWorker, tempDataDir, TestQueue } from './helpers.js';

const PREFIX = `reelay-test-media-proxy-${process.pid}`;
let media: TestMedia;
let origin: Origin;
let proxy: RealProxy;
let worker: RunningWorker;
let queue: TestQueue;
let dataDir: string;
const cookies: (string | undefined)[] = [];

describeWithTools('a worker behind MEDIA_PROXY_URLS', PROXY_TOOLS, () => {
  beforeAll(async () => {
    media = await testMedia();
    origin = await startOrigin();
    origin.route('/muxed.mp4', (req, res) => {
      cookies.push(req.headers.cookie);
      serveFile(req, res, media.muxedMp4, 'video/mp4');
    });
    proxy = await startTinyproxy({ user: 'worker', pass: 'media-pass' });
    dataDir = tempDataDir('media-proxy');
    fs.writeFileSync(path.join(dataDir, 'cookies.txt'), '127.0.0.1\tFALSE\t/\tFALSE\t0\tcdn_token\tt0k3n\n');
    worker = await startTestWorker({
      prefix: PREFIX,
      dataDir,
      env: {
        EXTRACT_PROXY_URLS: `http://127.0.0.1:${await freePort()}`,
        MEDIA_PROXY_URLS: `http://worker:media-pass@127.0.0.1:${proxy.port}`,
        COOKIES_FILE: path.join(dataDir, 'cookies.txt'),
      },
    });
    queue = new TestQueue(PREFIX);
  });

  afterAll(async () => {
    await worker?.stop();
    await queue?.close();
    await Promise.all([origin?.close(), proxy?.stop()]);
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test("ffmpeg's input leaves through the media proxy with the cookie file's cookie", async () => {
    const job = payload([{ url: origin.url('/muxed.mp4'), stream_profile: 'muxed_progressive' }], {
      operation: 'convert',
      format: 'mp3',
    });
    await queue.add(job);
    const done = await queue.finished(job.id);
    expect({
      state: await done.getState(),
      error: done.failedReason ? decodeJobError(done.failedReason) : undefined,
    }).toEqual({ state: 'completed', error: undefined });
    expect(proxy.log()).toContain(`CONNECT 127.0.0.1:${origin.port} `);
    expect(cookies.length).toBeGreaterThanOrEqual(1);
    expect(cookies.every((cookie) => cookie === 'cdn_token=t0k3n')).toBe(true);
  });
});
