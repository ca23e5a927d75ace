// Platform extractors end to end through the gateway: PLATFORM_<NAME>_<ENDPOINT> points each platform
// at the local origin, the extract names the platform, a direct source downloads byte for byte, and
// Reddit's split video and audio merge into one file through a real worker.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { FsArtifactStore } from '@reelay/artifacts';
import { syndicationToken } from '@reelay/extractors';
import { parseConfig } from '@reelay/config';
import { probe } from '@reelay/media';
import { createLogger } from '@reelay/observability';
import {
  fixture as platformFixture,
  serveFile,
  startOrigin,
  testMedia,
  type Origin,
  type TestMedia,
} from '@reelay/testkit';
import { startWorker } from '@reelay/worker';
import { binary, buildGateway, type TestGateway } from './helpers.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-gw-platforms-'));
const artifacts = new FsArtifactStore(dataDir);
const prefix = `test-platforms-${randomBytes(4).toString('hex')}`;
let origin: Origin;
let media: TestMedia;
let gw: TestGateway;
const vimeoReferers: string[] = [];

const sha256 = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

const fixture = (name: string): string => platformFixture(origin, name);

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  // Reddit: the post API, its DASH manifest and the two files it names.
  origin.body('/comments/vid1.json', fixture('reddit/video-dash.json'), 'application/json');
  origin.body('/v/vid1abc/DASHPlaylist.mpd', fixture('reddit/dash.mpd'), 'application/dash+xml');
  origin.body('/v/vid1abc/HLSPlaylist.m3u8', fixture('reddit/hls-master.m3u8'), 'application/vnd.apple.mpegurl');
  origin.file('/v/vid1abc/DASH_360.mp4', media.videoOnlyMp4, 'video/mp4');
  origin.file('/v/vid1abc/DASH_AUDIO_128.mp4', media.audioOnlyM4a, 'video/mp4');
  // X: the syndication endpoint (token checked) and the 240p MP4 variant.
  origin.route('/tweet-result', (req, res) => {
    const query = new URL(req.url!, origin.base).searchParams;
    const ok =
      query.get('id') === '1790000000000000001' && query.get('token') === syndicationToken('1790000000000000001');
    res.writeHead(ok ? 200 : 404, { 'content-type': 'application/json' }).end(ok ? fixture('x/video.json') : '');
  });
  origin.body('/x/amplify_video/1790000000000000001/pl/master.m3u8', fixture('x/master.m3u8'), 'application/x-mpegURL');
  origin.file('/x/amplify_video/1790000000000000001/vid/avc1/320x240/low.mp4', media.muxedMp4, 'video/mp4');
  // Vimeo: the player page and a progressive file that wants the player as Referer.
  origin.body('/video/1001', fixture('vimeo/progressive.html'), 'text/html');
  origin.route('/vimeo/progressive/1001-240.mp4', (req, res) => {
    vimeoReferers.push(String(req.headers.referer ?? ''));
    serveFile(req, res, media.muxedMp4, 'video/mp4');
  });
  gw = await buildGateway({
    env: {
      DATA_DIR: dataDir,
      PLATFORM_REDDIT_WWW: origin.base,
      PLATFORM_X_SYNDICATION: origin.base,
      PLATFORM_VIMEO_PLAYER: origin.base,
    },
    deps: { artifacts, queuePrefix: prefix },
  });
});

