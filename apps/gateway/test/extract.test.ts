import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { startOrigin, startRedis, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { SourceRegistry } from '@reelay/sources';
import { buildGateway, testRedis, type TestGateway } from './helpers.js';

let origin: Origin;
let media: TestMedia;
let gw: TestGateway;

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  origin.file('/clip.mp4', media.muxedMp4, 'video/mp4');
  origin.file('/download', media.mp3, 'application/octet-stream', {
    'content-disposition': 'attachment; filename="My Song.mp3"',
  });
  origin.file('/download-utf8', media.mp3, 'application/octet-stream', {
    'content-disposition': `attachment; filename="Caf_ song.mp3"; filename*=UTF-8''Caf%C3%A9%20song.mp3`,
  });
  origin.file('/download-bad-cd', media.mp3, 'application/octet-stream', {
    'content-disposition': 'attachment; filename="unterminated',
  });
  origin.body('/empty', '<html><head><title>Nothing here</title></head><body>text</body></html>', 'text/html');
  origin.body('/plain', 'just words', 'text/plain');
  origin.status('/missing', 404);
  origin.status('/broken', 503);
  origin.redirect('/loop', '/loop2');
  origin.redirect('/loop2', '/loop');
  origin.redirect('/to-private', 'http://10.0.0.1/');
  origin.redirect('/to-clip', '/clip.mp4');
  origin.route('/stall', () => {});
  gw = await buildGateway();
});

afterAll(async () => {
  await gw.close();
  await origin.close();
});

const extract = (body: unknown) =>
  request(gw.app)
    .post('/api/v1/extract')
    .send(body as object);

function expectError(res: request.Response, status: number, code: string): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { success: false, error: { code, message: expect.any(String) } },
  });
}

