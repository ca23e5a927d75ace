import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fs from 'node:fs';
import { Egress } from '@reelay/egress';
import * as shared from './public-api-fixtures.js';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { createRegistry } from '../../src/index.js';
import { reddit, redditRoute } from '../../src/platforms/reddit.js';

const registry = createRegistry();
const egress = new Egress({ allowlist: ['127.0.0.1'] });
let origin: Origin;
let media: TestMedia;
const userAgents: string[] = [];

const fixture = (name: string): string => shared.fixture(origin, `reddit/${name}`);

/** The post API answer for an id: a fixture, with the User-Agent it was asked with remembered. */
function post(id: string, file: string, status = 200, type = 'application/json; charset=UTF-8'): void {
  origin.route(`/comments/${id}.json`, (req, res) => {
    userAgents.push(String(req.headers['user-agent']));
    res.writeHead(status, { 'content-type': type }).end(fixture(file));
  });
}

const extract = (url: string, endpoints: Record<string, string> = {}) =>
  registry.extract(new URL(url), { egress, endpoints: { reddit_www: origin.base, ...endpoints } });

const failure = (url: string, endpoints?: Record<string, string>) => shared.failure(extract(url, endpoints));

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  post('vid1', 'video-dash.json');
  post('fb1', 'video-fallback.json');
  post('mute1', 'video-silent.json');
  post('gif1', 'gif-video.json');
  post('gif2', 'gif-file.json');
  post('img1', 'image.json');
  post('gal1', 'gallery.json');
  post('xp1', 'crosspost.json');
  post('lnk1', 'link.json');
  // The same older upload, now with a manifest address that fails: the fallback route still works.
  origin.route('/comments/fb2.json', (_req, res) => {
    const body = fixture('video-fallback.json').replace(
      '"has_audio": true,',
      `"has_audio": true, "dash_url": "${origin.base}/v/fb1abc/DASHPlaylist.mpd?a=1",`,
    );
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  post('priv1', 'private.json', 403);
  post('quar1', 'quarantined.json', 403);
  post('blocked1', 'blocked.html', 200, 'text/html; charset=utf-8');
  post('blocked2', 'blocked.html', 403, 'text/html; charset=utf-8');
  origin.status('/comments/busy1.json', 429, 'Too Many Requests');
  origin.status('/comments/gone1.json', 404, '{"message": "Not Found", "error": 404}');
  for (const dir of ['vid1abc', 'gif1abc'])
    origin.body(`/v/${dir}/DASHPlaylist.mpd`, fixture('dash.mpd'), 'application/dash+xml');
  origin.body('/v/vid1abc/HLSPlaylist.m3u8', fixture('hls-master.m3u8'), 'application/vnd.apple.mpegurl');
  origin.file('/v/vid1abc/DASH_360.mp4', media.videoOnlyMp4, 'video/mp4');
  origin.file('/v/vid1abc/DASH_AUDIO_128.mp4', media.audioOnlyM4a, 'video/mp4');
  // The older upload has only the oldest-but-one audio name; the newer names are refused as S3 does.
  origin.file('/v/fb1abc/DASH_360.mp4', media.videoOnlyMp4, 'video/mp4');
  origin.status('/v/fb1abc/DASH_AUDIO_128.mp4', 403, 'AccessDenied');
  origin.status('/v/fb1abc/DASH_AUDIO_64.mp4', 403, 'AccessDenied');
  origin.file('/v/fb1abc/DASH_audio.mp4', media.audioOnlyM4a, 'video/mp4');
  origin.file('/i/pic.png', media.png, 'image/png');
  // Short links: Reddit answers them with a redirect to the post.
  origin.redirect(
    '/r/videos/s/AbCdEf123',
    'https://www.reddit.com/r/videos/comments/vid1/a_test_clip_with_split_audio/?share_id=xyz&utm_source=share',
    301,
  );
  origin.redirect('/r/pics/s/Relative1', '/r/pics/comments/img1/test_card_at_dawn/', 301);
  origin.redirect('/r/videos/s/Gone404', 'https://www.reddit.com/r/videos/s/Gone404x', 301);
  origin.redirect('/r/videos/s/ToLogin', 'https://www.reddit.com/login/?dest=x', 302);
  origin.redirect('/video/vid1abc', 'https://www.reddit.com/r/videos/comments/vid1/a_test_clip_with_split_audio/', 301);
});

afterAll(async () => {
  await origin.close();
});

