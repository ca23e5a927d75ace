// The gateway with PROXY_URLS and COOKIES_FILE from its configuration: extraction and direct streams
// leave through their own proxies (the real tinyproxy's log says so), a dead proxy is logged by its
// address alone, cookies reach the origin, and no password reaches a log line or a response.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { createLogger } from '@reelay/observability';
import {
  describeWithTools,
  freePort,
  PROXY_TOOLS,
  startOrigin,
  startTinyproxy,
  testMedia,
  type Origin,
  type RealProxy,
  type TestMedia,
} from '@reelay/testkit';
import { buildGateway, type TestGateway } from './helpers.js';

const PASS = 'Gw-s3cret-pass';
let media: TestMedia;
let origin: Origin;
let extractProxy: RealProxy;
let mediaProxy: RealProxy;
let gw: TestGateway;
let dir: string;
const lines: string[] = [];
const cookiesSeen: (string | undefined)[] = [];

describeWithTools('the gateway behind outbound proxies', PROXY_TOOLS, () => {
  beforeAll(async () => {
    media = await testMedia();
    origin = await startOrigin();
    origin.route('/clip.mp4', (req, res) => {
      cookiesSeen.push(req.headers.cookie);
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(fs.statSync(media.muxedMp4).size) });
      fs.createReadStream(media.muxedMp4).pipe(res);
    });
    [extractProxy, mediaProxy] = await Promise.all([startTinyproxy({ user: 'gw', pass: PASS }), startTinyproxy()]);
    const dead = await freePort();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-cookies-'));
    fs.writeFileSync(path.join(dir, 'cookies.txt'), `127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tcookie-value\n`);
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        cb();
      },
    });
    gw = await buildGateway({
      env: {
        EXTRACT_PROXY_URLS: `http://gw:${PASS}@127.0.0.1:${dead},http://gw:${PASS}@127.0.0.1:${extractProxy.port}`,
        MEDIA_PROXY_URLS: `http://127.0.0.1:${mediaProxy.port}`,
        COOKIES_FILE: path.join(dir, 'cookies.txt'),
      },
      // The gateway's own Egress, built from the configuration above (the helper's has no proxies).
      deps: { egress: undefined, logger: createLogger({ name: 'gateway-test', level: 'trace', destination: sink }) },
    });
  });

  afterAll(async () => {
    await gw?.close();
    await Promise.all([origin?.close(), extractProxy?.stop(), mediaProxy?.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('an extract leaves through the extraction proxies, its download through the media proxy, both with the cookies', async () => {
    const authority = `CONNECT 127.0.0.1:${origin.port} `;
    const extract = await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url('/clip.mp4') })
      .expect(200);
    expect(extractProxy.log()).toContain(authority);
    expect(mediaProxy.log()).not.toContain(authority);
    const res = await request(gw.app)
      .post('/api/v1/download')
      .send({ url: extract.body.data.media[0].sources[0].url })
      .expect(200);
    expect(res.headers['content-type']).toBe('video/mp4');
    expect(mediaProxy.log()).toContain(authority);
    expect(cookiesSeen.length).toBeGreaterThanOrEqual(2);
    expect(cookiesSeen.every((cookie) => cookie === 'session=cookie-value')).toBe(true);
  });

  test('the dead proxy is logged by its address, and no password or cookie reaches the log', async () => {
    await new Promise((resolve) => setTimeout(resolve, 20)); // pino writes asynchronously
    const skipped = lines.filter((line) => line.includes('outbound proxy unreachable'));
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatch(/"proxy":"http:\/\/127\.0\.0\.1:\d+"/);
    for (const line of lines) {
      expect(line).not.toContain(PASS);
      expect(line).not.toContain('cookie-value');
    }
  });

  test('with every proxy dead an extract answers 502 upstream_error, naming no proxy and no password', async () => {
    const dead = await gwWith(`http://gw:${PASS}@127.0.0.1:${await freePort()}`);
    try {
      const res = await request(dead.app)
        .post('/api/v1/extract')
        .send({ url: origin.url('/clip.mp4') });
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 502, code: 'upstream_error' });
      expect(JSON.stringify(res.body)).not.toMatch(new RegExp(`${PASS}|127\\.0\\.0\\.1:\\d`));
    } finally {
      await dead.close();
    }
  });
});

const gwWith = (proxies: string) => buildGateway({ env: { PROXY_URLS: proxies }, deps: { egress: undefined } });