describe('POST /api/v1/extract', () => {
  test('a direct media file is one muxed source, recorded for download', async () => {
    const url = origin.url('/clip.mp4');
    const res = await extract({ url }).expect(200);
    expect(res.body).toEqual({
      success: true,
      data: {
        url,
        platform: 'generic',
        extract_profile: 'direct_file',
        content_type: 'video',
        title: 'clip.mp4',
        media: [
          {
            index: 0,
            type: 'video',
            sources: [
              expect.objectContaining({
                url,
                quality: 'original',
                stream_profile: 'muxed_progressive',
                mime_type: 'video/mp4',
                ext: 'mp4',
              }),
            ],
          },
        ],
        extraction_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      },
    });
    const stored = await new SourceRegistry(gw.redis, 3600).get(url);
    expect(stored).toMatchObject({ url, stream_profile: 'muxed_progressive', media_index: 0, platform: 'generic' });
    expect(await new SourceRegistry(gw.redis, 3600).get(url, res.body.data.extraction_id)).toEqual(stored);
    const ttl = await gw.redis.ttl(new SourceRegistry(gw.redis, 3600).key(url));
    expect(ttl).toBeGreaterThan(3500);
  });

  test("Content-Disposition's UTF-8 filename* is preferred, and a malformed header is ignored", async () => {
    expect((await extract({ url: origin.url('/download-utf8') }).expect(200)).body.data.title).toBe('Café song');
    expect((await extract({ url: origin.url('/download-bad-cd') }).expect(200)).body.data.title).toBe(
      'download-bad-cd',
    );
  });

  test('an octet-stream file is recognised by its bytes and titled by Content-Disposition', async () => {
    const res = await extract({ url: origin.url('/download') }).expect(200);
    expect(res.body.data.title).toBe('My Song');
    expect(res.body.data.content_type).toBe('audio');
    expect(res.body.data.media[0].sources[0]).toMatchObject({
      stream_profile: 'audio_only',
      ext: 'mp3',
      has_audio: true,
      has_video: false,
    });
  });

  test('a redirect to a file is followed, and the submitted URL is what download takes', async () => {
    const res = await extract({ url: origin.url('/to-clip') }).expect(200);
    expect(res.body.data.media[0].sources[0].url).toBe(origin.url('/to-clip'));
  });

  test.each([
    ['a string', 'text/plain', 'url=x', 415, 'unsupported_media_type'],
    ['malformed JSON', 'application/json', '{"url":', 400, 'invalid_request'],
    ['a JSON array', 'application/json', '[1,2]', 400, 'invalid_request'],
    ['a JSON string', 'application/json', '"http://x"', 400, 'invalid_request'],
    ['null', 'application/json', 'null', 400, 'invalid_request'],
    ['an object without url', 'application/json', '{"link":"http://x"}', 400, 'invalid_request'],
    ['a number as url', 'application/json', '{"url":42}', 400, 'invalid_request'],
    [
      'a url with a field beside it the route does not take',
      'application/json',
      '{"url":"http://127.0.0.2:9/","admin":true}',
      400,
      'invalid_request',
    ],
  ])('a body that is %s is refused', async (_name, type, body, status, code) => {
    const res = await request(gw.app).post('/api/v1/extract').set('content-type', type).send(body);
    expectError(res, status, code);
  });

  test('a body over 16 KiB is 413', async () => {
    expectError(await extract({ url: 'http://a.example/', pad: 'x'.repeat(17 * 1024) }), 413, 'payload_too_large');
  });

  test.each(
    [
      'not a url',
      'ftp://example.com/file.mp4',
      'javascript:alert(1)',
      '/relative/path',
      `http://example.com/${'a'.repeat(2100)}`,
      'http://user:pw@example.com/',
      'http://127.0.0.1:0/',
      'https://example.com:00/x',
    ].map((url) => [url.length > 60 ? `${url.slice(0, 30)}… (${url.length} characters)` : url, url]),
  )('%s is an invalid_url', async (_name, url) => {
    expectError(await extract({ url }), 400, 'invalid_url');
  });

  test.each([
    'http://127.0.0.2:9/',
    'http://[::1]:9/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.1.2.3/',
    'http://192.168.0.1/',
    'http://2130706434/',
    'http://0x7f000002/',
  ])('%s is blocked before any connection', async (url) => {
    expectError(await extract({ url }), 403, 'url_blocked');
  });

  test('a loopback or private address is refused with a message naming EGRESS_ALLOWLIST, not what it lists', async () => {
    const loopback = await extract({ url: 'http://127.0.0.2:9/' });
    expect(loopback.body.error.message).toBe(
      '127.0.0.2 is a loopback address; reelay does not fetch it unless the operator lists it in EGRESS_ALLOWLIST.',
    );
    const private10 = await extract({ url: 'http://10.1.2.3/' });
    expect(private10.body.error.message).toBe(
      '10.1.2.3 is a private address; reelay does not fetch it unless the operator lists it in EGRESS_ALLOWLIST.',
    );
    // The test gateway's allowlist holds 127.0.0.1: the answer never says so.
    expect(loopback.body.error.message + private10.body.error.message).not.toContain('127.0.0.1');
  });

  test('a redirect to a private address is blocked', async () => {
    expectError(await extract({ url: origin.url('/to-private') }), 403, 'url_blocked');
  });

  test('origin failures map to their codes', async () => {
    expectError(await extract({ url: origin.url('/missing') }), 404, 'content_not_found');
    expectError(await extract({ url: origin.url('/broken') }), 502, 'upstream_error');
    expectError(await extract({ url: origin.url('/loop') }), 502, 'upstream_error');
    expectError(await extract({ url: 'http://127.0.0.1:1/' }), 502, 'upstream_error');
  });

  test('a page or text without media is no_media_found, naming everywhere reelay looked', async () => {
    const res = await extract({ url: origin.url('/plain') });
    expectError(res, 422, 'no_media_found');
    // yt-dlp, when on PATH, was asked last (ytdlp.test.ts checks both forms exactly).
    expect(res.body.error.message).toMatch(
      /^No video, audio or image found at this URL: looked for a media file, OpenGraph, Twitter card and JSON-LD tags, HTML5 media elements, (and HLS\/DASH manifests|HLS\/DASH manifests, and yt-dlp)\.$/,
    );
  });

  test('an origin that never answers is upstream_timeout', async () => {
    expectError(await extract({ url: origin.url('/stall') }), 504, 'upstream_timeout');
  });

  test('when Redis goes down, extract answers 503 at once and readyz says not ready', async () => {
    const server = await startRedis();
    const down = await buildGateway({ redis: await testRedis(server.url) });
    try {
      expect((await request(down.app).get('/readyz')).body).toMatchObject({ redis: 'ok' });
      await server.stop();
      expectError(
        await request(down.app)
          .post('/api/v1/extract')
          .send({ url: origin.url('/clip.mp4') }),
        503,
        'service_unavailable',
      );
      const ready = await request(down.app).get('/readyz').expect(503);
      expect(ready.body).toMatchObject({ status: 'not_ready', redis: 'down', reason: 'Redis does not answer.' });
    } finally {
      down.redis.disconnect();
      await server.stop();
    }
  });
});

