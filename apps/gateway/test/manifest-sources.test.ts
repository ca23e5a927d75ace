// Manifests can name any URL. Sources the download would refuse (not http(s), or a literal blocked
// address) are dropped from extract results, for HLS and DASH as for yt-dlp. Nothing here connects to
// the refused addresses: the egress check refuses them by their literal form.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { startOrigin, type Origin } from '@reelay/testkit';
import { buildGateway, type TestGateway } from './helpers.js';

let origin: Origin;
let gw: TestGateway;

const rep = (id: string, baseUrl: string, height: number) =>
  `<Representation id="${id}" mimeType="video/mp4" codecs="avc1.64001e,mp4a.40.2" width="${(height * 16) / 9}" height="${height}" bandwidth="${height * 1000}"><BaseURL>${baseUrl}</BaseURL></Representation>`;
const mpd = (reps: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT2S"><Period><AdaptationSet contentType="video">${reps}</AdaptationSet></Period></MPD>`;
const master = (variants: string[]) =>
  `#EXTM3U\n${variants.map((uri, i) => `#EXT-X-STREAM-INF:BANDWIDTH=${(i + 1) * 100000},RESOLUTION=${640 + i * 2}x${360 + i * 2},CODECS="avc1.64001e,mp4a.40.2"\n${uri}`).join('\n')}\n`;

beforeAll(async () => {
  origin = await startOrigin();
  origin.body(
    '/mixed.mpd',
    mpd(
      [
        rep('good', origin.url('/media/good.mp4'), 360),
        rep('file', 'file:///etc/passwd', 1080),
        rep('private', 'http://10.0.0.1/clip.mp4', 720),
        rep('metadata', 'http://169.254.169.254/latest/meta-data/', 480),
        rep('loopback', 'http://127.0.0.2/clip.mp4', 400),
        rep('mapped', 'http://[::ffff:a9fe:a9fe]/x.mp4', 380),
        rep('ftp', 'ftp://example.com/clip.mp4', 370),
      ].join(''),
    ),
    'application/dash+xml',
  );
  origin.body(
    '/only-bad.mpd',
    mpd(rep('file', 'file:///etc/passwd', 360) + rep('private', 'http://10.0.0.1/a.mp4', 720)),
    'application/dash+xml',
  );
  origin.body(
    '/master.m3u8',
    master([
      origin.url('/hls/good.m3u8'),
      'http://169.254.169.254/v.m3u8',
      'file:///etc/passwd',
      'http://[::a9fe:a9fe]/v.m3u8',
      'data:application/x-mpegurl,x',
    ]),
    'application/vnd.apple.mpegurl',
  );
  gw = await buildGateway();
});

afterAll(async () => {
  await gw.close();
  await origin.close();
});

const sourceUrls = (body: { data: { media: { sources: { url: string }[] }[] } }) =>
  body.data.media.flatMap((m) => m.sources.map((s) => s.url));

describe('extract results offer only sources the download could fetch', () => {
  test('a DASH manifest with BaseURLs at file:, ftp:, private, metadata and loopback addresses offers only the public one', async () => {
    const res = await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url('/mixed.mpd') })
      .expect(200);
    expect(sourceUrls(res.body)).toEqual([origin.url('/media/good.mp4')]);
  });

  test('an HLS master with variants at blocked addresses offers only the public variant', async () => {
    const res = await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url('/master.m3u8') })
      .expect(200);
    expect(sourceUrls(res.body)).toEqual([origin.url('/hls/good.m3u8')]);
  });

  test('a manifest whose every source is refused answers url_blocked', async () => {
    const res = await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url('/only-bad.mpd') });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 403,
      body: { success: false, error: { code: 'url_blocked', message: expect.any(String) } },
    });
  });
});
