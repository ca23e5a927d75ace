// Reddit end to end: every kind of post is extracted through the gateway (reddit.com and i.redd.it
// being the local origin) and downloaded: images, GIF renderings and silent videos byte for byte,
// an older upload's split files and the HLS variant with its audio as worker jobs. The split-audio
// merge of a current upload is in ../platform-downloads.test.ts.
import { describe, expect, test } from '@jest/globals';
import { fixture, platformHarness, streams, sha256 } from './harness.js';

const POSTS: Record<string, string> = {
  vid1: 'video-dash',
  fb1: 'video-fallback',
  mute1: 'video-silent',
  gif1: 'gif-video',
  gif2: 'gif-file',
  img1: 'image',
  gal1: 'gallery',
  xp1: 'crosspost',
};
const post = (id: string) => `https://www.reddit.com/r/any/comments/${id}/`;
let files: Record<string, string> = {};

const h = platformHarness({
  name: 'reddit',
  env: (origin) => ({ PLATFORM_REDDIT_WWW: origin.base, PLATFORM_REDDIT_IMAGE: `${origin.base}/i` }),
  images: { testcard: 'jpg', pic: 'png', m1jpg: 'jpg', m3png: 'png', m2anim: 'gif', loop: 'gif' },
  setup: ({ origin, media, image, variant, serveHls }) => {
    for (const [id, name] of Object.entries(POSTS))
      origin.body(`/comments/${id}.json`, fixture(origin, `reddit/${name}.json`), 'application/json; charset=UTF-8');
    files = {
      gifVideo: variant(media.videoOnlyMp4, 'gif1'),
      silent: variant(media.videoOnlyMp4, 'mute1'),
      loopMp4: variant(media.videoOnlyMp4, 'loop'),
      animMp4: variant(media.videoOnlyMp4, 'm2anim'),
    };
    // Videos: a current upload (DASH and HLS manifests), a GIF uploaded as video, a silent video, and
    // an older upload whose audio is found under its oldest-but-one name.
    for (const dir of ['vid1abc', 'gif1abc'])
      origin.body(`/v/${dir}/DASHPlaylist.mpd`, fixture(origin, 'reddit/dash.mpd'), 'application/dash+xml');
    origin.body(
      '/v/vid1abc/HLSPlaylist.m3u8',
      fixture(origin, 'reddit/hls-master.m3u8'),
      'application/vnd.apple.mpegurl',
    );
    serveHls('/v/vid1abc/HLS_360.m3u8');
    serveHls('/v/vid1abc/HLS_AUDIO_128.m3u8');
    origin.file('/v/vid1abc/DASH_360.mp4', media.videoOnlyMp4, 'video/mp4');
    origin.file('/v/gif1abc/DASH_360.mp4', files.gifVideo, 'video/mp4');
    origin.file('/v/mute1abc/DASH_360.mp4', files.silent, 'video/mp4');
    origin.file('/v/fb1abc/DASH_360.mp4', media.videoOnlyMp4, 'video/mp4');
    origin.status('/v/fb1abc/DASH_AUDIO_128.mp4', 403, 'AccessDenied');
    origin.status('/v/fb1abc/DASH_AUDIO_64.mp4', 403, 'AccessDenied');
    origin.file('/v/fb1abc/DASH_audio.mp4', media.audioOnlyM4a, 'video/mp4');
    // Images, a gallery (a PNG, a JPEG, an animated item) and a .gif post with its MP4 rendering.
    origin.file('/i/testcard.jpg', image('testcard'), 'image/jpeg');
    origin.file('/i/pic.png', image('pic'), 'image/png');
    origin.file('/preview/m1jpg.jpg', image('m1jpg'), 'image/jpeg');
    origin.file('/preview/m3png.png', image('m3png'), 'image/png');
    origin.file('/preview/m2anim.gif', files.animMp4, 'video/mp4');
    origin.file('/i/m2anim.gif', image('m2anim'), 'image/gif');
    origin.file('/reddit/preview/loop.gif', files.loopMp4, 'video/mp4');
    origin.file('/i/loop.gif', image('loop'), 'image/gif');
  },
});