describe('Reddit URLs', () => {
  test.each([
    ['https://www.reddit.com/r/videos/comments/vid1/a_test_clip/', { kind: 'post', id: 'vid1' }],
    ['https://old.reddit.com/r/videos/comments/VID1/', { kind: 'post', id: 'vid1' }],
    ['https://new.reddit.com/r/videos/comments/vid1', { kind: 'post', id: 'vid1' }],
    ['https://np.reddit.com/r/videos/comments/vid1/slug/abc123/', { kind: 'post', id: 'vid1' }],
    ['https://m.reddit.com/r/videos/comments/vid1/slug?context=3', { kind: 'post', id: 'vid1' }],
    ['https://sh.reddit.com/r/videos/comments/vid1/slug/comment/k3c2b1a/', { kind: 'post', id: 'vid1' }],
    ['https://reddit.com/comments/vid1', { kind: 'post', id: 'vid1' }],
    ['https://www.reddit.com/user/someone/comments/vid1/slug/', { kind: 'post', id: 'vid1' }],
    ['https://www.reddit.com/r/u_someone/comments/vid1/slug/', { kind: 'post', id: 'vid1' }],
    ['https://www.reddit.com/gallery/gal1', { kind: 'post', id: 'gal1' }],
    ['https://redd.it/vid1', { kind: 'post', id: 'vid1' }],
    ['https://www.reddit.com/r/videos/s/AbCdEf123', { kind: 'share' }],
    ['https://v.redd.it/vid1abc', { kind: 'video', id: 'vid1abc' }],
    ['https://www.reddit.com/video/vid1abc', { kind: 'video', id: 'vid1abc' }],
    ['https://i.redd.it/pic.png', { kind: 'image', file: 'pic.png' }],
    // Share parameters, the u/ form of a user's share link, and a comment's permalink.
    [
      'https://www.reddit.com/r/videos/comments/vid1/a_test_clip/?utm_source=share&utm_medium=web3x&share_id=AbC',
      { kind: 'post', id: 'vid1' },
    ],
    ['https://www.reddit.com/u/someone/s/AbCdEf123', { kind: 'share' }],
    ['https://www.reddit.com/r/videos/comments/vid1/comment/k3c2b1a/?context=3', { kind: 'post', id: 'vid1' }],
    ['https://v.redd.it/vid1abc/', { kind: 'video', id: 'vid1abc' }],
    // Not ours: listings, profiles, look-alike hosts, an empty image path.
    ['https://www.reddit.com/r/videos/', null],
    ['https://www.reddit.com/r/videos/comments/', null],
    ['https://www.reddit.com/user/someone/', null],
    ['https://notreddit.com/r/videos/comments/vid1/', null],
    ['https://www.reddit.com.example/r/videos/comments/vid1/', null],
    ['https://i.redd.it/', null],
  ])('%s is %j', (url, route) => {
    expect(redditRoute(new URL(url)) ?? null).toEqual(route);
    expect(reddit.matches(new URL(url))).toBe(route !== null);
  });

  test('the platform lists its kinds, and patterns that describe the same URLs it matches', () => {
    expect(reddit.platform).toBe('reddit');
    expect(reddit.kinds).toEqual(['video', 'image', 'gallery']);
    const listed = (url: string) => reddit.patterns.some((p) => p.test(url));
    for (const url of [
      'https://www.reddit.com/r/videos/comments/vid1/slug/',
      'https://redd.it/vid1',
      'https://v.redd.it/vid1abc',
      'https://i.redd.it/pic.png',
      'https://www.reddit.com/r/videos/s/AbCdEf123',
    ]) {
      expect([url, listed(url)]).toEqual([url, true]);
    }
    for (const url of [
      'https://notreddit.com/r/videos/comments/vid1/',
      'https://www.reddit.com.example/r/videos/comments/vid1/',
      'https://www.reddit.com/r/videos/',
    ]) {
      expect([url, listed(url)]).toEqual([url, false]);
    }
  });
});

