// Bluesky end to end: every kind of post is extracted through the gateway (AppView, PLC directory,
// PDS and Tenor being the local origin) and what a user would save is downloaded: original uploads
// and images byte for byte, an HLS variant as a job the worker turns into an MP4.
import { describe, expect, test } from '@jest/globals';
import { serveFile } from '@reelay/testkit';
import { fixture, platformHarness, streams, sha256 } from './harness.js';

const ALICE = 'did:plc:alicefixtureaaaaaaaaaaaa';
const BOB = 'did:plc:bobfixtureaaaaaaaaaaaaaa';
const ALICE_VIDEO = 'bafkreivideofixturealiceaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const BOB_VIDEO = 'bafkreibobvideofixtureaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const THREADS: Record<string, string> = {
  '3l4vidfixt2aa': 'video',
  '3l4imgfixt2aa': 'image',
  '3l4galfixt2aa': 'gallery',
  '3l4giffixt2aa': 'gif',
  '3l4quofixt2aa': 'quote',
  '3l4rwmfixt2aa': 'record-with-media',
};
/** video.bsky.app's master: muxed variants, relative URIs. */
const MASTER =
  '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-STREAM-INF:BANDWIDTH=1600000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2"\n720p/video.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=600000,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2"\n360p/video.m3u8\n';
/** Full-size images by blob CID: the made image and its type. */
const IMAGES: [cid: string, image: string, type: string][] = [
  ['bafkreiimageonefixtureaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@jpeg', 'single', 'image/jpeg'],
  ['bafkreigallery1fixtureaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@jpeg', 'gallery1', 'image/jpeg'],
  ['bafkreigallery2fixtureaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@jpeg', 'gallery2', 'image/jpeg'],
  ['bafkreigallery3fixtureaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@png', 'gallery3', 'image/png'],
  ['bafkreigallery4fixtureaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@webp', 'gallery4', 'image/webp'],
  ['bafkreirwmimagefixtureaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@jpeg', 'cat', 'image/jpeg'],
];
const watch = (did: string, cid: string) => `/watch/${encodeURIComponent(did)}/${cid}`;
const post = (rkey: string) => `https://bsky.app/profile/alice.test/post/${rkey}`;
let bobVideo: string;

const h = platformHarness({
  name: 'bluesky',
  env: (origin) => ({
    PLATFORM_BLUESKY_API: origin.base,
    PLATFORM_BLUESKY_PLC: `${origin.base}/plc`,
    PLATFORM_BLUESKY_TENOR: `${origin.base}/tenor`,
  }),
  images: {
    single: 'jpg',
    gallery1: 'jpg',
    gallery2: 'jpg',
    gallery3: 'png',
    gallery4: 'webp',
    cat: 'jpg',
    tenor: 'gif',
  },
  setup: ({ origin, media, image, variant, serveHls }) => {
    origin.route('/xrpc/app.bsky.feed.getPostThread', (req, res) => {
      const uri = new URL(req.url!, origin.base).searchParams.get('uri') ?? '';
      const name = THREADS[uri.split('/').pop()!];
      if (!name)
        return void res
          .writeHead(400, { 'content-type': 'application/json' })
          .end('{"error":"NotFound","message":"Post not found"}');
      res
        .writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
        .end(fixture(origin, `bluesky/${name}.json`));
    });
    origin.body(`/plc/${ALICE}`, fixture(origin, 'bluesky/plc-alice.json'), 'application/did+ld+json');
    origin.body(`/plc/${BOB}`, fixture(origin, 'bluesky/plc-bob.json'), 'application/did+ld+json');
    // Each PDS serves its author's blob only, so a download from the wrong PDS or of the wrong CID fails.
    bobVideo = variant(media.muxedMp4, 'bob');
    for (const [pds, did, cid, file] of [
      ['/pds-alice', ALICE, ALICE_VIDEO, media.muxedMp4],
      ['/pds-bob', BOB, BOB_VIDEO, bobVideo],
    ]) {
      origin.route(`${pds}/xrpc/com.atproto.sync.getBlob`, (req, res) => {
        const q = new URL(req.url!, origin.base).searchParams;
        if (q.get('did') !== did || q.get('cid') !== cid)
          return void res
            .writeHead(400, { 'content-type': 'application/json' })
            .end('{"error":"InvalidRequest","message":"Blob not found"}');
        serveFile(req, res, file, 'video/mp4');
      });
    }
    origin.body(`${watch(ALICE, ALICE_VIDEO)}/playlist.m3u8`, MASTER, 'application/vnd.apple.mpegurl');
    origin.body(`${watch(BOB, BOB_VIDEO)}/playlist.m3u8`, MASTER, 'application/vnd.apple.mpegurl');
    serveHls(`${watch(ALICE, ALICE_VIDEO)}/360p/video.m3u8`);
    for (const [cid, name, type] of IMAGES) origin.file(`/img/feed_fullsize/plain/${ALICE}/${cid}`, image(name), type);
    origin.file('/tenor/AbCdEfGhIjKAAAAC/happy-dance.gif', image('tenor'), 'image/gif');
  },
});