describe('the service frame', () => {
  test('every response carries X-Request-Id, echoing a sane one', async () => {
    const echoed = await request(gw.app).get('/healthz').set('x-request-id', 'abc-123');
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const replaced = await request(gw.app).get('/healthz').set('x-request-id', 'bad id with spaces <script>');
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('an unknown route is a 404 envelope', async () => {
    expectError(await request(gw.app).get('/nope'), 404, 'not_found');
  });

  test('readyz reports Redis, and that no worker is running', async () => {
    const res = await request(gw.app).get('/readyz').expect(503);
    expect(res.body).toMatchObject({ status: 'not_ready', redis: 'ok', reason: expect.stringContaining('No worker') });
  });

  test('metrics count requests by route template and extracts by platform and outcome', async () => {
    await extract({ url: origin.url('/clip.mp4') }).expect(200);
    await extract({ url: origin.url('/missing') }).expect(404);
    const text = (await request(gw.app).get('/metrics').expect(200)).text;
    expect(text).toMatch(/reelay_extracts_total\{platform="generic",outcome="success",app="gateway"\} [1-9]/);
    expect(text).toMatch(/reelay_extracts_total\{platform="generic",outcome="content_not_found",app="gateway"\} [1-9]/);
    expect(text).toMatch(
      /reelay_http_requests_total\{method="POST",route="\/api\/v1\/extract",status="200",app="gateway"\} [1-9]/,
    );
    expect(text).toMatch(/reelay_extract_duration_seconds_bucket\{le="0.1",[^}]*platform="generic",outcome="success"/);
    expect(text).not.toMatch(/route="\/nope"/);
  });

  test('the OpenAPI document is generated from the route schemas', async () => {
    const doc = (await request(gw.app).get('/api/openapi.json').expect(200)).body;
    expect(doc.openapi).toBe('3.1.0');
    const op = doc.paths['/api/v1/extract'].post;
    expect(op.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ExtractRequest' });
    expect(op.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ExtractEnvelope',
    });
    expect(doc.components.schemas.Source.properties.stream_profile.enum).toEqual([
      'muxed_progressive',
      'video_only',
      'audio_only',
      'image',
      'hls',
      'dash',
    ]);
    // The contract's operations (DESIGN.md), listed here rather than read back from the routes the
    // document is built from, so a route that goes missing fails this test.
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        'POST /api/v1/extract',
        'POST /api/v1/download',
        'GET /api/v1/jobs/{id}',
        'GET /api/v1/jobs/{id}/artifact',
        'GET /api/v1/platforms',
        'POST /api',
        'POST /api/playground',
      ]),
    );
  });
});