describe('Reddit videos', () => {
  test('a video reads its DASH manifest: video-only qualities and the audio file form one item, HLS variants are extra sources', async () => {
    const { result, records } = await extract(
      'https://www.reddit.com/r/videos/comments/vid1/a_test_clip_with_split_audio/',
    );
    expect(result).toMatchObject({
      platform: 'reddit',
      extract_profile: 'reddit_json',
      content_type: 'video',
      title: 'A test clip with split audio',
    });
    expect(result.media).toHaveLength(1);
    const item = result.media[0];
    expect(item.duration).toBe(2);
    expect(item).toMatchObject({ author: 'clipmaker', upload_date: '2024-06-10' }); // created_utc 1718000000
    expect(item.thumbnail).toBe(`${origin.base}/reddit/preview/vid1.jpg?width=640&format=pjpg&s=abc`);
    const progressive = item.sources.filter((s) => s.stream_profile !== 'hls');
    expect(progressive).toEqual([
      expect.objectContaining({
        url: `${origin.base}/v/vid1abc/DASH_360.mp4`,
        stream_profile: 'video_only',
        quality: '360p',
        width: 640,
        height: 360,
        has_audio: false,
        has_video: true,
      }),
      expect.objectContaining({
        url: `${origin.base}/v/vid1abc/DASH_240.mp4`,
        stream_profile: 'video_only',
        quality: '240p',
        has_audio: false,
      }),
      expect.objectContaining({
        url: `${origin.base}/v/vid1abc/DASH_AUDIO_128.mp4`,
        stream_profile: 'audio_only',
        has_audio: true,
        has_video: false,
        bitrate: 130000,
      }),
    ]);
    const hls = item.sources.filter((s) => s.stream_profile === 'hls').map((s) => s.url);
    expect(hls).toEqual(
      expect.arrayContaining([
        `${origin.base}/v/vid1abc/HLS_360.m3u8`,
        `${origin.base}/v/vid1abc/HLS_240.m3u8`,
        `${origin.base}/v/vid1abc/HLS_AUDIO_128.m3u8`,
      ]),
    );
    // Both members of the merge pair belong to the same media item.
    expect(new Set(records.filter((r) => r.stream_profile !== 'hls').map((r) => r.media_index))).toEqual(new Set([0]));
    expect(origin.hits.get('/comments/vid1.json?raw_json=1')).toBeGreaterThan(0);
    expect(userAgents.at(-1)).toMatch(/reelay/);
  });

  test('without a manifest the fallback file is the video and the audio is found by probing its names in order', async () => {
    const { result } = await extract('https://www.reddit.com/r/oldvideos/comments/fb1/');
    expect(result.media[0].sources).toEqual([
      expect.objectContaining({
        url: `${origin.base}/v/fb1abc/DASH_360.mp4?source=fallback`,
        stream_profile: 'video_only',
        width: 640,
        height: 360,
        bitrate: 1_200_000,
        has_audio: false,
      }),
      expect.objectContaining({
        url: `${origin.base}/v/fb1abc/DASH_audio.mp4`,
        stream_profile: 'audio_only',
        has_audio: true,
        has_video: false,
      }),
    ]);
    expect(origin.hits.get('/v/fb1abc/DASH_AUDIO_128.mp4')).toBe(1);
    expect(origin.hits.get('/v/fb1abc/DASH_AUDIO_64.mp4')).toBe(1);
    expect(origin.hits.get('/v/fb1abc/audio')).toBeUndefined();
  });

  test('a manifest that cannot be read leaves the fallback file and the probed audio', async () => {
    const { result } = await extract('https://www.reddit.com/r/oldvideos/comments/fb2/');
    expect(origin.hits.get('/v/fb1abc/DASHPlaylist.mpd?a=1')).toBe(1);
    expect(result.media[0].sources.map((s) => [s.url.replace(origin.base, ''), s.stream_profile])).toEqual([
      ['/v/fb1abc/DASH_360.mp4?source=fallback', 'video_only'],
      ['/v/fb1abc/DASH_audio.mp4', 'audio_only'],
    ]);
  });

  test('a video posted without sound has one silent video source and no audio is looked for', async () => {
    const { result } = await extract('https://www.reddit.com/r/silentfilms/comments/mute1/');
    expect(result.media[0].sources).toEqual([
      expect.objectContaining({ stream_profile: 'video_only', has_audio: false, has_video: true }),
    ]);
    expect([...origin.hits.keys()].filter((k) => k.startsWith('/v/mute1abc/'))).toEqual([]);
  });

  test('a GIF uploaded as video keeps only its video streams, all marked silent', async () => {
    const { result } = await extract('https://www.reddit.com/r/gifs/comments/gif1/');
    expect(result.content_type).toBe('video');
    expect(result.media[0].sources.map((s) => [s.stream_profile, s.has_audio])).toEqual([
      ['video_only', false],
      ['video_only', false],
    ]);
  });

  test('a crosspost takes the media of the original post and keeps its own title', async () => {
    const { result } = await extract('https://www.reddit.com/r/mirror/comments/xp1/crossposted/');
    expect(result.title).toBe('Crossposted: a test clip');
    expect(result.media[0].sources.map((s) => s.stream_profile)).toEqual(['video_only', 'video_only', 'audio_only']);
  });
});