describe('Bluesky videos', () => {
  test('a video post downloads its original upload from the author PDS byte for byte', async () => {
    const data = await h.extract(post('3l4vidfixt2aa'));
    expect(data).toMatchObject({ platform: 'bluesky', extract_profile: 'bluesky_api', content_type: 'video' });
    const original = h.source(data, { stream_profile: 'muxed_progressive' });
    const got = await h.download(original.url);
    expect(got).toMatchObject({ status: 200, sha256: sha256(h.media.muxedMp4) });
    const headers = got.headers;
    expect(headers['content-type']).toBe('video/mp4');
  });

  test('an HLS variant of a video post is remuxed by the worker into an MP4 with H.264 video and AAC audio', async () => {
    const data = await h.extract(post('3l4vidfixt2aa'));
    const variant = h.source(data, { stream_profile: 'hls', quality: '360p' });
    const before = h.hitsUnder(`${watch(ALICE, ALICE_VIDEO)}/360p/seg`);
    const { started, job, info, artifactTypeMatches } = await h.runJob({ url: variant.url });
    expect({ started, status: job.status, progress: job.progress, artifactTypeMatches }).toEqual({
      started: { status: 202, error: undefined, locationIsStatusUrl: true },
      status: 'completed',
      progress: 100,
      artifactTypeMatches: true,
    });
    expect(job).toMatchObject({
      operation: 'remux',
      artifact: { filename: 'Sunset over the harbour.mp4', content_type: 'video/mp4' },
    });
    expect(streams(info)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info?.durationSeconds).toBeCloseTo(2, 0);
    expect(h.hitsUnder(`${watch(ALICE, ALICE_VIDEO)}/360p/seg`) - before).toBeGreaterThanOrEqual(2);
  });

  test("a quote post downloads the quoted video's original from the quoted author's PDS", async () => {
    const data = await h.extract(post('3l4quofixt2aa'));
    expect(data).toMatchObject({ content_type: 'video', title: 'look at this' });
    expect(await h.download(h.source(data, { stream_profile: 'muxed_progressive' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(bobVideo),
    });
  });
});

describe('Bluesky images', () => {
  test('a single image downloads at full size as the origin bytes', async () => {
    const data = await h.extract(post('3l4imgfixt2aa'));
    expect(data.content_type).toBe('image');
    const got = await h.download(h.source(data, { stream_profile: 'image' }).url);
    expect(got).toMatchObject({ status: 200, sha256: sha256(h.image('single')) });
    const headers = got.headers;
    expect(headers['content-type']).toBe('image/jpeg');
  });

  test('every image of a four-image gallery downloads as its own bytes with its own type', async () => {
    const data = await h.extract(post('3l4galfixt2aa'));
    expect(data.content_type).toBe('gallery');
    expect(data.media).toHaveLength(4);
    for (const [i, name] of ['gallery1', 'gallery2', 'gallery3', 'gallery4'].entries()) {
      const image = h.source(data, { stream_profile: 'image' }, i);
      const got = await h.download(image.url);
      expect(got).toMatchObject({ status: 200, sha256: sha256(h.image(name)) });
      const headers = got.headers;
      expect(headers['content-type']).toBe(image.mime_type);
    }
  });

  test('a Tenor GIF card downloads as the GIF itself', async () => {
    const data = await h.extract(post('3l4giffixt2aa'));
    const gif = h.source(data, { stream_profile: 'image', mime_type: 'image/gif' });
    const got = await h.download(gif.url);
    expect(got).toMatchObject({ status: 200, sha256: sha256(h.image('tenor')) });
    const headers = got.headers;
    expect(headers['content-type']).toBe('image/gif');
  });

  test('a quote with media of its own downloads its own image, not the quoted video', async () => {
    const data = await h.extract(post('3l4rwmfixt2aa'));
    expect(data.media).toHaveLength(1);
    expect(await h.download(h.source(data, { stream_profile: 'image' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(h.image('cat')),
    });
  });
});
