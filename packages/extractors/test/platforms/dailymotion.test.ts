import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startOrigin, testMedia, type Origin } from '@reelay/testkit';
import { createRegistry } from '../../src/index.js';
import { DAILYMOTION_URL_CASES, dailymotion, dailymotionXid } from '../../src/platforms/dailymotion.js';
import { extractor, failure, hitsUnder, serveJson } from './public-api-fixtures.js';

let origin: Origin;
let extract: ReturnType<typeof extractor>;

/** Dailymotion's master: muxed variants, each naming its progressive twin in PROGRESSIVE-URI. */
const master = (base: string) => `#EXTM3U
#EXT-X-VERSION:3
#EXT-X-STREAM-INF:CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,NAME="720",PROGRESSIVE-URI="${base}/cdn/H264-1280x720/video/x8abc12.mp4?sec=p720#cell=core",FRAME-RATE=25.000,BANDWIDTH=2000000
${base}/cdn/hls/x8abc12/720.m3u8?sec=h720
#EXT-X-STREAM-INF:CODECS="avc1.4d401e,mp4a.40.2",RESOLUTION=512x384,NAME="380",PROGRESSIVE-URI="${base}/cdn/H264-512x384/video/x8abc12.mp4?sec=p380#cell=core",FRAME-RATE=25.000,BANDWIDTH=900000
${base}/cdn/hls/x8abc12/380.m3u8?sec=h380
`;

beforeAll(async () => {
  const media = await testMedia();
  origin = await startOrigin();
  serveJson(origin, '/player/metadata/video/x8abc12', { fixture: 'dailymotion/video.json' });
  serveJson(origin, '/player/metadata/video/x9prog1', { fixture: 'dailymotion/progressive.json' });
  serveJson(origin, '/player/metadata/video/x8geo01', { fixture: 'dailymotion/geo-blocked.json' });
  serveJson(origin, '/player/metadata/video/x8gone1', { fixture: 'dailymotion/deleted.json' });
  serveJson(origin, '/player/metadata/video/x8busy1', '{"message":"Too many requests"}', 429);
  // A private video: its id is asked for exactly as written (the lower-cased id is another video).
  serveJson(
    origin,
    '/player/metadata/video/k41fZWpx2TaAORA2nok',
    '{"id":"k41fZWpx2TaAORA2nok","title":"Private","qualities":{"auto":[{"type":"application/x-mpegURL","url":"/cdn/manifest/video/x8abc12.m3u8"}]}}',
  );
  serveJson(origin, '/player/metadata/video/k41fzwpx2taaora2nok', { fixture: 'dailymotion/deleted.json' });
  // A relative media URL resolves against the metadata host.
  serveJson(
    origin,
    '/player/metadata/video/x8hls01',
    '{"id":"x8hls01","title":"HLS only","qualities":{"auto":[{"type":"application/x-mpegURL","url":"/cdn/manifest/video/x8hls01.m3u8"}]}}',
  );
  serveJson(
    origin,
    '/player/metadata/video/x8none2',
    '{"id":"x8none2","title":"Nothing","qualities":{"auto":[{"type":"application/vnd.lumberjack.manifest","url":"/cdn/lumberjack/x.json"}]}}',
  );
  origin.body('/cdn/manifest/video/x8abc12.m3u8', master(origin.base), 'application/vnd.apple.mpegurl');
  origin.status('/cdn/manifest/video/x9prog1-forbidden.m3u8', 403, 'Forbidden');
  origin.status('/cdn/manifest/video/x8hls01.m3u8', 403, 'Forbidden');
  origin.file('/cdn/H264-1280x720/video/x8abc12.mp4', media.muxedMp4, 'video/mp4');
  extract = extractor({ dailymotion_www: origin.base });
});

afterAll(async () => {
  await origin.close();
});

describe('Dailymotion URLs', () => {
  test.each(DAILYMOTION_URL_CASES)('%s names %s', (url, xid) => {
    expect(dailymotionXid(new URL(url)) ?? null).toBe(xid);
    expect(dailymotion.matches(new URL(url))).toBe(xid !== null);
  });

  test('every video URL is routed to the dailymotion extractor by the registry', () => {
    const registry = createRegistry();
    for (const [url, xid] of DAILYMOTION_URL_CASES)
      if (xid) expect(registry.find(new URL(url))?.platform).toBe('dailymotion');
  });
});

