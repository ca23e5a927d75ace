// Mastodon and PeerTube end to end: the local origin is the instance (status and video APIs on the
// same host as the post URL). Every kind is extracted through the gateway and downloaded: files byte
// for byte; PeerTube's HLS variant with its audio rendition, and its split HLS files, as worker jobs.
import { describe, expect, test } from '@jest/globals';
import type { StreamProfile } from '@reelay/contracts';
import { fixture, platformHarness, streams, sha256 } from './harness.js';

const UUID = '9c9de5e8-0a1e-484a-b099-e80766180a6d';
const LEGACY = '3f2c9a10-5b6d-4e7f-8a9b-0c1d2e3f4a5b';
const HLS = `/static/streaming-playlists/hls/${UUID}`;
const FILES = '/system/media_attachments/files/113/000/000/000/000';
/** PeerTube ≥ 6.2 keeps HLS audio apart: the variant takes its sound from the audio group. */
const MASTER = `#EXTM3U
#EXT-X-VERSION:6
#EXT-X-INDEPENDENT-SEGMENTS
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="Audio",DEFAULT=YES,AUTOSELECT=YES,URI="f00d0002-0.m3u8"
#EXT-X-STREAM-INF:BANDWIDTH=420000,RESOLUTION=640x360,FRAME-RATE=25,CODECS="avc1.64001e,mp4a.40.2",AUDIO="audio"
f00d0001-360.m3u8
`;
let files: Record<string, string> = {};

const h = platformHarness({
  name: 'fediverse',
  images: { spider1: 'png', spider2: 'jpg' },
  setup: ({ origin, media, image, variant, serveHls }) => {
    const json = (route: string, body: string) => origin.body(route, body, 'application/json; charset=utf-8');
    // Mastodon: statuses 1–6 are video, gifv, audio, two images, remote media and a boost of 1.
    for (const [n, name] of ['video', 'gifv', 'audio', 'images', 'remote-media', 'reblog'].entries())
      json(`/api/v1/statuses/11300000000000000${n + 1}`, fixture(origin, `mastodon/${name}.json`));
    files = {
      clip: media.muxedMp4,
      dance: media.videoOnlyMp4,
      remote: variant(media.muxedMp4, 'remote'),
      web240: variant(media.muxedMp4, 'web240'),
      legacy480: variant(media.muxedMp4, 'legacy480'),
    };
    origin.file(`${FILES}/101/original/clip.mp4`, files.clip, 'video/mp4');
    origin.file(`${FILES}/102/original/dance.mp4`, files.dance, 'video/mp4');
    origin.file(`${FILES}/103/original/tone.mp3`, media.mp3, 'audio/mpeg');
    origin.file(`${FILES}/104/original/spider1.png`, image('spider1'), 'image/png');
    origin.file(`${FILES}/105/original/spider2.jpg`, image('spider2'), 'image/jpeg');
    origin.file('/remote-storage/bob/original/clip.mp4', files.remote, 'video/mp4');
    // PeerTube: a current video (web video file, HLS playlists and their split files), an older
    // upload with webseed files, and an upload with only its audio file.
    json(`/api/v1/videos/${UUID}`, fixture(origin, 'peertube/video.json'));
    json('/api/v1/videos/mN3pQrStUvWxYz2a4b5c6d', fixture(origin, 'peertube/legacy.json'));
    const audioOnly = JSON.parse(fixture(origin, 'peertube/legacy.json')) as {
      files: { resolution: { id: number } }[];
    };
    audioOnly.files = audioOnly.files.filter((f) => f.resolution.id === 0);
    json('/api/v1/videos/aud1oon1yUp1oadAaaaaaa', JSON.stringify(audioOnly));
    origin.body(`${HLS}/master.m3u8`, MASTER, 'application/vnd.apple.mpegurl');
    serveHls(`${HLS}/f00d0001-360.m3u8`);
    serveHls(`${HLS}/f00d0002-0.m3u8`);
    origin.file(`/static/web-videos/${UUID}-240.mp4`, files.web240, 'video/mp4');
    origin.file(`${HLS}/f00d0001-360-fragmented.mp4`, media.videoOnlyMp4, 'video/mp4');
    origin.file(`${HLS}/f00d0002-0-fragmented.mp4`, media.audioOnlyM4a, 'audio/mp4');
    origin.file(`/static/webseed/${LEGACY}-480.mp4`, files.legacy480, 'video/mp4');
    origin.file(`/static/webseed/${LEGACY}-0.mp4`, media.audioOnlyM4a, 'audio/mp4');
  },
});

