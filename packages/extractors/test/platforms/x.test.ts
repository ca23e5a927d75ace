import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Egress } from '@reelay/egress';
import * as shared from './public-api-fixtures.js';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { createRegistry } from '../../src/index.js';
import { syndicationToken, tweetTitle, x, xRoute } from '../../src/platforms/x.js';

const registry = createRegistry();
const egress = new Egress({ allowlist: ['127.0.0.1'] });
let origin: Origin;
let media: TestMedia;

const fixture = (name: string): string => shared.fixture(origin, `x/${name}`);

/** What the syndication endpoint answers per post id: [status, body]. */
const answers = new Map<string, () => [number, string]>();

const extract = (url: string) =>
  registry.extract(new URL(url), { egress, endpoints: { x_syndication: origin.base, x_tco: origin.base } });

const failure = (url: string) => shared.failure(extract(url));

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  origin.route('/tweet-result', (req, res) => {
    const query = new URL(req.url!, origin.base).searchParams;
    const id = query.get('id') ?? '';
    // The real endpoint refuses a wrong token; so does this one.
    if (query.get('token') !== syndicationToken(id)) return void res.writeHead(400).end('bad token');
    const [status, body] = answers.get(id)?.() ?? [404, ''];
    res.writeHead(status, { 'content-type': 'application/json;charset=utf-8' }).end(body);
  });
  answers.set('1790000000000000001', () => [200, fixture('video.json')]);
  answers.set('1800000000000000002', () => [200, fixture('gif.json')]);
  answers.set('1811111111111111111', () => [200, fixture('photos.json')]);
  answers.set('1822222222222222222', () => [200, fixture('mixed.json')]);
  answers.set('1833333333333333333', () => [200, fixture('quoted.json')]);
  answers.set('1844444444444444444', () => [200, fixture('tombstone.json')]);
  answers.set('1855555555555555555', () => [200, fixture('protected.json')]);
  answers.set('1866666666666666666', () => [200, '']);
  answers.set('1877777777777777777', () => [200, '{}']);
  answers.set('1899999999999999999', () => [429, '{"errors":[{"message":"Rate limit exceeded","code":88}]}']);
  origin.body('/x/amplify_video/1790000000000000001/pl/master.m3u8', fixture('master.m3u8'), 'application/x-mpegURL');
  origin.file('/x/amplify_video/1790000000000000001/vid/avc1/320x240/low.mp4', media.muxedMp4, 'video/mp4');
  origin.file('/x/media/CardOne.png', media.png, 'image/png');
  origin.redirect('/AbCdE12345', 'https://x.com/reelaytest/status/1790000000000000001/video/1', 301);
  origin.redirect('/ToPhoto2', 'https://twitter.com/reelaytest/status/1822222222222222222/photo/2', 301);
  origin.redirect('/ElseWhere', 'https://example.com/article', 301);
});

afterAll(async () => {
  await origin.close();
});