describe('Reddit images and galleries', () => {
  test('an image post is one image with the preview dimensions', async () => {
    const { result } = await extract('https://www.reddit.com/r/pics/comments/img1/test_card_at_dawn/');
    expect(result).toMatchObject({ content_type: 'image', title: 'Test card at dawn' });
    expect(result.media[0].sources).toEqual([
      {
        url: `${origin.base}/i/testcard.jpg`,
        stream_profile: 'image',
        quality: '64x48',
        mime_type: 'image/jpeg',
        ext: 'jpg',
        width: 64,
        height: 48,
      },
    ]);
  });

  test('a .gif post is the GIF and its silent MP4 rendering, with escaped URLs unescaped', async () => {
    const { result } = await extract('https://www.reddit.com/r/gifs/comments/gif2/');
    expect(result.media[0].type).toBe('video');
    expect(result.media[0].sources).toEqual([
      expect.objectContaining({
        url: `${origin.base}/reddit/preview/loop.gif?format=mp4&s=ghi`,
        stream_profile: 'video_only',
        mime_type: 'video/mp4',
        has_audio: false,
      }),
      expect.objectContaining({
        url: `${origin.base}/i/loop.gif`,
        stream_profile: 'image',
        mime_type: 'image/gif',
        ext: 'gif',
      }),
    ]);
  });

  test('a gallery keeps gallery_data order, captions, animated items as video, and drops failed items', async () => {
    const { result } = await extract('https://www.reddit.com/r/pics/comments/gal1/three_frames/');
    expect(result.content_type).toBe('gallery');
    expect(result.media.map((m) => [m.type, m.title, m.sources.map((s) => s.url)])).toEqual([
      ['image', 'first, a PNG', [`${origin.base}/preview/m3png.png?width=64&format=png&s=4`]],
      ['image', undefined, [`${origin.base}/preview/m1jpg.jpg?width=64&format=pjpg&auto=webp&s=2`]],
      ['video', 'then it moves', [`${origin.base}/preview/m2anim.gif?format=mp4&s=3`, `${origin.base}/i/m2anim.gif`]],
    ]);
    expect(result.media[1].sources[0]).toMatchObject({ mime_type: 'image/jpeg', width: 64, height: 48 });
  });

  test('an i.redd.it link is the file itself, checked to exist', async () => {
    const { result } = await extract('https://i.redd.it/pic.png', { reddit_image: `${origin.base}/i` });
    expect(result).toMatchObject({ platform: 'reddit', extract_profile: 'direct_file', content_type: 'image' });
    expect(result.media[0].sources).toEqual([
      {
        url: `${origin.base}/i/pic.png`,
        stream_profile: 'image',
        quality: 'original',
        mime_type: 'image/png',
        ext: 'png',
        size: fs.statSync(media.png).size,
      },
    ]);
  });
});

describe('Reddit short links', () => {
  test('a share link is followed to the post it names', async () => {
    const { result } = await extract('https://www.reddit.com/r/videos/s/AbCdEf123');
    expect(result.title).toBe('A test clip with split audio');
    expect(result.url).toBe('https://www.reddit.com/r/videos/s/AbCdEf123');
    expect(origin.hits.get('/r/videos/s/AbCdEf123')).toBeGreaterThan(0);
  });

  test('a relative redirect from a share link is read against reddit.com', async () => {
    const { result } = await extract('https://reddit.com/r/pics/s/Relative1');
    expect(result.title).toBe('Test card at dawn');
  });

  test('a v.redd.it link is resolved through reddit.com/video/{id} to its post', async () => {
    const { result } = await extract('https://v.redd.it/vid1abc');
    expect(result.title).toBe('A test clip with split audio');
    expect(origin.hits.get('/video/vid1abc')).toBeGreaterThan(0);
  });

  test('redd.it/{id} names the post directly', async () => {
    const { result } = await extract('https://redd.it/img1');
    expect(result.title).toBe('Test card at dawn');
  });

  test('a share link that leads nowhere is content_not_found; one that leads off the posts is no_media_found', async () => {
    expect((await failure('https://www.reddit.com/r/videos/s/Gone404')).code).toBe('content_not_found');
    expect((await failure('https://www.reddit.com/r/videos/s/ToLogin')).code).toBe('no_media_found');
  });
});

describe('Reddit errors', () => {
  test.each([
    ['a deleted or unknown post', 'gone1', 'content_not_found', /does not exist/],
    ['a post in a private community', 'priv1', 'content_not_found', /private community/],
    ['a post in a quarantined community', 'quar1', 'upstream_error', /quarantined/],
    ['an HTML page instead of JSON', 'blocked1', 'upstream_error', /Reddit refused this server's IP/],
    ['a 403 HTML page', 'blocked2', 'upstream_error', /Reddit refused this server's IP/],
    ['rate limiting', 'busy1', 'upstream_rate_limited', /rate limiting.*429/],
  ])('%s (post %s) is %s', async (_name, id, code, message) => {
    const err = await failure(`https://www.reddit.com/r/any/comments/${id}/`);
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
  });

  test('a link post to another site names the URL to extract instead', async () => {
    const err = await failure('https://www.reddit.com/r/music/comments/lnk1/');
    expect(err).toEqual({
      code: 'no_media_found',
      message: 'This Reddit post links to https://www.youtube.com/watch?v=abcdefghijk; extract that URL instead.',
    });
  });

  test('a missing i.redd.it file is content_not_found', async () => {
    expect((await failure('https://i.redd.it/missing.jpg', { reddit_image: `${origin.base}/i` })).code).toBe(
      'content_not_found',
    );
  });
});