describe('Mastodon statuses', () => {
  test.each<[string, string, StreamProfile, string, () => string]>([
    ['a video attachment', '1', 'muxed_progressive', 'video/mp4', () => files.clip],
    ['a gifv', '2', 'muxed_progressive', 'video/mp4', () => files.dance],
    ['an audio attachment', '3', 'audio_only', 'audio/mpeg', () => h.media.mp3],
    ['media only on the remote server', '5', 'muxed_progressive', 'video/mp4', () => files.remote],
    ['a boost', '6', 'muxed_progressive', 'video/mp4', () => files.clip],
  ])('%s downloads its file byte for byte', async (_kind, n, profile, type, file) => {
    const data = await h.extract(h.origin.url(`/@alice/11300000000000000${n}`));
    expect(data).toMatchObject({ platform: 'mastodon', extract_profile: 'mastodon_api' });
    const got = await h.download(h.source(data, { stream_profile: profile }).url);
    expect(got).toMatchObject({ status: 200, sha256: sha256(file()) });
    const headers = got.headers;
    expect(headers['content-type']).toBe(type);
  });

  test('every image of a two-image status downloads as its own bytes with its own type', async () => {
    const data = await h.extract(h.origin.url('/@alice/113000000000000004'));
    expect(data).toMatchObject({ content_type: 'gallery' });
    expect(data.media).toHaveLength(2);
    for (const [i, name] of ['spider1', 'spider2'].entries()) {
      const image = h.source(data, { stream_profile: 'image' }, i);
      expect(await h.download(image.url)).toMatchObject({
        status: 200,
        sha256: sha256(h.image(name)),
        contentType: image.mime_type,
      });
    }
  });
});

describe('PeerTube videos', () => {
  const watch = () => h.origin.url(`/videos/watch/${UUID}`);

  test('the web video file downloads byte for byte', async () => {
    const data = await h.extract(watch());
    expect(data).toMatchObject({ platform: 'peertube', extract_profile: 'peertube_api', content_type: 'video' });
    expect(
      await h.download(h.source(data, { stream_profile: 'muxed_progressive', quality: '240p' }).url),
    ).toMatchObject({ status: 200, sha256: sha256(files.web240) });
  });

  test('the HLS video variant and its audio rendition are remuxed by the worker into one MP4', async () => {
    const data = await h.extract(watch());
    const video = h.source(data, { stream_profile: 'hls', has_video: true });
    const audio = h.source(data, { stream_profile: 'hls', has_video: false });
    const before = h.origin.hits.get(`${HLS}/f00d0002-0.m3u8`) ?? 0;
    const { started, job, info, artifactTypeMatches } = await h.runJob({ video_url: video.url, audio_url: audio.url });
    expect({ started, status: job.status, progress: job.progress, artifactTypeMatches }).toEqual({
      started: { status: 202, error: undefined, locationIsStatusUrl: true },
      status: 'completed',
      progress: 100,
      artifactTypeMatches: true,
    });
    expect(job).toMatchObject({ operation: 'remux', artifact: { filename: 'Test pattern with a 440 Hz tone.mp4' } });
    expect(streams(info)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info?.durationSeconds).toBeCloseTo(2, 0);
    // The audio was read from the audio rendition's playlist, not taken from the video variant.
    expect(h.origin.hits.get(`${HLS}/f00d0002-0.m3u8`) ?? 0).toBeGreaterThan(before);
  });

  test('the split HLS files download on their own and merge by the worker into one MP4', async () => {
    const data = await h.extract(watch());
    const video = h.source(data, { stream_profile: 'video_only' });
    const audio = h.source(data, { stream_profile: 'audio_only' });
    expect(await h.download(video.url)).toMatchObject({ status: 200, sha256: sha256(h.media.videoOnlyMp4) });
    expect(await h.download(audio.url)).toMatchObject({ status: 200, sha256: sha256(h.media.audioOnlyM4a) });
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

  test('an older upload downloads its webseed video and audio files byte for byte', async () => {
    const data = await h.extract(h.origin.url('/w/mN3pQrStUvWxYz2a4b5c6d'));
    expect(
      await h.download(h.source(data, { stream_profile: 'muxed_progressive', quality: '480p' }).url),
    ).toMatchObject({ status: 200, sha256: sha256(files.legacy480) });
    expect(await h.download(h.source(data, { stream_profile: 'audio_only' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(h.media.audioOnlyM4a),
    });
  });

  test('an audio-only upload downloads its audio file byte for byte', async () => {
    const data = await h.extract(h.origin.url('/w/aud1oon1yUp1oadAaaaaaa'));
    expect(data.content_type).toBe('audio');
    expect(await h.download(h.source(data, { stream_profile: 'audio_only' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(h.media.audioOnlyM4a),
    });
  });
});
