import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { PEERTUBE_URL_CASES, peertube, peertubeVideoApi } from '../../src/platforms/peertube.js';
import { extractor, failure, fixtureJson, serveJson } from './public-api-fixtures.js';

// The local origin plays the instance: watch URLs and the API are on the same host.
const UUID = '9c9de5e8-0a1e-484a-b099-e80766180a6d';
const SHORT = 'kkGMgK9ZtnKfYAgnEtQxbv';
const LIVE_UUID = '0b7e4c1a-9d8f-4a6b-8c5d-2e1f0a9b8c7d';
const HLS = `/static/streaming-playlists/hls/${UUID}`;

/** PeerTube ≥ 6.2 keeps HLS audio apart: the variant takes its sound from the audio group. */
const MASTER = `#EXTM3U
#EXT-X-VERSION:6
#EXT-X-INDEPENDENT-SEGMENTS
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="Audio",DEFAULT=YES,AUTOSELECT=YES,URI="f00d0002-0.m3u8"
#EXT-X-STREAM-INF:BANDWIDTH=420000,RESOLUTION=640x360,FRAME-RATE=25,CODECS="avc1.64001e,mp4a.40.2",AUDIO="audio"
f00d0001-360.m3u8
`;
const LIVE_MASTER = `#EXTM3U
#EXT-X-VERSION:3
#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=320x240,CODECS="avc1.64001e,mp4a.40.2"
0.m3u8
`;

let origin: Origin;
let media: TestMedia;
const extract = extractor();

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  for (const id of [UUID, SHORT]) serveJson(origin, `/api/v1/videos/${id}`, { fixture: 'peertube/video.json' });
  serveJson(origin, '/api/v1/videos/mN3pQrStUvWxYz2a4b5c6d', { fixture: 'peertube/legacy.json' });
  serveJson(origin, '/api/v1/videos/3XyZ9aBcDeFgHiJkMnPqRs', { fixture: 'peertube/live.json' });
  const audioOnly = fixtureJson<{ files: { resolution: { id: number } }[] }>(origin, 'peertube/legacy.json');
  audioOnly.files = audioOnly.files.filter((f) => f.resolution.id === 0);
  serveJson(origin, '/api/v1/videos/aud1oon1yUp1oadAaaaaaa', JSON.stringify(audioOnly));
  serveJson(
    origin,
    '/api/v1/videos/00000000-0000-4000-8000-000000000404',
    { fixture: 'peertube/not-found.json' },
    404,
    'application/json; charset=utf-8',
  );
  serveJson(origin, '/api/v1/videos/00000000-0000-4000-8000-000000000403', { fixture: 'peertube/private.json' }, 403);
  serveJson(origin, '/api/v1/videos/00000000-0000-4000-8000-000000000401', { fixture: 'peertube/password.json' }, 403);
  serveJson(
    origin,
    '/api/v1/videos/00000000-0000-4000-8000-000000000429',
    '{"error":"Too many requests, please try again later."}',
    429,
  );
  // The same video, its HLS master at a refused address (127.0.0.2 is not allow-listed).
  const refusedMaster = fixtureJson<{ streamingPlaylists: { playlistUrl: string }[] }>(origin, 'peertube/video.json');
  refusedMaster.streamingPlaylists[0].playlistUrl = 'http://127.0.0.2:9/master.m3u8';
  serveJson(origin, '/api/v1/videos/b10cced0-0a1e-484a-b099-e80766180a6d', JSON.stringify(refusedMaster));
  origin.body(`${HLS}/master.m3u8`, MASTER, 'application/vnd.apple.mpegurl');
  origin.body(`/static/streaming-playlists/hls/${LIVE_UUID}/master.m3u8`, LIVE_MASTER, 'application/vnd.apple.mpegurl');
  origin.file(`/static/web-videos/${UUID}-240.mp4`, media.muxedMp4, 'video/mp4');
  origin.file(`${HLS}/f00d0001-360-fragmented.mp4`, media.videoOnlyMp4, 'video/mp4');
  origin.file(`${HLS}/f00d0002-0-fragmented.mp4`, media.audioOnlyM4a, 'audio/mp4');
  // A site that is not PeerTube but has a /w/{22 characters} page.
  origin.body(
    '/w/NotPeerTubeAaaaaaaaaaa',
    '<html><head><title>A wiki page</title></head><body><video src="/media/wiki.mp4"></video></body></html>',
    'text/html',
  );
});

afterAll(async () => {
  await origin.close();
});

describe('PeerTube URLs', () => {
  test.each(PEERTUBE_URL_CASES)('%s asks %s', (url, api) => {
    expect(peertubeVideoApi(new URL(url)) ?? null).toBe(api);
    expect(peertube.matches(new URL(url))).toBe(api !== null);
  });
});

