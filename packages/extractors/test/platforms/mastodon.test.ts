import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { createRegistry } from '../../src/index.js';
import { MASTODON_URL_CASES, mastodon, mastodonStatusApi } from '../../src/platforms/mastodon.js';
import { extractor, failure, serveJson } from './public-api-fixtures.js';

// The local origin plays the instance: status URLs and the API are on the same host.
let origin: Origin;
let media: TestMedia;
const extract = extractor();
const files = (id: string, size: string, name: string) =>
  `${origin.base}/system/media_attachments/files/113/000/000/000/000/${id}/${size}/${name}`;

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  const statuses: Record<string, string> = {
    '113000000000000001': 'video',
    '113000000000000002': 'gifv',
    '113000000000000003': 'audio',
    '113000000000000004': 'images',
    '113000000000000005': 'remote-media',
    '113000000000000006': 'reblog',
    '113000000000000007': 'text-only',
    AbCdEf123456: 'video',
    '01HQ2Z3Y4X5W6V7U8T9S0R1Q2P': 'audio',
  };
  for (const [id, name] of Object.entries(statuses))
    serveJson(origin, `/api/v1/statuses/${id}`, { fixture: `mastodon/${name}.json` });
  serveJson(origin, '/api/v1/statuses/404404', { fixture: 'mastodon/not-found.json' }, 404);
  serveJson(origin, '/api/v1/statuses/401401', { fixture: 'mastodon/auth-required.json' }, 401);
  serveJson(origin, '/api/v1/statuses/429429', { fixture: 'mastodon/rate-limited.json' }, 429);
  serveJson(origin, '/api/v1/statuses/500500', '{"error":"Something went wrong on our end"}', 500);
  // Hosts that are not Mastodon: JSON of another kind, and Misskey's error shape.
  serveJson(origin, '/api/v1/statuses/556', '{"hello":"world"}');
  serveJson(
    origin,
    '/api/v1/statuses/557',
    '{"error":{"message":"No such API.","code":"NO_SUCH_API","id":"fixture"}}',
    404,
  );
  origin.body(
    '/@someone/555',
    '<html><head><title>Not a toot</title></head><body><video src="/media/page-clip.mp4"></video></body></html>',
    'text/html',
  );
  origin.file('/@someone/556', media.muxedMp4, 'video/mp4');
  origin.body(
    '/@someone/557',
    '<html><head><title>Misskey note</title></head><body><video src="/media/note.mp4"></video></body></html>',
    'text/html',
  );

  origin.file('/system/media_attachments/files/113/000/000/000/000/101/original/clip.mp4', media.muxedMp4, 'video/mp4');
  origin.file(
    '/system/media_attachments/files/113/000/000/000/000/102/original/dance.mp4',
    media.muxedMp4,
    'video/mp4',
  );
  origin.file('/system/media_attachments/files/113/000/000/000/000/103/original/tone.mp3', media.mp3, 'audio/mpeg');
  origin.file('/system/media_attachments/files/113/000/000/000/000/104/original/spider1.png', media.png, 'image/png');
  origin.file('/system/media_attachments/files/113/000/000/000/000/105/original/spider2.jpg', media.jpg, 'image/jpeg');
  origin.file('/remote-storage/bob/original/clip.mp4', media.muxedMp4, 'video/mp4');
});

afterAll(async () => {
  await origin.close();
});

describe('Mastodon URLs', () => {
  test.each(MASTODON_URL_CASES)('%s asks %s', (url, api) => {
    expect(mastodonStatusApi(new URL(url)) ?? null).toBe(api);
    expect(mastodon.matches(new URL(url))).toBe(api !== null);
  });

  test('the registry asks platforms with their own hosts first, so their URLs never reach the any-host matcher', () => {
    const registry = createRegistry();
    expect(registry.find(new URL('https://bsky.app/profile/alice.test/post/3l4omssdl632g'))?.platform).toBe('bluesky');
    expect(registry.find(new URL('https://mastodon.social/@Gargron/109273938104512001'))?.platform).toBe('mastodon');
  });
});

