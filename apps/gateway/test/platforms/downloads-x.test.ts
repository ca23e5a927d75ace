// X end to end: every kind of post is extracted through the gateway (the syndication endpoint being
// the local origin, token checked) and downloaded: MP4 variants, the GIF's MP4, photos and media of
// mixed and quoted posts byte for byte; an HLS video variant with its audio rendition as a worker job.
import { describe, expect, test } from '@jest/globals';
import { syndicationToken } from '@reelay/extractors';
import { fixture, platformHarness, streams, sha256 } from './harness.js';

const VIDEO = '/x/amplify_video/1790000000000000001';
const POSTS: Record<string, string> = {
  '1790000000000000001': 'video',
  '1800000000000000002': 'gif',
  '1811111111111111111': 'photos',
  '1822222222222222222': 'mixed',
  '1833333333333333333': 'quoted',
};
let files: Record<string, string> = {};

const h = platformHarness({
  name: 'x',
  env: (origin) => ({ PLATFORM_X_SYNDICATION: origin.base }),
  images: { cardOne: 'png', cardTwo: 'jpg' },
  setup: ({ origin, media, image, variant, serveHls }) => {
    origin.route('/tweet-result', (req, res) => {
      const query = new URL(req.url!, origin.base).searchParams;
      const id = query.get('id') ?? '';
      const ok = POSTS[id] !== undefined && query.get('token') === syndicationToken(id);
      res
        .writeHead(ok ? 200 : 404, { 'content-type': 'application/json;charset=utf-8' })
        .end(ok ? fixture(origin, `x/${POSTS[id]}.json`) : '');
    });
    files = {
      high: variant(media.muxedMp4, 'high'),
      mid: variant(media.muxedMp4, 'mid'),
      gif: variant(media.videoOnlyMp4, 'gif'),
      mixed: variant(media.muxedMp4, 'mixed'),
      quoted: variant(media.muxedMp4, 'quoted'),
    };
    origin.body(`${VIDEO}/pl/master.m3u8`, fixture(origin, 'x/master.m3u8'), 'application/x-mpegURL');
    serveHls(`${VIDEO}/pl/avc1/320x240/low.m3u8`);
    serveHls(`${VIDEO}/pl/mp4a/128000/aud.m3u8`);
    origin.file(`${VIDEO}/vid/avc1/320x240/low.mp4`, media.muxedMp4, 'video/mp4');
    origin.file(`${VIDEO}/vid/avc1/640x360/mid.mp4`, files.mid, 'video/mp4');
    origin.file(`${VIDEO}/vid/avc1/1280x720/high.mp4`, files.high, 'video/mp4');
    origin.file('/x/tweet_video/GiFloop.mp4', files.gif, 'video/mp4');
    origin.file('/x/media/CardOne.png', image('cardOne'), 'image/png');
    origin.file('/x/media/CardTwo.jpg', image('cardTwo'), 'image/jpeg');
    origin.file('/x/ext_tw_video/1822222222222222222/pu/vid/320x240/clip.mp4', files.mixed, 'video/mp4');
    origin.file('/x/ext_tw_video/1790000000000000001/pu/vid/320x240/quoted.mp4', files.quoted, 'video/mp4');
  },
});