describe('PeerTube videos', () => {
  test('Web Video and HLS files are progressive sources, split ones paired, beside the HLS master variants', async () => {
    const url = origin.url(`/w/${SHORT}`);
    const { result } = await extract(url);
    expect(result).toMatchObject({
      url,
      platform: 'peertube',
      extract_profile: 'peertube_api',
      content_type: 'video',
      title: 'Test pattern with a 440 Hz tone',
    });
    expect(result.media).toHaveLength(1);
    expect(result.media[0]).toMatchObject({
      type: 'video',
      duration: 2,
      thumbnail: `${origin.base}/lazy-static/previews/f1d2a3b4-0000-4000-8000-000000000002.jpg`,
    });
    expect(result.media[0]).toMatchObject({
      author: 'Alice',
      upload_date: '2024-06-01',
      description: 'Two seconds of colour bars.',
    });
    expect(result.media[0].sources).toEqual([
      {
        quality: '360p',
        url: `${origin.base}${HLS}/f00d0001-360.m3u8`,
        stream_profile: 'hls',
        width: 640,
        height: 360,
        bitrate: 420000,
        fps: 25,
        codecs: 'avc1.64001e',
        has_audio: false,
        has_video: true,
      },
      {
        quality: '360p',
        url: `${origin.base}${HLS}/f00d0001-360-fragmented.mp4`,
        stream_profile: 'video_only',
        mime_type: 'video/mp4',
        ext: 'mp4',
        width: 640,
        height: 360,
        fps: 25,
        size: 41870,
        has_audio: false,
        has_video: true,
      },
      {
        quality: '240p',
        url: `${origin.base}/static/web-videos/${UUID}-240.mp4`,
        stream_profile: 'muxed_progressive',
        mime_type: 'video/mp4',
        ext: 'mp4',
        width: 320,
        height: 240,
        fps: 25,
        size: 60122,
        has_audio: true,
        has_video: true,
      },
      {
        quality: 'original',
        url: `${origin.base}${HLS}/f00d0002-0-fragmented.mp4`,
        stream_profile: 'audio_only',
        mime_type: 'audio/mp4',
        ext: 'mp4',
        size: 18333,
        has_audio: true,
        has_video: false,
      },
      {
        quality: 'original',
        url: `${origin.base}${HLS}/f00d0002-0.m3u8`,
        stream_profile: 'hls',
        codecs: 'mp4a.40.2',
        has_audio: true,
        has_video: false,
      },
    ]);
  });

  test('an HLS master at a refused address is left out and the progressive files are still offered', async () => {
    const { result } = await extract(`${origin.base}/w/b10cced0-0a1e-484a-b099-e80766180a6d`);
    const urls = result.media[0].sources.map((s) => s.url);
    expect(urls).toContain(`${origin.base}/static/web-videos/${UUID}-240.mp4`);
    expect(urls.some((u) => u.includes('127.0.0.2'))).toBe(false);
  });

  test('watch, embed and API URLs with the long UUID read the same video', async () => {
    for (const path of [
      `/videos/watch/${UUID}`,
      `/videos/embed/${UUID}?autoplay=1`,
      `/api/v1/videos/${UUID}`,
      `/w/${UUID}`,
    ]) {
      const { result } = await extract(origin.url(path));
      expect(result.media[0].sources).toHaveLength(5);
    }
  });

  test('before PeerTube 6.1 files have no size or track flags: the resolution id is the height, 0 the audio', async () => {
    const { result } = await extract(origin.url('/w/mN3pQrStUvWxYz2a4b5c6d'));
    expect(result.media[0].thumbnail).toBe(`${origin.base}/static/thumbnails/3f2c9a10-5b6d-4e7f-8a9b-0c1d2e3f4a5b.jpg`);
    expect(result.media[0].sources).toEqual([
      {
        quality: '480p',
        url: `${origin.base}/static/webseed/3f2c9a10-5b6d-4e7f-8a9b-0c1d2e3f4a5b-480.mp4`,
        stream_profile: 'muxed_progressive',
        mime_type: 'video/mp4',
        ext: 'mp4',
        height: 480,
        fps: 30,
        size: 60122,
        has_video: true,
      },
      {
        quality: 'original',
        url: `${origin.base}/static/webseed/3f2c9a10-5b6d-4e7f-8a9b-0c1d2e3f4a5b-0.mp4`,
        stream_profile: 'audio_only',
        mime_type: 'audio/mp4',
        ext: 'mp4',
        size: 18333,
        has_audio: true,
        has_video: false,
      },
    ]);
  });

  test('an upload with only an audio file is an audio result', async () => {
    const { result } = await extract(origin.url('/w/aud1oon1yUp1oadAaaaaaa'));
    expect(result.content_type).toBe('audio');
    expect(result.media[0].sources.map((s) => s.stream_profile)).toEqual(['audio_only']);
  });

  test('a live has only its HLS playlist and no duration', async () => {
    const { result } = await extract(origin.url('/w/3XyZ9aBcDeFgHiJkMnPqRs'));
    expect(result).toMatchObject({ content_type: 'video', title: 'Harbour webcam (live)' });
    expect(result.media[0].duration).toBeUndefined();
    expect(result.media[0].sources).toEqual([
      {
        quality: '240p',
        url: `${origin.base}/static/streaming-playlists/hls/${LIVE_UUID}/0.m3u8`,
        stream_profile: 'hls',
        width: 320,
        height: 240,
        bitrate: 800000,
        codecs: 'avc1.64001e,mp4a.40.2',
        has_audio: true,
        has_video: true,
      },
    ]);
  });
});

describe('PeerTube errors', () => {
  test.each([
    ['a deleted video (404)', 'content_not_found', '404', /Video not found/],
    ['a private or internal video (403)', 'content_not_found', '403', /private or internal/],
    ['a password-protected video', 'content_not_found', '401', /password-protected/],
    ['a rate limit (429)', 'upstream_rate_limited', '429', /rate limiting/],
  ])('%s is %s', async (_what, code, last, message) => {
    const err = await failure(extract(origin.url(`/videos/watch/00000000-0000-4000-8000-000000000${last}`)));
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
  });

  test('a host whose API does not answer like PeerTube hands the URL to the generic extractors', async () => {
    const { result } = await extract(origin.url('/w/NotPeerTubeAaaaaaaaaaa'));
    expect(result).toMatchObject({ platform: 'generic', title: 'A wiki page' });
  });
});
