// Streamable, Dailymotion and Vimeo end to end: every kind of video is extracted through the gateway
// (each platform's API or player being the local origin) and downloaded: MP4 files byte for byte,
// HLS variants and DASH representations as worker jobs whose artifacts ffprobe reads.
import { describe, expect, test } from '@jest/globals';
import { fixture, platformHarness, streams, sha256 } from './harness.js';

const PLAYER = 'https://player.vimeo.com/';
/** Dailymotion's master: muxed variants, each naming its progressive twin in PROGRESSIVE-URI. */
const dailymotionMaster = (base: string) => `#EXTM3U
#EXT-X-VERSION:3
#EXT-X-STREAM-INF:CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,NAME="720",PROGRESSIVE-URI="${base}/cdn/H264-1280x720/video/x8abc12.mp4?sec=p720#cell=core",FRAME-RATE=25.000,BANDWIDTH=2000000
${base}/cdn/hls/x8abc12/720.m3u8?sec=h720
#EXT-X-STREAM-INF:CODECS="avc1.4d401e,mp4a.40.2",RESOLUTION=512x384,NAME="380",PROGRESSIVE-URI="${base}/cdn/H264-512x384/video/x8abc12.mp4?sec=p380#cell=core",FRAME-RATE=25.000,BANDWIDTH=900000
${base}/cdn/hls/x8abc12/380.m3u8?sec=h380
`;
let files: Record<string, string> = {};

const h = platformHarness({
  name: 'video-hosts',
  env: (origin) => ({
    PLATFORM_STREAMABLE_API: `${origin.base}/streamable`,
    PLATFORM_DAILYMOTION_WWW: origin.base,
    PLATFORM_VIMEO_PLAYER: origin.base,
  }),
  setup: ({ origin, media, variant, serveHls, serveDash }) => {
    const json = (route: string, name: string) =>
      origin.body(route, fixture(origin, name), 'application/json; charset=utf-8');
    const page = (route: string, name: string) => origin.body(route, fixture(origin, name), 'text/html; charset=UTF-8');
    files = Object.fromEntries(
      ['mobile', 'dm720', 'dm384', 'dm380', 'dm240', 'vimeo360', 'unlisted'].map((tag) => [
        tag,
        variant(media.muxedMp4, tag),
      ]),
    );
    // Streamable: the API and its two ready renditions.
    json('/streamable/videos/a1b2c3', 'streamable/video.json');
    origin.file('/video/mp4/a1b2c3.mp4', media.muxedMp4, 'video/mp4');
    origin.file('/video/mp4-mobile/a1b2c3.mp4', files.mobile, 'video/mp4');
    // Dailymotion: a video behind an HLS master (variants and their MP4 twins), and an older one with MP4 qualities.
    json('/player/metadata/video/x8abc12', 'dailymotion/video.json');
    json('/player/metadata/video/x9prog1', 'dailymotion/progressive.json');
    origin.body('/cdn/manifest/video/x8abc12.m3u8', dailymotionMaster(origin.base), 'application/vnd.apple.mpegurl');
    serveHls('/cdn/hls/x8abc12/380.m3u8');
    origin.file('/cdn/H264-1280x720/video/x8abc12.mp4', files.dm720, 'video/mp4');
    origin.file('/cdn/H264-512x384/video/x8abc12.mp4', files.dm384, 'video/mp4');
    origin.status('/cdn/manifest/video/x9prog1-forbidden.m3u8', 403, 'Forbidden');
    origin.file('/cdn/video/x9prog1-380.mp4', files.dm380, 'video/mp4');
    origin.file('/cdn/H264-320x240/video/x9prog1.mp4', files.dm240, 'video/mp4');
    // Vimeo: player pages for progressive, unlisted, HLS-only and DASH-only videos, and their media.
    page('/video/1001', 'vimeo/progressive.html');
    page('/video/1002', 'vimeo/hls.html');
    page('/video/1003', 'vimeo/dash.html');
    page('/video/1004', 'vimeo/unlisted.html');
    origin.file('/vimeo/progressive/1001-360.mp4', files.vimeo360, 'video/mp4');
    origin.file('/vimeo/progressive/1004-240.mp4', files.unlisted, 'video/mp4');
    origin.body(
      '/vimeo/fastly/1002/playlist.m3u8',
      fixture(origin, 'vimeo/hls-master.m3u8'),
      'application/vnd.apple.mpegurl',
    );
    serveHls('/vimeo/fastly/1002/sep/video/v360/playlist.m3u8');
    serveHls('/vimeo/fastly/1002/sep/audio/a128/playlist.m3u8');
    serveDash('/vimeo/1003/sep/video/master.mpd');
  },
});

describe('Streamable', () => {
  test('every ready rendition of a video downloads byte for byte', async () => {
    const data = await h.extract('https://streamable.com/a1b2c3');
    expect(data).toMatchObject({ platform: 'streamable', extract_profile: 'streamable_api', content_type: 'video' });
    expect(
      await h.download(h.source(data, { stream_profile: 'muxed_progressive', quality: '240p' }).url),
    ).toMatchObject({ status: 200, sha256: sha256(h.media.muxedMp4) });
    expect(
      await h.download(h.source(data, { stream_profile: 'muxed_progressive', quality: '180p' }).url),
    ).toMatchObject({ status: 200, sha256: sha256(files.mobile) });
  });
});

