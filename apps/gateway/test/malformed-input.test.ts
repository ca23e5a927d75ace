import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { Worker } from 'bullmq';
import request from 'supertest';
import { FsArtifactStore } from '@reelay/artifacts';
import { DOWNLOAD_QUEUE, type JobPayload, type JobResult } from '@reelay/contracts';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { answerClientErrors } from '../src/http/client-error.js';
import { buildGateway, testRedis, type TestGateway } from './helpers.js';
import { duplicateRedis } from '@reelay/redis';

let origin: Origin;
let media: TestMedia;
let gw: TestGateway;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-malformed-'));
const artifacts = new FsArtifactStore(dataDir);
const prefix = `test-bad-${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
  // A title with an unpaired surrogate (JSON-LD may carry one as "\ud800") and a right-to-left override.
  origin.body(
    '/page.html',
    `<html><head><title>x</title><script type="application/ld+json">{"@type":"VideoObject","name":"a\\ud800b \\u202egpj.exe","contentUrl":"/media/clip.mp4"}</script></head>
    <body><video><source src="/media/clip.mp4" type="video/mp4"></video></body></html>`,
    'text/html',
  );
  gw = await buildGateway({ env: { DATA_DIR: dataDir }, deps: { artifacts, queuePrefix: prefix } });
});

afterAll(async () => {
  await gw.close();
  await origin.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Posts raw bytes (supertest would serialise a Buffer as JSON when the type is JSON). */
async function postRaw(pathname: string, headers: Record<string, string>, body: Buffer): Promise<request.Response> {
  let req = request(gw.app)
    .post(pathname)
    .serialize((data: Buffer) => data as unknown as string);
  for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
  return req.send(body);
}

function expectEnvelope(res: request.Response, status: number, code: string): void {
  expect({ status: res.status, type: res.headers['content-type'], body: res.body }).toEqual({
    status,
    type: 'application/json; charset=utf-8',
    body: { success: false, error: { code, message: expect.any(String) } },
  });
}

describe('malformed paths and bodies are answered with the envelope, never 500', () => {
  test.each(['/api/v1/jobs/%zz', '/api/v1/jobs/%E0%A4%A/artifact', '/api/v1/jobs/%'])(
    'GET %s is 400 invalid_request',
    async (url) => {
      expectEnvelope(await request(gw.app).get(url), 400, 'invalid_request');
    },
  );

  test.each([
    ['gzip', Buffer.from('this is not gzip')],
    ['deflate', Buffer.from('nor deflate')],
    ['br', Buffer.from('nor brotli at all')],
    ['gzip', zlib.gzipSync('{"url": "http://127.0.0.1/x"}').subarray(0, 12)],
  ])('a corrupt %s body is 400 invalid_request', async (encoding, body) => {
    const res = await postRaw(
      '/api/v1/extract',
      { 'Content-Type': 'application/json', 'Content-Encoding': encoding },
      body,
    );
    expectEnvelope(res, 400, 'invalid_request');
  });

  // A clip's numbers are checked before the source is looked up, so any url shows them.
  test.each([
    ['{"url":"http://127.0.0.1/x","clip":{"start":1e400,"end":2}}', 'invalid_request'], // JSON reads 1e400 as Infinity: not a number of seconds
    ['{"url":"http://127.0.0.1/x","clip":{"start":-1e-9,"end":2}}', 'invalid_clip'], // negative, though it rounds to -0
    ['{"url":"http://127.0.0.1/x","clip":{"start":NaN,"end":2}}', 'invalid_request'],
    ['{"url":"http://127.0.0.1/x","clip":{"start":"0x10","end":"1e3"}}', 'invalid_request'],
    ['{"url":"http://127.0.0.1/x","clip":{"start":0,"end":2,"mode":["fast"]}}', 'invalid_request'],
    ['{"url":"http://127.0.0.1/x","clip":{"start":0,"end":2},"clip":{"start":5,"end":1}}', 'invalid_clip'], // the last duplicate key wins
  ])('the clip in %s is 400 %s', async (body, code) => {
    const res = await postRaw('/api/v1/download', { 'Content-Type': 'application/json' }, Buffer.from(body));
    expectEnvelope(res, 400, code);
  });

  test('a body in an encoding we do not speak is 415 unsupported_media_type', async () => {
    const res = await postRaw(
      '/api/v1/extract',
      { 'Content-Type': 'application/json', 'Content-Encoding': 'compress' },
      Buffer.from('{}'),
    );
    expectEnvelope(res, 415, 'unsupported_media_type');
  });

  test('a well-formed gzip body is still read', async () => {
    const res = await postRaw(
      '/api/v1/extract',
      { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      zlib.gzipSync('{"url": "http://127.0.0.2/x"}'),
    );
    // Decoded and parsed: the URL reaches the egress check, which refuses it before connecting.
    expectEnvelope(res, 403, 'url_blocked');
  });
});

describe('file names with unpaired surrogates and bidi controls', () => {
  async function source(): Promise<string> {
    const data = (
      await request(gw.app)
        .post('/api/v1/extract')
        .send({ url: origin.url('/page.html') })
        .expect(200)
    ).body.data;
    return data.media[0].sources[0].url;
  }

  test('a client filename with a lone surrogate streams, named with U+FFFD and without the override', async () => {
    const url = await source();
    const res = await request(gw.app)
      .post('/api/v1/download')
      .send({ url, filename: 'a\ud800b\u202egpj.exe' })
      .expect(200);
    expect(res.headers['content-type']).toBe('video/mp4');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename=a_bgpj.exe.mp4; filename*=UTF-8''a%EF%BF%BDbgpj.exe.mp4`,
    );
  });

  test('a page title with a lone surrogate and U+202E streams with a safe name', async () => {
    const res = await request(gw.app)
      .post('/api/v1/download')
      .send({ url: await source() })
      .expect(200);
    expect(res.headers['content-disposition']).not.toMatch(/%E2%80%AE/i);
    expect(res.headers['content-disposition']).toMatch(/filename\*=UTF-8''a%EF%BF%BDb%20gpj\.exe\.mp4$/);
  });

  test("a completed job whose stored file name has a lone surrogate is still served, as the file's type", async () => {
    const queued = await request(gw.app)
      .post('/api/v1/download')
      .send({ url: await source(), format: 'webm' })
      .expect(202);
    const connection = await testRedis();
    const workerConnection = duplicateRedis(connection, {
      maxRetriesPerRequest: null,
      enableOfflineQueue: true,
      commandTimeout: undefined,
    });
    // A stand-in worker that stores the name unsanitised, as an older worker might have.
    const worker = new Worker<JobPayload, JobResult>(
      DOWNLOAD_QUEUE,
      async (job) => {
        const file = path.join(await artifacts.makeTempDir(job.id!), 'out');
        fs.copyFileSync(media.muxedMp4, file);
        const meta = await artifacts.put(job.id!, file, {
          filename: 'odd \ud800 name.webm',
          content_type: 'video/webm',
          expires_at: Date.now() + 60_000,
        });
        return {
          filename: meta.filename,
          content_type: meta.content_type,
          size: meta.size,
          expires_at: meta.expires_at,
        };
      },
      { connection: workerConnection, prefix },
    );
    try {
      const deadline = Date.now() + 10_000;
      let view;
      do {
        view = (await request(gw.app).get(`/api/v1/jobs/${queued.body.data.job_id}`)).body.data;
        if (view.status !== 'completed') await new Promise((r) => setTimeout(r, 100));
      } while (view.status !== 'completed' && Date.now() < deadline);
      const file = await request(gw.app).get(view.artifact.url).expect(200);
      expect(file.headers['content-type']).toBe('video/webm');
      expect(file.headers['content-disposition']).toContain(`filename*=UTF-8''odd%20%EF%BF%BD%20name.webm`);
    } finally {
      await worker.close();
      await workerConnection.quit();
      await connection.quit();
    }
  });
});

