import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startOrigin, testMedia, type Origin } from '@reelay/testkit';
import { createRegistry } from '../../src/index.js';
import { absolute } from '../../src/platforms/public-api.js';
import { STREAMABLE_URL_CASES, streamable, streamableId } from '../../src/platforms/streamable.js';
import { extractor, failure, serveJson } from './public-api-fixtures.js';

let origin: Origin;
let extract: ReturnType<typeof extractor>;

beforeAll(async () => {
  const media = await testMedia();
  origin = await startOrigin();
  serveJson(origin, '/videos/a1b2c3', { fixture: 'streamable/video.json' });
  // Codes are case-sensitive: the mixed-case one is a video, its lower-cased twin is not.
  serveJson(origin, '/videos/Zz9Yy8', { fixture: 'streamable/video.json' });
  serveJson(origin, '/videos/zz9yy8', { fixture: 'streamable/not-found.json' }, 404);
  serveJson(origin, '/videos/p1p2p3', { fixture: 'streamable/processing.json' });
  serveJson(origin, '/videos/u1u2u3', '{"status":0,"percent":10,"files":{},"title":"Uploading"}');
  serveJson(origin, '/videos/e1e2e3', { fixture: 'streamable/failed.json' });
  serveJson(origin, '/videos/n1n2n3', { fixture: 'streamable/not-found.json' }, 404);
  serveJson(origin, '/videos/r1r2r3', '{"error":"Too Many Requests"}', 429);
  serveJson(origin, '/videos/f1f2f3', '{"status":2,"files":{},"title":"Empty"}');
  origin.file('/video/mp4/a1b2c3.mp4', media.muxedMp4, 'video/mp4');
  extract = extractor({ streamable_api: origin.base });
});

afterAll(async () => {
  await origin.close();
});

describe('Streamable URLs', () => {
  test.each(STREAMABLE_URL_CASES)('%s names %s', (url, id) => {
    expect(streamableId(new URL(url)) ?? null).toBe(id);
    expect(streamable.matches(new URL(url))).toBe(id !== null);
  });

  test('every video URL is routed to the streamable extractor by the registry', () => {
    const registry = createRegistry();
    for (const [url, id] of STREAMABLE_URL_CASES)
      if (id) expect(registry.find(new URL(url))?.platform).toBe('streamable');
  });

  test('protocol-relative file URLs take the API scheme: https in production', () => {
    expect(absolute('//cdn-cf-east.streamable.com/video/mp4/a1b2c3.mp4?Expires=1', 'https://api.streamable.com')).toBe(
      'https://cdn-cf-east.streamable.com/video/mp4/a1b2c3.mp4?Expires=1',
    );
  });
});

describe('Streamable videos', () => {
  test('a mixed-case code is asked for exactly as written', async () => {
    const { result } = await extract('https://streamable.com/Zz9Yy8');
    expect(result).toMatchObject({ platform: 'streamable' });
    expect(result.media[0].sources.length).toBeGreaterThan(0);
  });

  test('every ready rendition is a muxed MP4 with its size, bitrate and frame rate', async () => {
    const { result } = await extract('https://streamable.com/a1b2c3');
    const host = new URL(origin.base).host;
    expect(result).toEqual({
      url: 'https://streamable.com/a1b2c3',
      platform: 'streamable',
      extract_profile: 'streamable_api',
      content_type: 'video',
      title: 'Goal of the week',
      media: [
        {
          index: 0,
          type: 'video',
          duration: 2,
          thumbnail: `http://${host}/image/a1b2c3.jpg?height=300`,
          sources: [
            {
              quality: '240p',
              url: `http://${host}/video/mp4/a1b2c3.mp4?Expires=1735689600&Signature=fixtureSignatureMp4&Key-Pair-Id=FIXTUREKEY`,
              stream_profile: 'muxed_progressive',
              mime_type: 'video/mp4',
              ext: 'mp4',
              width: 320,
              height: 240,
              bitrate: 221016,
              size: 60122,
              fps: 25,
            },
            {
              quality: '180p',
              url: `http://${host}/video/mp4-mobile/a1b2c3.mp4?Expires=1735689600&Signature=fixtureSignatureMobile&Key-Pair-Id=FIXTUREKEY`,
              stream_profile: 'muxed_progressive',
              mime_type: 'video/mp4',
              ext: 'mp4',
              width: 240,
              height: 180,
              bitrate: 120000,
              size: 30100,
              fps: 25,
            },
          ],
        },
      ],
    });
  });

  test('embed, original and share URLs read the same video: the same title, media and sources', async () => {
    const canonical = (await extract('https://streamable.com/a1b2c3')).result;
    for (const url of [
      'https://streamable.com/e/a1b2c3',
      'https://streamable.com/o/a1b2c3',
      'https://streamable.com/s/a1b2c3/xyzzy',
    ]) {
      expect((await extract(url)).result).toEqual({ ...canonical, url });
    }
  });
});

describe('Streamable errors', () => {
  test.each([
    ['a video still processing (status 1)', 'content_not_found', 'p1p2p3', /still processing/],
    ['a video still uploading (status 0)', 'content_not_found', 'u1u2u3', /still being uploaded/],
    ['a video that failed to process (status 3)', 'content_not_found', 'e1e2e3', /failed to process/],
    ['an unknown video (404)', 'content_not_found', 'n1n2n3', /does not exist/],
    ['a rate limit (429)', 'upstream_rate_limited', 'r1r2r3', /rate limiting/],
    ['a ready video without files', 'no_media_found', 'f1f2f3', /no files/],
  ])('%s is %s', async (_what, code, id, message) => {
    const err = await failure(extract(`https://streamable.com/${id}`));
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
  });
});