describe('X URLs', () => {
  test.each([
    [
      'https://x.com/reelaytest/status/1790000000000000001',
      { kind: 'post', id: '1790000000000000001', index: undefined },
    ],
    [
      'https://twitter.com/reelaytest/status/1790000000000000001?s=20',
      { kind: 'post', id: '1790000000000000001', index: undefined },
    ],
    [
      'https://mobile.twitter.com/reelaytest/status/1790000000000000001',
      { kind: 'post', id: '1790000000000000001', index: undefined },
    ],
    [
      'https://www.x.com/reelaytest/statuses/1790000000000000001',
      { kind: 'post', id: '1790000000000000001', index: undefined },
    ],
    ['https://x.com/i/web/status/1790000000000000001', { kind: 'post', id: '1790000000000000001', index: undefined }],
    ['https://twitter.com/statuses/1790000000000000001', { kind: 'post', id: '1790000000000000001', index: undefined }],
    [
      'https://x.com/reelaytest/status/1790000000000000001/video/1',
      { kind: 'post', id: '1790000000000000001', index: 1 },
    ],
    [
      'https://x.com/reelaytest/status/1811111111111111111/photo/2',
      { kind: 'post', id: '1811111111111111111', index: 2 },
    ],
    [
      'https://vxtwitter.com/reelaytest/status/1790000000000000001',
      { kind: 'post', id: '1790000000000000001', index: undefined },
    ],
    [
      'https://fixvx.com/reelaytest/status/1790000000000000001',
      { kind: 'post', id: '1790000000000000001', index: undefined },
    ],
    ['https://x.com/i/bookmarks?post_id=1790000000000000001', { kind: 'post', id: '1790000000000000001' }],
    ['https://t.co/AbCdE12345', { kind: 'short', code: 'AbCdE12345' }],
    // Share parameters, the older m. host, /i/status, a trailing slash, a handle in any case.
    [
      'https://x.com/ReelayTest/status/1790000000000000001?s=46&t=AbCdEfGhIjKlMnOp',
      { kind: 'post', id: '1790000000000000001', index: undefined },
    ],
    [
      'https://m.twitter.com/reelaytest/status/1790000000000000001/',
      { kind: 'post', id: '1790000000000000001', index: undefined },
    ],
    ['https://x.com/i/status/1790000000000000001', { kind: 'post', id: '1790000000000000001', index: undefined }],
    [
      'https://twitter.com/reelay_test/status/1790000000000000001#m',
      { kind: 'post', id: '1790000000000000001', index: undefined },
    ],
    ['https://x.com/i/bookmarks?foo=1&post_id=1790000000000000001', { kind: 'post', id: '1790000000000000001' }],
    // Not ours: profiles, lists, an empty status, look-alike hosts.
    ['https://x.com/reelaytest', null],
    ['https://x.com/reelaytest/status/', null],
    ['https://x.com/reelaytest/likes', null],
    ['https://x.com/i/bookmarks', null],
    ['https://notx.com/a/status/1', null],
    ['https://x.com.evil.example/a/status/1', null],
    ['https://t.co/', null],
  ])('%s is %j', (url, route) => {
    expect(xRoute(new URL(url)) ?? null).toEqual(route);
    expect(x.matches(new URL(url))).toBe(route !== null);
  });

  test('the syndication token is id / 1e15 × π in base 36 without zeros or the point', () => {
    // 1234567890123456789 / 1e15 × π = 3878.5094…; 3878 = 2·36² + 35·36 + 26 → "2zq", .5094·36 = 18.3 → "i".
    expect(syndicationToken('1234567890123456789')).toBe('2zqic77uqyk');
    expect(syndicationToken('1790000000000000001')).toBe('4c7g8auqyik');
    expect(syndicationToken('20')).toBe('6dq1a2xwd93');
    for (const id of ['1', '1790000000000000001', '999999999999999999'])
      expect(syndicationToken(id)).toMatch(/^[1-9a-z]+$/);
  });

  test('a title is the text without its media link, shortened on a word; else the user', () => {
    expect(tweetTitle({ text: 'Hello   world https://t.co/abc https://t.co/def' })).toBe('Hello world');
    const long = tweetTitle({ text: `${'word '.repeat(40)}end` })!;
    expect(long.length).toBeLessThanOrEqual(100);
    expect(long).toMatch(/word…$/);
    expect(tweetTitle({ text: 'https://t.co/abc', user: { name: 'Reelay Test', screen_name: 'reelaytest' } })).toBe(
      'Reelay Test (@reelaytest)',
    );
  });
});