describe('Mastodon statuses', () => {
  test('a video attachment is one muxed MP4 with its size, frame rate, bitrate and duration from meta.original', async () => {
    const url = origin.url('/@alice/113000000000000001');
    const { result, records } = await extract(url);
    expect(result).toEqual({
      url,
      platform: 'mastodon',
      extract_profile: 'mastodon_api',
      content_type: 'video',
      title: 'Rain on the tram window & city lights #rain',
      media: [
        {
          index: 0,
          type: 'video',
          thumbnail: files('101', 'small', 'clip.png'),
          duration: 2,
          author: 'Alice',
          upload_date: '2024-08-21',
          description: 'Rain on the tram window & city lights #rain',
          sources: [
            {
              quality: '240p',
              url: files('101', 'original', 'clip.mp4'),
              stream_profile: 'muxed_progressive',
              mime_type: 'video/mp4',
              ext: 'mp4',
              width: 320,
              height: 240,
              bitrate: 221016,
              fps: 25,
              has_video: true,
            },
          ],
        },
      ],
    });
    expect(records[0].headers).toBeUndefined();
  });

  test('a gifv is a silent looping MP4', async () => {
    const { result } = await extract(origin.url('/@alice/113000000000000002'));
    expect(result.content_type).toBe('video');
    expect(result.media[0].sources).toEqual([
      {
        quality: '240p',
        url: files('102', 'original', 'dance.mp4'),
        stream_profile: 'muxed_progressive',
        mime_type: 'video/mp4',
        ext: 'mp4',
        width: 320,
        height: 240,
        bitrate: 180000,
        fps: 25,
        has_audio: false,
        has_video: true,
      },
    ]);
  });

  test('an audio attachment is an audio-only MP3 with its bitrate and duration', async () => {
    const { result } = await extract(origin.url('/@alice/113000000000000003'));
    expect(result).toMatchObject({
      content_type: 'audio',
      title: 'New sketch: a tuning fork at 440 Hz headphones recommended',
    });
    expect(result.media).toEqual([
      {
        index: 0,
        type: 'audio',
        duration: 2.04,
        author: 'Alice',
        upload_date: '2024-08-23',
        description: 'New sketch: a tuning fork at 440 Hz headphones recommended',
        sources: [
          {
            quality: '64k',
            url: files('103', 'original', 'tone.mp3'),
            stream_profile: 'audio_only',
            mime_type: 'audio/mpeg',
            ext: 'mp3',
            bitrate: 64000,
            has_audio: true,
            has_video: false,
          },
        ],
      },
    ]);
  });

  test('two images are a gallery titled by the content warning, each item by its alt text', async () => {
    const { result } = await extract(origin.url('/@alice/113000000000000004'));
    expect(result).toMatchObject({ content_type: 'gallery', title: 'Spiders (photos)' });
    // The post's author, date and text (not its content warning) describe every item of the gallery.
    const post = {
      author: 'Alice',
      upload_date: '2024-08-24',
      description: 'Found these two in the garden this morning',
    };
    expect(result.media).toEqual([
      {
        ...post,
        index: 0,
        type: 'image',
        title: 'An orb weaver in its web',
        thumbnail: files('104', 'small', 'spider1.png'),
        sources: [
          {
            quality: '64x48',
            url: files('104', 'original', 'spider1.png'),
            stream_profile: 'image',
            mime_type: 'image/png',
            ext: 'png',
            width: 64,
            height: 48,
          },
        ],
      },
      {
        ...post,
        index: 1,
        type: 'image',
        title: 'A jumping spider on a leaf',
        thumbnail: files('105', 'small', 'spider2.jpg'),
        sources: [
          {
            quality: '64x48',
            url: files('105', 'original', 'spider2.jpg'),
            stream_profile: 'image',
            mime_type: 'image/jpeg',
            ext: 'jpg',
            width: 64,
            height: 48,
          },
        ],
      },
    ]);
  });

  test('media the instance has not cached is taken from remote_url; an unknown attachment is left out', async () => {
    const { result } = await extract(origin.url('/@bob@remote.example/113000000000000005'));
    expect(result.title).toBe('From the other server');
    expect(result.media).toHaveLength(1);
    expect(result.media[0].sources.map((s) => [s.stream_profile, s.url])).toEqual([
      ['muxed_progressive', `${origin.base}/remote-storage/bob/original/clip.mp4`],
    ]);
  });

  test('a boost gives the boosted status media and text', async () => {
    const { result } = await extract(origin.url('/users/carol/statuses/113000000000000006'));
    expect(result).toMatchObject({
      platform: 'mastodon',
      content_type: 'video',
      title: 'Rain on the tram window & city lights #rain',
    });
    expect(result.media[0].sources[0].url).toBe(files('101', 'original', 'clip.mp4'));
  });

  test('Pleroma /notice/ and GoToSocial /@user/statuses/ URLs use the same API', async () => {
    expect((await extract(origin.url('/notice/AbCdEf123456'))).result.content_type).toBe('video');
    expect((await extract(origin.url('/@bob/statuses/01HQ2Z3Y4X5W6V7U8T9S0R1Q2P'))).result.content_type).toBe('audio');
  });

  test('a status without attachments is no media', async () => {
    expect(await failure(extract(origin.url('/@alice/113000000000000007')))).toMatchObject({ code: 'no_media_found' });
  });
});

describe('Mastodon errors', () => {
  test.each([
    ['a deleted or private status (404 Record not found)', 'content_not_found', '404404', /Record not found/],
    ['an instance that refuses anonymous API access (401)', 'upstream_error', '401401', /anonymous/],
    ['a rate limit (429)', 'upstream_rate_limited', '429429', /rate limiting/],
    ['an instance failure (500)', 'upstream_error', '500500', /500/],
  ])('%s is %s', async (_what, code, id, message) => {
    const err = await failure(extract(origin.url(`/@alice/${id}`)));
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
  });
});

describe('hosts that are not Mastodon', () => {
  test('an API path answering HTML 404 hands the URL to the generic extractors', async () => {
    const { result } = await extract(origin.url('/@someone/555'));
    expect(result).toMatchObject({ platform: 'generic', extract_profile: 'html5', title: 'Not a toot' });
    expect(result.media[0].sources[0].url).toBe(origin.url('/media/page-clip.mp4'));
  });

  test('JSON that is not a status is declined too: the URL turns out to be a file', async () => {
    const { result } = await extract(origin.url('/@someone/556'));
    expect(result).toMatchObject({ platform: 'generic', extract_profile: 'direct_file', content_type: 'video' });
  });

  test("Misskey's error object (not Mastodon's error string) is declined", async () => {
    const { result } = await extract(origin.url('/@someone/557'));
    expect(result.platform).toBe('generic');
  });
});
