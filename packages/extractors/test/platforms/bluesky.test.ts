import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { serveFile, startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { createRegistry } from '../../src/index.js';
import { BLUESKY_URL_CASES, bluesky, blueskyPostUri } from '../../src/platforms/bluesky.js';
import { extractor, failure, fixture, hitsUnder } from './public-api-fixtures.js';

const ALICE = 'did:plc:alicefixtureaaaaaaaaaaaa';
const BOB = 'did:plc:bobfixtureaaaaaaaaaaaaaa';
const DAVE = 'did:plc:davefixtureaaaaaaaaaaaaa';
const ALICE_VIDEO = 'bafkreivideofixturealiceaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const BOB_VIDEO = 'bafkreibobvideofixtureaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

/** video.bsky.app's master: muxed variants, relative URIs. */
const MASTER = `#EXTM3U
#EXT-X-VERSION:3
#EXT-X-STREAM-INF:BANDWIDTH=1600000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2"
720p/video.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=600000,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2"
360p/video.m3u8
`;

/** getPostThread answers by at-URI: [status, fixture or literal body]. */
const THREADS: Record<string, [number, string]> = {
  'at://alice.test/app.bsky.feed.post/3l4vidfixt2aa': [200, 'bluesky/video.json'],
  [`at://${ALICE}/app.bsky.feed.post/3l4vidfixt2aa`]: [200, 'bluesky/video.json'],
  'at://alice.test/app.bsky.feed.post/3l4imgfixt2aa': [200, 'bluesky/image.json'],
  'at://alice.test/app.bsky.feed.post/3l4galfixt2aa': [200, 'bluesky/gallery.json'],
  'at://alice.test/app.bsky.feed.post/3l4giffixt2aa': [200, 'bluesky/gif.json'],
  'at://alice.test/app.bsky.feed.post/3l4lnkfixt2aa': [200, 'bluesky/link-card.json'],
  'at://alice.test/app.bsky.feed.post/3l4quofixt2aa': [200, 'bluesky/quote.json'],
  'at://alice.test/app.bsky.feed.post/3l4rwmfixt2aa': [200, 'bluesky/record-with-media.json'],
  'at://alice.test/app.bsky.feed.post/3l4qdlfixt2aa': [200, 'bluesky/quote-of-deleted.json'],
  'at://carol.example/app.bsky.feed.post/3l4webfixt2aa': [200, 'bluesky/video-did-web.json'],
  'at://dave.test/app.bsky.feed.post/3l4davfixt2aa': [200, 'bluesky/video-no-pds.json'],
  'at://alice.test/app.bsky.feed.post/3l4gonefixt2a': [200, 'bluesky/not-found-post.json'],
  'at://alice.test/app.bsky.feed.post/3l4blkfixt2aa': [200, 'bluesky/blocked-post.json'],
  'at://alice.test/app.bsky.feed.post/3l4nonefixt2a': [400, 'bluesky/error-not-found.json'],
  'at://nobody.test/app.bsky.feed.post/3l4nonefixt2a': [400, 'bluesky/error-unknown-handle.json'],
  'at://alice.test/app.bsky.feed.post/3l4busyfixt2a': [429, 'bluesky/error-rate-limited.json'],
  'at://alice.test/app.bsky.feed.post/3l4failfixt2a': [502, '<html><body>Bad Gateway</body></html>'],
  'at://alice.test/app.bsky.feed.post/3l4oddfixt2aa': [200, 'this is not JSON'],
};

let origin: Origin;
let media: TestMedia;
let extract: ReturnType<typeof extractor>;
const post = (handle: string, rkey: string) => `https://bsky.app/profile/${handle}/post/${rkey}`;
const blob = (pds: string, did: string, cid: string) =>
  `${origin.base}${pds}/xrpc/com.atproto.sync.getBlob?did=${encodeURIComponent(did)}&cid=${cid}`;
const watch = (did: string, cid: string, file: string) =>
  `${origin.base}/watch/${encodeURIComponent(did)}/${cid}/${file}`;

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  origin.route('/xrpc/app.bsky.feed.getPostThread', (req, res) => {
    const uri = new URL(req.url!, origin.base).searchParams.get('uri') ?? '';
    const [status, body] = THREADS[uri] ?? [400, '{"error":"InvalidRequest","message":"unexpected test URI"}'];
    const text = body.endsWith('.json') ? fixture(origin, body) : body;
    res
      .writeHead(status, { 'content-type': text.startsWith('{') ? 'application/json; charset=utf-8' : 'text/html' })
      .end(text);
  });
  origin.body(`/plc/${ALICE}`, fixture(origin, 'bluesky/plc-alice.json'), 'application/did+ld+json');
  origin.body(`/plc/${BOB}`, fixture(origin, 'bluesky/plc-bob.json'), 'application/did+ld+json');
  origin.body('/didweb/.well-known/did.json', fixture(origin, 'bluesky/did-web.json'), 'application/json');
  // A PDS answers getBlob with the file when the query names a blob it holds.
  for (const [pds, did, cid] of [
    ['/pds-alice', ALICE, ALICE_VIDEO],
    ['/pds-bob', BOB, BOB_VIDEO],
    ['/pds-carol', 'did:web:carol.example', ALICE_VIDEO],
    ['/fallback-pds', DAVE, ALICE_VIDEO],
  ]) {
    origin.route(`${pds}/xrpc/com.atproto.sync.getBlob`, (req, res) => {
      const q = new URL(req.url!, origin.base).searchParams;
      if (q.get('did') !== did || q.get('cid') !== cid)
        return void res
          .writeHead(400, { 'content-type': 'application/json' })
          .end('{"error":"InvalidRequest","message":"Blob not found"}');
      serveFile(req, res, media.muxedMp4, 'video/mp4');
    });
  }
  origin.body(
    `/watch/${encodeURIComponent(ALICE)}/${ALICE_VIDEO}/playlist.m3u8`,
    MASTER,
    'application/vnd.apple.mpegurl',
  );
  origin.body(`/watch/${encodeURIComponent(BOB)}/${BOB_VIDEO}/playlist.m3u8`, MASTER, 'application/vnd.apple.mpegurl');
  origin.body(
    `/watch/${encodeURIComponent(DAVE)}/${ALICE_VIDEO}/playlist.m3u8`,
    MASTER,
    'application/vnd.apple.mpegurl',
  );
  extract = extractor({
    bluesky_api: origin.base,
    bluesky_plc: `${origin.base}/plc`,
    bluesky_didweb: `${origin.base}/didweb`,
    bluesky_pds: `${origin.base}/fallback-pds`,
    bluesky_tenor: `${origin.base}/tenor`,
  });
});