describe('X media', () => {
  test('a video lists every MP4 variant as muxed progressive with its size and bitrate, and the HLS variants', async () => {
    const { result, records } = await extract('https://x.com/reelaytest/status/1790000000000000001');
    expect(result).toMatchObject({
      platform: 'x',
      extract_profile: 'x_syndication',
      content_type: 'video',
      title: 'A test pattern with a tone, in three sizes',
    });
    const item = result.media[0];
    expect(item).toMatchObject({
      type: 'video',
      duration: 2,
      thumbnail: `${origin.base}/x/amplify_video_thumb/1790000000000000001/img/thumb.jpg`,
    });
    const mp4 = item.sources.filter((s) => s.stream_profile === 'muxed_progressive');
    expect(mp4.map((s) => [s.quality, s.width, s.height, s.bitrate, s.has_audio])).toEqual([
      ['720p', 1280, 720, 2176000, true],
      ['360p', 640, 360, 832000, true],
      ['240p', 320, 240, 256000, true],
    ]);
    expect(mp4[2].url).toBe(`${origin.base}/x/amplify_video/1790000000000000001/vid/avc1/320x240/low.mp4?tag=16`);
    const hls = item.sources.filter((s) => s.stream_profile === 'hls');
    expect(hls.map((s) => [s.url.replace(origin.base, ''), s.has_video, s.has_audio])).toEqual(
      expect.arrayContaining([
        ['/x/amplify_video/1790000000000000001/pl/avc1/1280x720/high.m3u8', true, false],
        ['/x/amplify_video/1790000000000000001/pl/avc1/320x240/low.m3u8', true, false],
        ['/x/amplify_video/1790000000000000001/pl/mp4a/128000/aud.m3u8', false, true],
      ]),
    );
    expect(records.every((r) => r.headers === undefined)).toBe(true);
  });

  test('an animated GIF is one silent MP4', async () => {
    const { result } = await extract('https://twitter.com/reelaytest/status/1800000000000000002');
    expect(result.title).toBe('Reelay Test (@reelaytest)');
    expect(result.media).toEqual([
      {
        index: 0,
        type: 'video',
        thumbnail: `${origin.base}/x/tweet_video_thumb/GiFloop.jpg`,
        author: 'Reelay Test',
        upload_date: '2024-05-14', // the post's text is only its media link: no description
        sources: [
          {
            url: `${origin.base}/x/tweet_video/GiFloop.mp4`,
            quality: '240p',
            stream_profile: 'video_only',
            mime_type: 'video/mp4',
            ext: 'mp4',
            width: 320,
            height: 240,
            has_audio: false,
            has_video: true,
          },
        ],
      },
    ]);
  });

  test('photos are their original size, and several media make a gallery', async () => {
    const { result } = await extract('https://x.com/reelaytest/status/1811111111111111111');
    expect(result.content_type).toBe('gallery');
    expect(result.media.map((m) => m.sources)).toEqual([
      [
        {
          url: `${origin.base}/x/media/CardOne.png?name=orig`,
          stream_profile: 'image',
          quality: '64x48',
          width: 64,
          height: 48,
        },
      ],
      [
        {
          url: `${origin.base}/x/media/CardTwo.jpg?name=orig`,
          stream_profile: 'image',
          quality: '64x48',
          width: 64,
          height: 48,
        },
      ],
    ]);
  });

  test('a photo and a video in one post are a gallery of both, and /photo/{n} or /video/{n} picks one', async () => {
    const all = await extract('https://x.com/reelaytest/status/1822222222222222222');
    expect(all.result.content_type).toBe('gallery');
    expect(all.result.media.map((m) => m.type)).toEqual(['image', 'video']);
    const second = await extract('https://x.com/reelaytest/status/1822222222222222222/video/2');
    expect(second.result.media.map((m) => m.type)).toEqual(['video']);
    const first = await extract('https://x.com/reelaytest/status/1822222222222222222/photo/1');
    expect(first.result.media.map((m) => m.type)).toEqual(['image']);
    // An index past the end names nothing in particular: everything is returned.
    expect((await extract('https://x.com/reelaytest/status/1822222222222222222/photo/9')).result.media).toHaveLength(2);
  });

  test('a post without media of its own gives the media of the post it quotes, under its own text', async () => {
    const { result } = await extract('https://x.com/quoter/status/1833333333333333333');
    expect(result.media[0].sources[0].url).toBe(
      `${origin.base}/x/ext_tw_video/1790000000000000001/pu/vid/320x240/quoted.mp4?tag=12`,
    );
    expect(result.title.length).toBeLessThanOrEqual(100);
    expect(result.title).toMatch(/^This one is worth a second look, .*…$/);
  });

  test('a t.co link is followed to the post it names, /video/{n} included', async () => {
    const { result } = await extract('https://t.co/AbCdE12345');
    expect(result.title).toBe('A test pattern with a tone, in three sizes');
    const photo = await extract('https://t.co/ToPhoto2');
    expect(photo.result.media.map((m) => m.type)).toEqual(['video']);
  });
});

describe('X errors', () => {
  test.each([
    [
      'a deleted post (tombstone)',
      '1844444444444444444',
      'content_not_found',
      /unavailable: This Post was deleted by the Post author\.$/,
    ],
    ['a protected account', '1855555555555555555', 'content_not_found', /protected/],
    ['an empty answer', '1866666666666666666', 'content_not_found', /does not exist/],
    ['an empty object', '1877777777777777777', 'content_not_found', /does not exist/],
    ['a 404', '1888888888888888888', 'content_not_found', /does not exist/],
    ['rate limiting', '1899999999999999999', 'upstream_rate_limited', /rate limiting.*429/],
  ])('%s (post %s) is %s', async (_name, id, code, message) => {
    const err = await failure(`https://x.com/someone/status/${id}`);
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
  });

  test('a t.co link to another site says to extract that URL', async () => {
    const err = await failure('https://t.co/ElseWhere');
    expect(err.code).toBe('no_media_found');
    expect(err.message).toContain('https://example.com/article');
  });

  test('an unknown t.co code is content_not_found', async () => {
    expect((await failure('https://t.co/NoSuchCode')).code).toBe('content_not_found');
  });
});