describe('X videos', () => {
  test('every MP4 variant of a video downloads byte for byte', async () => {
    const data = await h.extract('https://x.com/reelaytest/status/1790000000000000001');
    expect(data).toMatchObject({ platform: 'x', extract_profile: 'x_syndication', content_type: 'video' });
    expect(
      await h.download(h.source(data, { stream_profile: 'muxed_progressive', quality: '720p' }).url),
    ).toMatchObject({ status: 200, sha256: sha256(files.high) });
    expect(
      await h.download(h.source(data, { stream_profile: 'muxed_progressive', quality: '360p' }).url),
    ).toMatchObject({ status: 200, sha256: sha256(files.mid) });
    expect(
      await h.download(h.source(data, { stream_profile: 'muxed_progressive', quality: '240p' }).url),
    ).toMatchObject({ status: 200, sha256: sha256(h.media.muxedMp4) });
  });

  test('the HLS video variant and its audio rendition are remuxed into one MP4 through the worker', async () => {
    const data = await h.extract('https://x.com/reelaytest/status/1790000000000000001');
    const video = h.source(data, { stream_profile: 'hls', url: h.origin.url(`${VIDEO}/pl/avc1/320x240/low.m3u8`) });
    const audio = h.source(data, { stream_profile: 'hls', has_audio: true, has_video: false });
    const before = h.hitsUnder(`${VIDEO}/pl/mp4a/128000/`);
    const { started, job, info, artifactTypeMatches } = await h.runJob({ video_url: video.url, audio_url: audio.url });
    expect({ started, status: job.status, progress: job.progress, artifactTypeMatches }).toEqual({
      started: { status: 202, error: undefined, locationIsStatusUrl: true },
      status: 'completed',
      progress: 100,
      artifactTypeMatches: true,
    });
    expect(job).toMatchObject({
      operation: 'remux',
      artifact: { filename: 'A test pattern with a tone, in three sizes.mp4' },
    });
    expect(streams(info)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info?.streams[0]).toMatchObject({ width: 320, height: 240 });
    expect(info?.durationSeconds).toBeCloseTo(2, 0);
    // The playlist and segments of the audio rendition were read.
    expect(h.hitsUnder(`${VIDEO}/pl/mp4a/128000/`) - before).toBeGreaterThanOrEqual(3);
  });

  test('an animated GIF downloads its silent MP4 byte for byte', async () => {
    const data = await h.extract('https://twitter.com/reelaytest/status/1800000000000000002');
    const gif = h.source(data, { stream_profile: 'video_only' });
    expect(await h.download(gif.url)).toMatchObject({
      status: 200,
      sha256: sha256(files.gif),
      contentType: 'video/mp4',
    });
  });

  test('a post without media of its own downloads the video of the post it quotes', async () => {
    const data = await h.extract('https://x.com/quoter/status/1833333333333333333');
    expect(await h.download(h.source(data, { stream_profile: 'muxed_progressive' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(files.quoted),
    });
  });
});

describe('X photos and several media', () => {
  test('every photo of a two-photo post downloads at its original size', async () => {
    const data = await h.extract('https://x.com/reelaytest/status/1811111111111111111');
    expect(data.content_type).toBe('gallery');
    expect(data.media).toHaveLength(2);
    expect(await h.download(h.source(data, { stream_profile: 'image' }, 0).url)).toMatchObject({
      status: 200,
      sha256: sha256(h.image('cardOne')),
      contentType: 'image/png',
    });
    expect(await h.download(h.source(data, { stream_profile: 'image' }, 1).url)).toMatchObject({
      status: 200,
      sha256: sha256(h.image('cardTwo')),
      contentType: 'image/jpeg',
    });
  });

  test('both media of a post with a photo and a video download, and /video/2 names the video alone', async () => {
    const data = await h.extract('https://x.com/reelaytest/status/1822222222222222222');
    expect(data.media.map((m) => m.type)).toEqual(['image', 'video']);
    expect(await h.download(h.source(data, { stream_profile: 'image' }, 0).url)).toMatchObject({
      status: 200,
      sha256: sha256(h.image('cardOne')),
    });
    expect(await h.download(h.source(data, { stream_profile: 'muxed_progressive' }, 1).url)).toMatchObject({
      status: 200,
      sha256: sha256(files.mixed),
    });
    const second = await h.extract('https://x.com/reelaytest/status/1822222222222222222/video/2');
    expect(second.media).toHaveLength(1);
    expect(await h.download(h.source(second, { stream_profile: 'muxed_progressive' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(files.mixed),
    });
  });
});
