// The yt-dlp bridge through the gateway: a JW Player page only yt-dlp can read is extracted by
// POST /api/v1/extract and its source downloaded by POST /api/v1/download, byte for byte; YTDLP_HOSTS
// and the answer when yt-dlp is missing come from the configuration.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { describeWithTools, startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { binary, buildGateway, type TestGateway } from './helpers.js';

const describeReal = (name: string, fn: () => void) =>
  describeWithTools(name, [{ bin: 'yt-dlp', install: 'apt-get install yt-dlp' }], fn);

const sha256 = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

let origin: Origin;
let media: TestMedia;
const gateways: TestGateway[] = [];

async function gateway(env: Record<string, string> = {}): Promise<TestGateway> {
  const gw = await buildGateway({ env });
  gateways.push(gw);
  return gw;
}

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
  origin.body(
    '/jw.html',
    '<html><head><title>JW page</title></head><body><div id="p"></div><script>jwplayer("p").setup({file: "/media/clip.mp4", title: "A JW clip"});</script></body></html>',
    'text/html',
  );
  origin.body('/nothing.html', '<html><head><title>Nothing</title></head><body>words</body></html>', 'text/html');
  origin.body(
    '/og.html',
    '<html><head><title>OG</title><meta property="og:video" content="/media/clip.mp4"><meta property="og:video:type" content="video/mp4"></head><body></body></html>',
    'text/html',
  );
});

afterAll(async () => {
  for (const gw of gateways) await gw.close();
  await origin.close();
});

describeReal('with yt-dlp on PATH', () => {
  test('a JW Player page is extracted by yt-dlp and its source downloads byte for byte', async () => {
    const gw = await gateway();
    const res = await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url('/jw.html') })
      .expect(200);
    expect(res.body.data).toMatchObject({ platform: 'generic', extract_profile: 'ytdlp', title: 'A JW clip' });
    const source = res.body.data.media[0].sources[0];
    expect(source).toMatchObject({ url: origin.url('/media/clip.mp4'), stream_profile: 'muxed_progressive' });

    const file = await request(gw.app)
      .post('/api/v1/download')
      .send({ url: source.url })
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(sha256(file.body as Buffer)).toBe(sha256(fs.readFileSync(media.muxedMp4)));
  });

  test('YTDLP_HOSTS sends a listed host to yt-dlp even when the page has og:video', async () => {
    const gw = await gateway({ YTDLP_HOSTS: '127.0.0.1' });
    const res = await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url('/og.html') })
      .expect(200);
    expect(res.body.data.extract_profile).toBe('ytdlp');
  });
});

describe('without yt-dlp', () => {
  test('a YTDLP_HOSTS URL answers 422 no_media_found saying how to enable yt-dlp, and the rest works', async () => {
    const gw = await gateway({ YTDLP_PATH: '/nonexistent/yt-dlp', YTDLP_HOSTS: 'localhost' });
    const res = await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: `http://localhost:${origin.port}/og.html` })
      .expect(422);
    expect(res.body.error).toEqual({
      code: 'no_media_found',
      message: expect.stringMatching(/needs yt-dlp.*YTDLP_PATH/),
    });
    const ok = await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url('/og.html') })
      .expect(200);
    expect(ok.body.data.extract_profile).toBe('opengraph');
  });

  test('a page without media names where reelay looked, and not yt-dlp, which it could not ask', async () => {
    const gw = await gateway({ YTDLP_PATH: '/nonexistent/yt-dlp' });
    const res = await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url('/nothing.html') })
      .expect(422);
    expect(res.body.error.message).toBe(
      'No video, audio or image found at this URL: looked for a media file, OpenGraph, Twitter card and JSON-LD tags, HTML5 media elements, and HLS/DASH manifests.',
    );
  });
});