afterAll(async () => {
  await origin.close();
});

describe('Bluesky URLs', () => {
  test.each(BLUESKY_URL_CASES)('%s names %s', (url, uri) => {
    expect(blueskyPostUri(new URL(url)) ?? null).toBe(uri);
    expect(bluesky.matches(new URL(url))).toBe(uri !== null);
  });

  test('every post URL is routed to the bluesky extractor by the registry', () => {
    const registry = createRegistry();
    for (const [url, uri] of BLUESKY_URL_CASES) if (uri) expect(registry.find(new URL(url))?.platform).toBe('bluesky');
  });
});

describe('Bluesky posts', () => {
  test('a video gives the HLS variants and the original upload from the author PDS, found through the PLC directory', async () => {
    const { result, records } = await extract(post('alice.test', '3l4vidfixt2aa'));
    expect(result).toEqual({
      url: post('alice.test', '3l4vidfixt2aa'),
      platform: 'bluesky',
      extract_profile: 'bluesky_api',
      content_type: 'video',
      title: 'Sunset over the harbour',
      media: [
        {
          index: 0,
          type: 'video',
          thumbnail: watch(ALICE, ALICE_VIDEO, 'thumbnail.jpg'),
          author: 'Alice',
          upload_date: '2024-09-20',
          description: 'Sunset over the harbour\nshot from the ferry',
          sources: [
            {
              quality: '720p',
              url: watch(ALICE, ALICE_VIDEO, '720p/video.m3u8'),
              stream_profile: 'hls',
              width: 1280,
              height: 720,
              bitrate: 1600000,
              codecs: 'avc1.64001f,mp4a.40.2',
              has_audio: true,
              has_video: true,
            },
            {
              quality: '720p',
              url: blob('/pds-alice', ALICE, ALICE_VIDEO),
              stream_profile: 'muxed_progressive',
              mime_type: 'video/mp4',
              ext: 'mp4',
              width: 1280,
              height: 720,
              size: 2404871,
            },
            {
              quality: '360p',
              url: watch(ALICE, ALICE_VIDEO, '360p/video.m3u8'),
              stream_profile: 'hls',
              width: 640,
              height: 360,
              bitrate: 600000,
              codecs: 'avc1.64001e,mp4a.40.2',
              has_audio: true,
              has_video: true,
            },
          ],
        },
      ],
    });
    // No download headers: every source is fetched as a plain GET.
    expect(records.map((r) => r.headers)).toEqual([undefined, undefined, undefined]);
    expect(hitsUnder(origin, '/xrpc/app.bsky.feed.getPostThread')).toContain(
      `/xrpc/app.bsky.feed.getPostThread?uri=${encodeURIComponent('at://alice.test/app.bsky.feed.post/3l4vidfixt2aa')}&depth=0&parentHeight=0`,
    );
  });

  test('a post named by DID, by at-URI, or on main.bsky.dev reads the same thread', async () => {
    for (const url of [
      post(ALICE, '3l4vidfixt2aa'),
      'at://alice.test/app.bsky.feed.post/3l4vidfixt2aa',
      'https://main.bsky.dev/profile/alice.test/post/3l4vidfixt2aa',
    ]) {
      const { result } = await extract(url);
      expect(result.url).toBe(url);
      expect(result.media[0].sources.map((s) => s.url)).toContain(blob('/pds-alice', ALICE, ALICE_VIDEO));
    }
  });

  test('a did:web author is resolved through the host well-known document', async () => {
    const { result } = await extract(post('carol.example', '3l4webfixt2aa'));
    // Carol's playlist is missing at the origin: the original upload is still offered.
    expect(result.media[0].sources).toEqual([
      {
        quality: '720p',
        url: blob('/pds-carol', 'did:web:carol.example', ALICE_VIDEO),
        stream_profile: 'muxed_progressive',
        mime_type: 'video/mp4',
        ext: 'mp4',
        width: 1280,
        height: 720,
        size: 2404871,
      },
    ]);
  });

  test('an author whose DID document cannot be read gets the fallback PDS', async () => {
    const { result } = await extract(post('dave.test', '3l4davfixt2aa'));
    expect(result.media[0].sources.map((s) => [s.stream_profile, s.url])).toEqual([
      ['hls', watch(DAVE, ALICE_VIDEO, '720p/video.m3u8')],
      ['muxed_progressive', blob('/fallback-pds', DAVE, ALICE_VIDEO)],
      ['hls', watch(DAVE, ALICE_VIDEO, '360p/video.m3u8')],
    ]);
  });

  test('one image is an image result at full size, titled after the author when the post has no text', async () => {
    const { result } = await extract(post('alice.test', '3l4imgfixt2aa'));
    const cid = 'bafkreiimageonefixtureaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    expect(result).toMatchObject({ content_type: 'image', title: 'Bluesky post by @alice.test' });
    expect(result.media).toEqual([
      {
        index: 0,
        type: 'image',
        thumbnail: `${origin.base}/img/feed_thumbnail/plain/${ALICE}/${cid}@jpeg`,
        author: 'Alice',
        upload_date: '2024-10-01',
        sources: [
          {
            quality: 'original',
            url: `${origin.base}/img/feed_fullsize/plain/${ALICE}/${cid}@jpeg`,
            stream_profile: 'image',
            mime_type: 'image/jpeg',
            ext: 'jpg',
          },
        ],
      },
    ]);
  });

  test('four images are a gallery of four image items, each titled by its alt text', async () => {
    const { result } = await extract(post('alice.test', '3l4galfixt2aa'));
    expect(result.content_type).toBe('gallery');
    expect(result.title).toBe("Four from this morning's walk");
    expect(result.media.map((m) => [m.type, m.title, m.sources[0].mime_type, m.sources[0].ext])).toEqual([
      ['image', 'Harbour at dawn', 'image/jpeg', 'jpg'],
      ['image', 'Fishing boats', 'image/jpeg', 'jpg'],
      ['image', undefined, 'image/png', 'png'],
      ['image', 'Gulls on the pier', 'image/webp', 'webp'],
    ]);
    expect(
      result.media.every(
        (m) => m.sources[0].url.includes('/img/feed_fullsize/') && m.thumbnail?.includes('/img/feed_thumbnail/'),
      ),
    ).toBe(true);
  });

  test('a Tenor GIF link card is the GIF at full size (the hh/ww downscale query dropped)', async () => {
    const { result } = await extract(post('alice.test', '3l4giffixt2aa'));
    expect(result).toMatchObject({ content_type: 'image', title: 'me when the build is green' });
    expect(result.media[0].sources).toEqual([
      {
        quality: 'original',
        url: `${origin.base}/tenor/AbCdEfGhIjKAAAAC/happy-dance.gif`,
        stream_profile: 'image',
        mime_type: 'image/gif',
        ext: 'gif',
      },
    ]);
  });

  test('a link card to another site is no media', async () => {
    expect(await failure(extract(post('alice.test', '3l4lnkfixt2aa')))).toMatchObject({ code: 'no_media_found' });
  });

  test('a quote post gives the quoted video, its original read from the quoted author PDS', async () => {
    const { result } = await extract(post('alice.test', '3l4quofixt2aa'));
    expect(result).toMatchObject({ content_type: 'video', title: 'look at this' });
    expect(result.media[0].sources.map((s) => [s.quality, s.stream_profile, s.url])).toEqual([
      ['720p', 'hls', watch(BOB, BOB_VIDEO, '720p/video.m3u8')],
      ['360p', 'hls', watch(BOB, BOB_VIDEO, '360p/video.m3u8')],
      ['240p', 'muxed_progressive', blob('/pds-bob', BOB, BOB_VIDEO)],
    ]);
  });

  test('a quote with media of its own (recordWithMedia) gives its own media, not the quoted post', async () => {
    const { result } = await extract(post('alice.test', '3l4rwmfixt2aa'));
    expect(result.content_type).toBe('image');
    expect(result.media).toHaveLength(1);
    expect(result.media[0].sources[0].url).toBe(
      `${origin.base}/img/feed_fullsize/plain/${ALICE}/bafkreirwmimagefixtureaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@jpeg`,
    );
  });

  test('a quote of a deleted post has no media', async () => {
    expect(await failure(extract(post('alice.test', '3l4qdlfixt2aa')))).toMatchObject({ code: 'no_media_found' });
  });
});

describe('Bluesky errors', () => {
  test.each([
    ['a deleted post (notFoundPost)', 'content_not_found', '3l4gonefixt2a', /deleted/],
    ['a post hidden by a block (blockedPost)', 'content_not_found', '3l4blkfixt2aa', /block/],
    ['a NotFound error', 'content_not_found', '3l4nonefixt2a', /Post not found/],
    ['a rate limit (429)', 'upstream_rate_limited', '3l4busyfixt2a', /rate limiting/],
    ['an AppView failure', 'upstream_error', '3l4failfixt2a', /502/],
    ['an answer that is not JSON', 'upstream_error', '3l4oddfixt2aa', /without the post thread/],
  ])('%s is %s', async (_what, code, rkey, message) => {
    const err = await failure(extract(post('alice.test', rkey)));
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
  });

  test('a handle that does not resolve is content_not_found', async () => {
    expect(await failure(extract(post('nobody.test', '3l4nonefixt2a')))).toMatchObject({ code: 'content_not_found' });
  });
});