describe('Dailymotion', () => {
  test("the MP4 twins of an HLS master's variants download byte for byte", async () => {
    const data = await h.extract('https://www.dailymotion.com/video/x8abc12');
    expect(data).toMatchObject({ platform: 'dailymotion', extract_profile: 'dailymotion_metadata' });
    expect(
      await h.download(h.source(data, { stream_profile: 'muxed_progressive', quality: '720p' }).url),
    ).toMatchObject({ status: 200, sha256: sha256(files.dm720) });
    expect(
      await h.download(h.source(data, { stream_profile: 'muxed_progressive', quality: '384p' }).url),
    ).toMatchObject({ status: 200, sha256: sha256(files.dm384) });
  });

  test('an HLS variant is remuxed by the worker into an MP4 with H.264 video and AAC audio', async () => {
    const data = await h.extract('https://www.dailymotion.com/video/x8abc12');
    const { started, job, info, artifactTypeMatches } = await h.runJob({
      url: h.source(data, { stream_profile: 'hls', quality: '384p' }).url,
    });
    expect({ started, status: job.status, progress: job.progress, artifactTypeMatches }).toEqual({
      started: { status: 202, error: undefined, locationIsStatusUrl: true },
      status: 'completed',
      progress: 100,
      artifactTypeMatches: true,
    });
    expect(job).toMatchObject({
      operation: 'remux',
      artifact: { filename: 'Harbour timelapse.mp4', content_type: 'video/mp4' },
    });
    expect(streams(info)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info?.durationSeconds).toBeCloseTo(2, 0);
  });

  test('every MP4 quality of an older video downloads byte for byte', async () => {
    const data = await h.extract('https://www.dailymotion.com/video/x9prog1');
    expect(await h.download(h.source(data, { quality: '380p' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(files.dm380),
    });
    expect(await h.download(h.source(data, { quality: '240p' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(files.dm240),
    });
  });
});

describe('Vimeo', () => {
  test('a progressive file downloads byte for byte, and an unlisted video with its hash', async () => {
    const data = await h.extract('https://vimeo.com/1001');
    expect(data).toMatchObject({ platform: 'vimeo', extract_profile: 'vimeo_player_config' });
    expect(
      await h.download(h.source(data, { stream_profile: 'muxed_progressive', quality: '360p' }).url),
    ).toMatchObject({ status: 200, sha256: sha256(files.vimeo360) });
    const unlisted = await h.extract('https://vimeo.com/1004/abcdef1234');
    expect(await h.download(h.source(unlisted, { stream_profile: 'muxed_progressive' }).url)).toMatchObject({
      status: 200,
      sha256: sha256(files.unlisted),
    });
  });

  test('an HLS video variant and its audio rendition are remuxed into one MP4, fetched with the player as Referer', async () => {
    const data = await h.extract('https://player.vimeo.com/video/1002');
    const video = h.source(data, {
      stream_profile: 'hls',
      url: h.origin.url('/vimeo/fastly/1002/sep/video/v360/playlist.m3u8'),
    });
    const audio = h.source(data, {
      stream_profile: 'hls',
      url: h.origin.url('/vimeo/fastly/1002/sep/audio/a128/playlist.m3u8'),
    });
    const { started, job, info, artifactTypeMatches } = await h.runJob({ video_url: video.url, audio_url: audio.url });
    expect({ started, status: job.status, progress: job.progress, artifactTypeMatches }).toEqual({
      started: { status: 202, error: undefined, locationIsStatusUrl: true },
      status: 'completed',
      progress: 100,
      artifactTypeMatches: true,
    });
    expect(job).toMatchObject({ operation: 'remux', artifact: { filename: 'Streamed only.mp4' } });
    expect(streams(info)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info?.durationSeconds).toBeCloseTo(2, 0);
    const seen = [...h.referers].filter(([route]) => route.startsWith('/vimeo/fastly/1002/sep/'));
    expect(seen.map(([route]) => route).sort()).toEqual(
      expect.arrayContaining([
        '/vimeo/fastly/1002/sep/audio/a128/playlist.m3u8',
        '/vimeo/fastly/1002/sep/video/v360/playlist.m3u8',
      ]),
    );
    expect(new Set(seen.flatMap(([, referers]) => referers))).toEqual(new Set([PLAYER]));
  });

  test('a DASH video representation and its audio representation are remuxed into one MP4', async () => {
    const data = await h.extract('https://vimeo.com/channels/staffpicks/1003');
    const sources = data.media[0].sources.filter((s) => s.stream_profile === 'dash');
    expect(sources.map((s) => s.url.split('#')[1])).toEqual(['representation=0', 'representation=1']);
    const { started, job, info, artifactTypeMatches } = await h.runJob({
      video_url: sources[0].url,
      audio_url: sources[1].url,
    });
    expect({ started, status: job.status, progress: job.progress, artifactTypeMatches }).toEqual({
      started: { status: 202, error: undefined, locationIsStatusUrl: true },
      status: 'completed',
      progress: 100,
      artifactTypeMatches: true,
    });
    expect(job).toMatchObject({ operation: 'remux', artifact: { filename: 'Segmented DASH.mp4' } });
    expect(streams(info)).toEqual([
      ['video', 'h264'],
      ['audio', 'aac'],
    ]);
    expect(info?.streams[0]).toMatchObject({ width: 320, height: 240 });
    expect(info?.durationSeconds).toBeCloseTo(2, 0);
    expect(h.origin.hits.get('/vimeo/1003/sep/video/chunk-1-00002.m4s')).toBeGreaterThan(0);
  });
});