afterAll(async () => {
  await gw.close();
  await origin.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function extract(url: string) {
  const res = await request(gw.app).post('/api/v1/extract').send({ url }).expect(200);
  return res.body.data;
}

type Source = { url: string; stream_profile: string; quality: string };

async function downloadBytes(url: string): Promise<Buffer> {
  const res = await request(gw.app).post('/api/v1/download').send({ url }).buffer(true).parse(binary).expect(200);
  return res.body as Buffer;
}

describe('Reddit through the gateway', () => {
  const post = 'https://www.reddit.com/r/videos/comments/vid1/a_test_clip_with_split_audio/';

  test('a post is extracted as reddit and its video-only file downloads byte for byte', async () => {
    const data = await extract(post);
    expect(data).toMatchObject({ platform: 'reddit', extract_profile: 'reddit_json', content_type: 'video' });
    const video = data.media[0].sources.find((s: Source) => s.stream_profile === 'video_only' && s.quality === '360p');
    expect(sha256(await downloadBytes(video.url))).toBe(sha256(fs.readFileSync(media.videoOnlyMp4)));
  });

  test('its video and audio files merge into one MP4 with both streams through the worker', async () => {
    const data = await extract(post);
    const sources: Source[] = data.media[0].sources;
    const video = sources.find((s) => s.stream_profile === 'video_only' && s.quality === '360p')!;
    const audio = sources.find((s) => s.stream_profile === 'audio_only')!;
    const started = await request(gw.app)
      .post('/api/v1/download')
      .send({ video_url: video.url, audio_url: audio.url })
      .expect(202);
    const statusUrl: string = started.body.data.status_url;
    expect(started.headers.location).toBe(statusUrl);
    const queued = await request(gw.app).get(statusUrl).expect(200);
    expect(queued.body.data).toMatchObject({ id: started.body.data.job_id, status: 'queued', operation: 'merge' });

    const config = parseConfig({
      REDIS_URL: process.env.REDIS_URL,
      EGRESS_ALLOWLIST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      WORKER_CONCURRENCY: '1',
    });
    const worker = await startWorker({
      config,
      logger: createLogger({ name: 'platforms-worker', level: 'silent' }),
      metricsPort: 0,
      prefix,
      dataDir,
    });
    try {
      const deadline = Date.now() + 20_000;
      let job = queued.body.data;
      while (job.status !== 'completed' && job.status !== 'failed' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        job = (await request(gw.app).get(statusUrl).expect(200)).body.data;
      }
      expect(job).toMatchObject({
        status: 'completed',
        operation: 'merge',
        progress: 100,
        artifact: { filename: 'A test clip with split audio.mp4', content_type: 'video/mp4' },
      });
      const file = await request(gw.app).get(job.artifact.url).buffer(true).parse(binary).expect(200);
      const local = path.join(dataDir, 'merged-check.mp4');
      fs.writeFileSync(local, file.body as Buffer);
      const info = await probe(local);
      expect(info.streams.map((s) => [s.type, s.codec])).toEqual([
        ['video', 'h264'],
        ['audio', 'aac'],
      ]);
      expect(info.streams[0]).toMatchObject({ width: 640, height: 360 });
      expect(info.durationSeconds).toBeGreaterThan(1.8);
    } finally {
      await worker.stop();
    }
  });
});

describe('X through the gateway', () => {
  test('a post is extracted as x and an MP4 variant downloads byte for byte', async () => {
    const data = await extract('https://x.com/reelaytest/status/1790000000000000001');
    expect(data).toMatchObject({ platform: 'x', extract_profile: 'x_syndication', content_type: 'video' });
    const low = data.media[0].sources.find(
      (s: Source) => s.stream_profile === 'muxed_progressive' && s.quality === '240p',
    );
    expect(sha256(await downloadBytes(low.url))).toBe(sha256(fs.readFileSync(media.muxedMp4)));
  });
});

describe('Vimeo through the gateway', () => {
  test('a video is extracted as vimeo and a progressive file downloads byte for byte with the player as Referer', async () => {
    const data = await extract('https://vimeo.com/1001');
    expect(data).toMatchObject({ platform: 'vimeo', extract_profile: 'vimeo_player_config', content_type: 'video' });
    const low = data.media[0].sources.find((s: Source) => s.quality === '240p');
    expect(sha256(await downloadBytes(low.url))).toBe(sha256(fs.readFileSync(media.muxedMp4)));
    expect(vimeoReferers.at(-1)).toBe('https://player.vimeo.com/');
  });
});
