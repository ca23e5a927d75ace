// End to end through the real gateway: POST /api/v1/extract with a platform URL (the platform API
// being the local origin, through PLATFORM_* variables), then POST /api/v1/download with a returned
// progressive source; the bytes must be the origin file's.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { serveFile, startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { buildGateway, type TestGateway } from '../../../../apps/gateway/test/helpers.js';
import { fixture, serveJson } from './public-api-fixtures.js';

const ALICE = 'did:plc:alicefixtureaaaaaaaaaaaa';
const ALICE_VIDEO = 'bafkreivideofixturealiceaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const UUID = '9c9de5e8-0a1e-484a-b099-e80766180a6d';

let origin: Origin;
let media: TestMedia;
let gw: TestGateway;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-platforms-e2e-'));
const sha256 = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

/** supertest parser that keeps any body as raw bytes. */
function binary(res: request.Response, cb: (err: Error | null, body: Buffer) => void): void {
  const stream = res as unknown as http.IncomingMessage;
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => cb(null, Buffer.concat(chunks)));
}

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  // Bluesky: the AppView, the PLC directory and the author's PDS.
  serveJson(origin, '/xrpc/app.bsky.feed.getPostThread', { fixture: 'bluesky/video.json' });
  origin.body(`/plc/${ALICE}`, fixture(origin, 'bluesky/plc-alice.json'), 'application/did+ld+json');
  origin.route('/pds-alice/xrpc/com.atproto.sync.getBlob', (req, res) => serveFile(req, res, media.muxedMp4, 'video/mp4'));
  origin.body(`/watch/${encodeURIComponent(ALICE)}/${ALICE_VIDEO}/playlist.m3u8`, '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=600000,RESOLUTION=640x360\n360p/video.m3u8\n', 'application/vnd.apple.mpegurl');
  // Mastodon and PeerTube: the origin is the instance.
  serveJson(origin, '/api/v1/statuses/113000000000000001', { fixture: 'mastodon/video.json' });
  origin.file('/system/media_attachments/files/113/000/000/000/000/101/original/clip.mp4', media.muxedMp4, 'video/mp4');
  serveJson(origin, `/api/v1/videos/${UUID}`, { fixture: 'peertube/video.json' });
  origin.file(`/static/web-videos/${UUID}-240.mp4`, media.muxedMp4, 'video/mp4');
  origin.file(`/static/streaming-playlists/hls/${UUID}/f00d0002-0-fragmented.mp4`, media.audioOnlyM4a, 'audio/mp4');
  origin.status(`/static/streaming-playlists/hls/${UUID}/master.m3u8`, 404);
  // Streamable and Dailymotion.
  serveJson(origin, '/streamable/videos/a1b2c3', { fixture: 'streamable/video.json' });
  origin.file('/video/mp4/a1b2c3.mp4', media.muxedMp4, 'video/mp4');
  serveJson(origin, '/player/metadata/video/x9prog1', { fixture: 'dailymotion/progressive.json' });
  origin.file('/cdn/H264-320x240/video/x9prog1.mp4', media.muxedMp4, 'video/mp4');
  origin.file('/cdn/video/x9prog1-380.mp4', media.muxedMp4, 'video/mp4');

  gw = await buildGateway({
    env: {
      DATA_DIR: dataDir,
      PLATFORM_BLUESKY_API: origin.base,
      PLATFORM_BLUESKY_PLC: `${origin.base}/plc`,
      PLATFORM_STREAMABLE_API: `${origin.base}/streamable`,
      PLATFORM_DAILYMOTION_WWW: origin.base,
    },
  });
});

afterAll(async () => {
  await gw.close();
  await origin.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface ApiSource {
  url: string;
  stream_profile: string;
}

async function extract(url: string) {
  const res = await request(gw.app).post('/api/v1/extract').send({ url });
  expect({ status: res.status, error: res.body.error }).toEqual({ status: 200, error: undefined });
  return res.body.data as { platform: string; extract_profile: string; media: { sources: ApiSource[] }[] };
}

async function downloadBytes(url: string): Promise<Buffer> {
  const res = await request(gw.app).post('/api/v1/download').send({ url }).buffer(true).parse(binary);
  expect(res.status).toBe(200);
  return res.body as Buffer;
}

describe('platform URLs through the gateway', () => {
  test.each([
    ['bluesky', 'bluesky_api', () => 'https://bsky.app/profile/alice.test/post/3l4vidfixt2aa', 'muxed_progressive', () => media.muxedMp4],
    ['mastodon', 'mastodon_api', () => origin.url('/@alice/113000000000000001'), 'muxed_progressive', () => media.muxedMp4],
    ['peertube', 'peertube_api', () => origin.url(`/videos/watch/${UUID}`), 'audio_only', () => media.audioOnlyM4a],
    ['streamable', 'streamable_api', () => 'https://streamable.com/a1b2c3', 'muxed_progressive', () => media.muxedMp4],
    ['dailymotion', 'dailymotion_metadata', () => 'https://www.dailymotion.com/video/x9prog1', 'muxed_progressive', () => media.muxedMp4],
  ])('a %s URL is extracted (%s) and its progressive source downloads as the origin bytes', async (platform, profile, postUrl, streamProfile, file) => {
    const data = await extract(postUrl());
    expect(data).toMatchObject({ platform, extract_profile: profile });
    const source = data.media[0].sources.find((s) => s.stream_profile === streamProfile);
    expect(source).toBeDefined();
    const bytes = await downloadBytes(source!.url);
    expect(sha256(bytes)).toBe(sha256(fs.readFileSync(file())));
  });
});