describe("Node's own refusals of malformed HTTP carry the envelope", () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer({ maxHeaderSize: 4096 }, gw.app);
    answerClientErrors(server, gw.allowedMethods); // as main.ts does
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function raw(bytes: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
      let reply = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (reply += chunk));
      socket.on('end', () => resolve(reply));
      socket.on('error', reject);
      socket.setTimeout(5000, () => socket.destroy(new Error('no answer')));
    });
  }

  function parse(reply: string): { status: number; type: string | undefined; body: unknown } {
    const [head, body] = reply.split('\r\n\r\n');
    return {
      status: Number(head.split(' ')[1]),
      type: /content-type: ([^\r]+)/i.exec(head)?.[1],
      body: JSON.parse(body),
    };
  }

  test('a broken request line is 400 with the envelope', async () => {
    expect(parse(await raw('GARBAGE\r\n\r\n'))).toEqual({
      status: 400,
      type: 'application/json; charset=utf-8',
      body: { success: false, error: { code: 'invalid_request', message: expect.any(String) } },
    });
  });

  test('oversized headers are 431 with the envelope', async () => {
    const reply = parse(await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(8000)}\r\n\r\n`));
    expect(reply).toEqual({
      status: 431,
      type: 'application/json; charset=utf-8',
      body: { success: false, error: { code: 'headers_too_large', message: expect.any(String) } },
    });
  });

  test('CONNECT, which Node would answer by closing the socket, is 400 with the envelope: this is no proxy', async () => {
    expect(parse(await raw('CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n'))).toEqual({
      status: 400,
      type: 'application/json; charset=utf-8',
      body: { success: false, error: { code: 'invalid_request', message: expect.any(String) } },
    });
  });

  test('CONNECT to a path the gateway serves is 405 with its Allow header, even with tunnel bytes after it', async () => {
    const reply = await raw('CONNECT /api/v1/extract HTTP/1.1\r\nHost: x\r\n\r\nSSH-2.0-hello\r\n');
    expect(parse(reply)).toEqual({
      status: 405,
      type: 'application/json; charset=utf-8',
      body: { success: false, error: { code: 'method_not_allowed', message: expect.any(String) } },
    });
    expect(reply).toMatch(/\r\nAllow: POST\r\n/);
  });

  test('TRACE and PROPFIND on a known path are 405 with Allow; on an unknown path, 404', async () => {
    const trace = await raw('TRACE /api/v1/extract HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(parse(trace)).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });
    expect(trace).toMatch(/\r\nallow: POST\r\n/i);
    const propfind = await raw('PROPFIND /api/v1/jobs/abc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(parse(propfind)).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });
    expect(propfind).toMatch(/\r\nallow: GET, HEAD, DELETE\r\n/i); // DELETE cancels the job
    expect(parse(await raw('TRACE /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
  });

  test('GET on a POST route is 405 method_not_allowed with Allow: POST, the envelope, and a request id', async () => {
    const res = await request(gw.app).get('/api/v1/download');
    expect({ status: res.status, allow: res.headers.allow, body: res.body }).toEqual({
      status: 405,
      allow: 'POST',
      body: { success: false, error: { code: 'method_not_allowed', message: expect.any(String) } },
    });
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
  });
});