describe('Dailymotion videos', () => {
  test.each(['https://www.dailymotion.com/video/k41fZWpx2TaAORA2nok', 'https://dai.ly/k41fZWpx2TaAORA2nok'])(
    'a private video (%s) is asked for by its case-sensitive id',
    async (url) => {
      const { result } = await extract(url);
      expect(result).toMatchObject({ platform: 'dailymotion', title: 'Private' });
      expect(result.media[0].sources.length).toBeGreaterThan(0);
    },
  );

  test('the auto HLS master gives its muxed variants and their PROGRESSIVE-URI files; the lumberjack manifest is skipped', async () => {
    const url = 'https://www.dailymotion.com/video/x8abc12';
    const { result } = await extract(url);
    const b = origin.base;
    expect(result).toEqual({
      url,
      platform: 'dailymotion',
      extract_profile: 'dailymotion_metadata',
      content_type: 'video',
      title: 'Harbour timelapse',
      media: [
        {
          index: 0,
          type: 'video',
          duration: 2,
          thumbnail: `${b}/thumbnail/video/x8abc12/1080.jpg`,
          author: 'Harbour Cams',
          upload_date: '2024-06-01', // from created_time, Unix seconds
          sources: [
            {
              quality: '720p',
              url: `${b}/cdn/H264-1280x720/video/x8abc12.mp4?sec=p720`,
              stream_profile: 'muxed_progressive',
              mime_type: 'video/mp4',
              ext: 'mp4',
              width: 1280,
              height: 720,
              bitrate: 2000000,
              fps: 25,
              codecs: 'avc1.64001f,mp4a.40.2',
              has_audio: true,
              has_video: true,
            },
            {
              quality: '720p',
              url: `${b}/cdn/hls/x8abc12/720.m3u8?sec=h720`,
              stream_profile: 'hls',
              width: 1280,
              height: 720,
              bitrate: 2000000,
              fps: 25,
              codecs: 'avc1.64001f,mp4a.40.2',
              has_audio: true,
              has_video: true,
            },
            {
              quality: '384p',
              url: `${b}/cdn/H264-512x384/video/x8abc12.mp4?sec=p380`,
              stream_profile: 'muxed_progressive',
              mime_type: 'video/mp4',
              ext: 'mp4',
              width: 512,
              height: 384,
              bitrate: 900000,
              fps: 25,
              codecs: 'avc1.4d401e,mp4a.40.2',
              has_audio: true,
              has_video: true,
            },
            {
              quality: '384p',
              url: `${b}/cdn/hls/x8abc12/380.m3u8?sec=h380`,
              stream_profile: 'hls',
              width: 512,
              height: 384,
              bitrate: 900000,
              fps: 25,
              codecs: 'avc1.4d401e,mp4a.40.2',
              has_audio: true,
              has_video: true,
            },
          ],
        },
      ],
    });
    expect(hitsUnder(origin, '/player/metadata/video/x8abc12')).toEqual([
      '/player/metadata/video/x8abc12?app=com.dailymotion.neon',
    ]);
    expect(hitsUnder(origin, '/cdn/lumberjack')).toEqual([]);
  });

  test('short links, embeds and the player iframe read the same video', async () => {
    for (const url of [
      'https://dai.ly/x8abc12',
      'https://www.dailymotion.com/embed/video/x8abc12',
      'https://geo.dailymotion.com/player/xtv3w.html?video=x8abc12',
      'https://touch.dailymotion.com/video/x8abc12_harbour-timelapse',
    ]) {
      expect((await extract(url)).result.media[0].sources).toHaveLength(4);
    }
  });

  test('MP4 qualities are listed with their size from /H264-WxH/ or their key; a master that fails is left out', async () => {
    const { result } = await extract('https://www.dailymotion.com/video/x9prog1');
    expect(result.media[0].thumbnail).toBe(`${origin.base}/thumbnail/x120/video/x9prog1.jpg`);
    expect(result.media[0].sources).toEqual([
      {
        quality: '380p',
        url: `${origin.base}/cdn/video/x9prog1-380.mp4?auth=fixture`,
        stream_profile: 'muxed_progressive',
        mime_type: 'video/mp4',
        ext: 'mp4',
        height: 380,
      },
      {
        quality: '240p',
        url: `${origin.base}/cdn/H264-320x240/video/x9prog1.mp4?auth=fixture`,
        stream_profile: 'muxed_progressive',
        mime_type: 'video/mp4',
        ext: 'mp4',
        width: 320,
        height: 240,
      },
    ]);
  });
});

describe('Dailymotion errors', () => {
  test.each([
    ['a geo-blocked video (DM007)', 'upstream_error', 'x8geo01', /DM007/],
    ['a deleted video (an error in the metadata)', 'content_not_found', 'x8gone1', /DM002: Content deleted/],
    ['an unknown video (404)', 'content_not_found', 'x8none1', /no such content/],
    ['a rate limit (429)', 'upstream_rate_limited', 'x8busy1', /rate limiting/],
    ['an HLS-only video whose master is refused', 'upstream_error', 'x8hls01', /403/],
    ['metadata with only the analytics manifest', 'no_media_found', 'x8none2', /no playable stream/],
  ])('%s is %s', async (_what, code, xid, message) => {
    const err = await failure(extract(`https://www.dailymotion.com/video/${xid}`));
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
  });
});