describe('Reddit images and GIFs', () => {
  test('an image post downloads its image byte for byte', async () => {
    const data = await h.extract(post('img1'));
    expect(data).toMatchObject({ platform: 'reddit', content_type: 'image' });
    expect(await h.download(h.source(data, { stream_profile: 'image' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(h.image('testcard')),
      contentType: 'image/jpeg',
    });
  });

  test('an i.redd.it link downloads the file itself', async () => {
    const data = await h.extract('https://i.redd.it/pic.png');
    expect(data).toMatchObject({ platform: 'reddit', extract_profile: 'direct_file' });
    expect(await h.download(h.source(data, { stream_profile: 'image' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(h.image('pic')),
    });
  });

  test("every item of a gallery downloads: the PNG, the JPEG, and the animated item's MP4 and GIF", async () => {
    const data = await h.extract(post('gal1'));
    expect(data.content_type).toBe('gallery');
    expect(data.media.map((m) => m.type)).toEqual(['image', 'image', 'video']);
    expect(await h.download(h.source(data, { stream_profile: 'image' }, 0).url)).toMatchObject({
      status: 200,
      sha256: sha256(h.image('m3png')),
      contentType: 'image/png',
    });
    expect(await h.download(h.source(data, { stream_profile: 'image' }, 1).url)).toMatchObject({
      status: 200,
      sha256: sha256(h.image('m1jpg')),
      contentType: 'image/jpeg',
    });
    expect(await h.download(h.source(data, { stream_profile: 'video_only' }, 2).url)).toMatchObject({
      status: 200,
      sha256: sha256(files.animMp4),
      contentType: 'video/mp4',
    });
    expect(await h.download(h.source(data, { stream_profile: 'image' }, 2).url)).toMatchObject({
      status: 200,
      sha256: sha256(h.image('m2anim')),
      contentType: 'image/gif',
    });
  });

  test('a .gif post downloads both its silent MP4 rendering and the GIF file', async () => {
    const data = await h.extract(post('gif2'));
    expect(
      await h.download(h.source(data, { stream_profile: 'video_only', mime_type: 'video/mp4' }).url),
    ).toMatchObject({ status: 200, sha256: sha256(files.loopMp4) });
    expect(await h.download(h.source(data, { stream_profile: 'image', mime_type: 'image/gif' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(h.image('loop')),
    });
  });

  test('a GIF uploaded as video downloads its silent video file byte for byte', async () => {
    const data = await h.extract(post('gif1'));
    expect(await h.download(h.source(data, { stream_profile: 'video_only', quality: '360p' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(files.gifVideo),
    });
  });
});

describe('Reddit videos', () => {
  test('a video posted without sound downloads its one silent file byte for byte', async () => {
    const data = await h.extract(post('mute1'));
    expect(await h.download(h.source(data, { stream_profile: 'video_only' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(files.silent),
    });
  });

  test('a crosspost downloads the video of the original post', async () => {
    const data = await h.extract(post('xp1'));
    expect(data.title).toBe('Crossposted: a test clip');
    expect(await h.download(h.source(data, { stream_profile: 'video_only', quality: '360p' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(h.media.videoOnlyMp4),
    });
  });

  test("an older upload's fallback video and probed audio file merge into one MP4 through the worker", async () => {
    const data = await h.extract(post('fb1'));
    const video = h.source(data, { stream_profile: 'video_only' });
    const audio = h.source(data, { stream_profile: 'audio_only' });
    expect(audio.url).toBe(h.origin.url('/v/fb1abc/DASH_audio.mp4'));
    const { started, job, info, artifactTypeMatches } = await h.runJob({ video_url: video.url, audio_url: audio.url });
    expect({ started, status: job.status, progress: job.progress, artifactTypeMatches }).toEqual({
      started: { status: 202, error: undefined, locationIsStatusUrl: true },
      status: 'completed',
      progress: 100,
      artifactTypeMatches: true,
    });
    expect(job.operation).toBe('merge');
    expect(streams(info)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info?.streams[0]).toMatchObject({ width: 640, height: 360 });
    expect(info?.durationSeconds).toBeCloseTo(2, 0);
  });

  test('an HLS variant and its audio rendition are remuxed into one MP4 through the worker', async () => {
    const data = await h.extract(post('vid1'));
    const video = h.source(data, { stream_profile: 'hls', url: h.origin.url('/v/vid1abc/HLS_360.m3u8') });
    const audio = h.source(data, { stream_profile: 'hls', url: h.origin.url('/v/vid1abc/HLS_AUDIO_128.m3u8') });
    const { started, job, info, artifactTypeMatches } = await h.runJob({ video_url: video.url, audio_url: audio.url });
    expect({ started, status: job.status, progress: job.progress, artifactTypeMatches }).toEqual({
      started: { status: 202, error: undefined, locationIsStatusUrl: true },
      status: 'completed',
      progress: 100,
      artifactTypeMatches: true,
    });
    expect(job).toMatchObject({ operation: 'remux', artifact: { filename: 'A test clip with split audio.mp4' } });
    expect(streams(info)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info?.durationSeconds).toBeCloseTo(2, 0);
    expect(h.origin.hits.get('/v/vid1abc/HLS_AUDIO_128.m3u8')).toBeGreaterThan(0);
  });
});
