import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { Egress } from '@reelay/egress';
import { startOrigin, testMedia, type Origin } from '@reelay/testkit';
import { hlsManifest, parseHls } from '../src/hls.js';
import { createRegistry, fetchDocument } from '../src/index.js';

const BASE = new URL('https://media.example.com/show/ep1/master.m3u8');

const m3u8 = (...lines: string[]) => ['#EXTM3U', ...lines, ''].join('\n');

describe('HLS master playlists', () => {
  test('every variant becomes an hls source with its resolution, bitrate, codecs and frame rate', () => {
    const text = m3u8(
      '#EXT-X-VERSION:4',
      '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",FRAME-RATE=25.000',
      'low/index.m3u8',
      '#EXT-X-STREAM-INF:BANDWIDTH=3000000,AVERAGE-BANDWIDTH=2500000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",FRAME-RATE=29.970',
      '../hd/index.m3u8?token=x',
      '#EXT-X-STREAM-INF:BANDWIDTH=9000000,RESOLUTION=3840x2160,CODECS="hvc1.2.4.L153.B0,mp4a.40.2"',
      'https://cdn.example.net/4k.m3u8',
    );
    const [item, ...rest] = parseHls(text, BASE);
    expect(rest).toEqual([]);
    expect(item.type).toBe('video');
    expect(item.duration).toBeUndefined();
    expect(item.sources).toEqual([
      {
        url: 'https://media.example.com/show/ep1/low/index.m3u8',
        stream_profile: 'hls',
        bitrate: 800000,
        width: 640,
        height: 360,
        fps: 25,
        codecs: 'avc1.4d401e,mp4a.40.2',
        has_audio: true,
        has_video: true,
      },
      {
        url: 'https://media.example.com/show/hd/index.m3u8?token=x',
        stream_profile: 'hls',
        bitrate: 2500000,
        width: 1280,
        height: 720,
        fps: 29.97,
        codecs: 'avc1.64001f,mp4a.40.2',
        has_audio: true,
        has_video: true,
      },
      {
        url: 'https://cdn.example.net/4k.m3u8',
        stream_profile: 'hls',
        bitrate: 9000000,
        width: 3840,
        height: 2160,
        fps: undefined,
        codecs: 'hvc1.2.4.L153.B0,mp4a.40.2',
        has_audio: true,
        has_video: true,
      },
    ]);
  });

  test('variants that take their audio from an EXT-X-MEDIA group are video-only, paired with the audio renditions in the same item', () => {
    const text = m3u8(
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,URI="audio/en.m3u8"',
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="Deutsch 96k",LANGUAGE="de",URI="audio/de.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=1400000,RESOLUTION=854x480,CODECS="avc1.4d401f,mp4a.40.2",AUDIO="aac"',
      'v480.m3u8',
      '#EXT-X-STREAM-INF:BANDWIDTH=140000,CODECS="mp4a.40.2",AUDIO="aac"',
      'audio/en.m3u8',
    );
    const [item] = parseHls(text, BASE);
    expect(item.type).toBe('video');
    const byUrl = Object.fromEntries(
      item.sources.map((s) => [s.url.replace('https://media.example.com/show/ep1/', ''), s]),
    );
    expect(Object.keys(byUrl).sort()).toEqual(['audio/de.m3u8', 'audio/en.m3u8', 'v480.m3u8']);
    expect(byUrl['v480.m3u8']).toMatchObject({
      stream_profile: 'hls',
      has_video: true,
      has_audio: false,
      codecs: 'avc1.4d401f',
      height: 480,
    });
    // The audio-only variant pointing at the English playlist lends it its bandwidth.
    expect(byUrl['audio/en.m3u8']).toMatchObject({
      stream_profile: 'hls',
      has_audio: true,
      has_video: false,
      language: 'en',
      codecs: 'mp4a.40.2',
      bitrate: 140000,
    });
    // Otherwise the bitrate is read from the rendition's name when it states one.
    expect(byUrl['audio/de.m3u8']).toMatchObject({ has_audio: true, has_video: false, language: 'de', bitrate: 96000 });
  });

  test('an audio rendition with nothing to estimate its bitrate from has none', () => {
    const text = m3u8(
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="main",LANGUAGE="fr",DEFAULT=YES,URI="fr.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=1000000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",AUDIO="a"',
      'v.m3u8',
    );
    const audio = parseHls(text, BASE)[0].sources.find((s) => s.has_video === false);
    expect(audio).toMatchObject({ url: 'https://media.example.com/show/ep1/fr.m3u8', language: 'fr' });
    expect(audio?.bitrate).toBeUndefined();
  });

  test('a variant whose audio group has no URI carries its own audio; alternate languages with URIs are still listed', () => {
    const text = m3u8(
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="main",LANGUAGE="en",DEFAULT=YES',
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="commentary",LANGUAGE="en",URI="commentary.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=1000000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",AUDIO="a"',
      'v.m3u8',
    );
    const [item] = parseHls(text, BASE);
    expect(item.sources.map((s) => [s.url.split('/').pop(), s.has_video, s.has_audio])).toEqual([
      ['v.m3u8', true, true],
      ['commentary.m3u8', false, true],
    ]);
  });

  test('a variant without CODECS that references an audio group stays muxed, as yt-dlp treats it', () => {
    const text = m3u8(
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="main",DEFAULT=YES,URI="a.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=1000000,RESOLUTION=640x360,AUDIO="a"',
      'v.m3u8',
    );
    const variant = parseHls(text, BASE)[0].sources[0];
    expect(variant).toMatchObject({
      url: 'https://media.example.com/show/ep1/v.m3u8',
      has_audio: true,
      has_video: true,
    });
  });

  test('alternate video renditions (EXT-X-MEDIA TYPE=VIDEO with a URI) are video sources too', () => {
    const text = m3u8(
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="main",DEFAULT=YES,URI="audio.m3u8"',
      '#EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID="cam",NAME="Wide",DEFAULT=YES',
      '#EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID="cam",NAME="Close-up",URI="closeup/index.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",AUDIO="aud",VIDEO="cam"',
      'wide/index.m3u8',
    );
    const [item] = parseHls(text, BASE);
    expect(
      item.sources.map((s) => [s.url.replace('https://media.example.com/show/ep1/', ''), s.has_video, s.has_audio]),
    ).toEqual([
      ['wide/index.m3u8', true, false],
      ['closeup/index.m3u8', true, false],
      ['audio.m3u8', false, true],
    ]);
  });

  test('CODECS naming only a video codec marks a variant as having no audio', () => {
    const text = m3u8('#EXT-X-STREAM-INF:BANDWIDTH=1000000,RESOLUTION=640x360,CODECS="avc1.4d401e"', 'v.m3u8');
    expect(parseHls(text, BASE)[0].sources[0]).toMatchObject({ has_audio: false, has_video: true });
  });

  test('a master of audio-only variants is an audio item', () => {
    const text = m3u8(
      '#EXT-X-STREAM-INF:BANDWIDTH=64000,CODECS="mp4a.40.5"',
      'aac_64.m3u8',
      '#EXT-X-STREAM-INF:BANDWIDTH=128000,CODECS="mp4a.40.2"',
      'aac_128.m3u8',
    );
    const [item] = parseHls(text, BASE);
    expect(item.type).toBe('audio');
    expect(item.sources.map((s) => [s.bitrate, s.has_audio, s.has_video])).toEqual([
      [64000, true, false],
      [128000, true, false],
    ]);
  });

  test('I-frame playlists and subtitles are left out', () => {
    const text = m3u8(
      '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="en",URI="subs/en.m3u8"',
      '#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=86000,RESOLUTION=640x360,CODECS="avc1.4d401e",URI="iframe.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=1000000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",SUBTITLES="subs"',
      'v.m3u8',
    );
    expect(parseHls(text, BASE)[0].sources.map((s) => s.url)).toEqual(['https://media.example.com/show/ep1/v.m3u8']);
  });

  test('a master listing only I-frame playlists has nothing to download', () => {
    const text = m3u8('#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=86000,URI="iframe.m3u8"');
    expect(() => parseHls(text, BASE)).toThrow(expect.objectContaining({ code: 'no_media_found' }));
  });

  test('a variant listed once per audio group is kept once', () => {
    const text = m3u8(
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="aac",DEFAULT=YES,URI="aac.m3u8"',
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="ec3",NAME="ec3",DEFAULT=YES,URI="ec3.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",AUDIO="aac"',
      'v720.m3u8',
      '#EXT-X-STREAM-INF:BANDWIDTH=2300000,RESOLUTION=1280x720,CODECS="avc1.64001f,ec-3",AUDIO="ec3"',
      'v720.m3u8',
    );
    const urls = parseHls(text, BASE)[0].sources.map((s) => s.url.split('/').pop());
    expect(urls).toEqual(['v720.m3u8', 'aac.m3u8', 'ec3.m3u8']);
    expect(parseHls(text, BASE)[0].sources.find((s) => s.url.endsWith('ec3.m3u8'))?.codecs).toBe('ec-3');
  });

  test('RESOLUTION written with a capital X is read', () => {
    const text = m3u8('#EXT-X-STREAM-INF:BANDWIDTH=1000000,RESOLUTION=1920X1080', 'v.m3u8');
    expect(parseHls(text, BASE)[0].sources[0]).toMatchObject({ width: 1920, height: 1080 });
  });

  test('a playlist with a byte order mark and CRLF line endings is read', () => {
    const text = '\uFEFF#EXTM3U\r\n#EXT-X-STREAM-INF:BANDWIDTH=1000000,RESOLUTION=640x360\r\nv.m3u8\r\n';
    expect(parseHls(text, BASE)[0].sources.map((s) => s.url)).toEqual(['https://media.example.com/show/ep1/v.m3u8']);
  });

  test('headers given with the playlist are copied onto every source', () => {
    const text = m3u8(
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="main",DEFAULT=YES,URI="a.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=1000000,CODECS="avc1.4d401e,mp4a.40.2",AUDIO="a"',
      'v.m3u8',
    );
    const sources = parseHls(text, BASE, { headers: { Referer: 'https://www.example.com/watch' } })[0].sources;
    expect(sources).toHaveLength(2);
    for (const s of sources) expect(s.headers).toEqual({ Referer: 'https://www.example.com/watch' });
  });
});

describe('HLS media playlists', () => {
  test('a VOD media playlist is one source, the playlist itself, lasting the sum of its segments', () => {
    // No EXT-X-VERSION, an EXTINF over the target duration and non-Latin titles: all tolerated by players.
    const text = m3u8(
      '#EXT-X-TARGETDURATION:10',
      '#EXTINF:10.0,第一部',
      'seg0.ts',
      '#EXTINF:10.4,',
      'seg1.ts',
      '#EXTINF:4.1,',
      'seg2.ts',
      '#EXT-X-ENDLIST',
    );
    const url = new URL('https://media.example.com/live/chunklist.m3u8?sig=1');
    const [item] = parseHls(text, url);
    expect(item.type).toBe('video');
    expect(item.duration).toBeCloseTo(24.5, 5);
    expect(item.sources).toEqual([{ url: url.href, stream_profile: 'hls', has_video: true }]);
  });

  test('a live media playlist (no EXT-X-ENDLIST) has no duration', () => {
    const text = m3u8(
      '#EXT-X-TARGETDURATION:6',
      '#EXT-X-MEDIA-SEQUENCE:1200',
      '#EXTINF:6,',
      '1200.ts',
      '#EXTINF:6,',
      '1201.ts',
    );
    const [item] = parseHls(text, BASE);
    expect(item.duration).toBeUndefined();
    expect(item.sources).toHaveLength(1);
  });

  test('a media playlist of .aac segments is an audio item', () => {
    const text = m3u8(
      '#EXT-X-TARGETDURATION:10',
      '#EXTINF:10,',
      'a0.aac',
      '#EXTINF:10,',
      'a1.aac?x=1',
      '#EXT-X-ENDLIST',
    );
    const [item] = parseHls(text, BASE);
    expect(item.type).toBe('audio');
    expect(item.sources[0]).toMatchObject({ stream_profile: 'hls', has_audio: true, has_video: false });
  });

  test('AES-128 encrypted playlists stay downloadable', () => {
    const text = m3u8(
      '#EXT-X-VERSION:3',
      '#EXT-X-TARGETDURATION:10',
      '#EXT-X-KEY:METHOD=AES-128,URI="https://keys.example.com/k1"',
      '#EXTINF:10,',
      's0.ts',
      '#EXT-X-ENDLIST',
    );
    expect(parseHls(text, BASE)[0].sources).toHaveLength(1);
    const master = m3u8(
      '#EXT-X-SESSION-KEY:METHOD=AES-128,URI="https://keys.example.com/k1"',
      '#EXT-X-STREAM-INF:BANDWIDTH=1000000',
      'v.m3u8',
    );
    expect(parseHls(master, BASE)[0].sources).toHaveLength(1);
  });
});

describe('HLS DRM', () => {
  test.each([
    [
      'a FairPlay session key',
      m3u8(
        '#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI="skd://key-1",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"',
        '#EXT-X-STREAM-INF:BANDWIDTH=1000000',
        'v.m3u8',
      ),
    ],
    [
      'a PlayReady session key',
      m3u8(
        '#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES-CTR,URI="data:text/plain;base64,AAAA",KEYFORMAT="com.microsoft.playready"',
        '#EXT-X-STREAM-INF:BANDWIDTH=1000000',
        'v.m3u8',
      ),
    ],
    [
      'a Widevine segment key',
      m3u8(
        '#EXT-X-TARGETDURATION:6',
        '#EXT-X-KEY:METHOD=SAMPLE-AES-CTR,URI="data:text/plain;base64,AAAA",KEYFORMAT="urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed",KEYFORMATVERSIONS="1"',
        '#EXT-X-MAP:URI="init.mp4"',
        '#EXTINF:6,',
        's0.m4s',
        '#EXT-X-ENDLIST',
      ),
    ],
    [
      'an skd:// segment key without KEYFORMAT',
      m3u8(
        '#EXT-X-TARGETDURATION:6',
        '#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://abc"',
        '#EXTINF:6,',
        's0.ts',
        '#EXT-X-ENDLIST',
      ),
    ],
    [
      'Adobe Access (EXT-X-FAXS-CM)',
      m3u8('#EXT-X-TARGETDURATION:6', '#EXT-X-FAXS-CM:MIIa', '#EXTINF:6,', 's0.ts', '#EXT-X-ENDLIST'),
    ],
  ])('a playlist protected by %s has nothing to download', (_name, text) => {
    let error: unknown;
    try {
      parseHls(text, BASE);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ReelayError);
    expect((error as ReelayError).code).toBe('no_media_found');
    expect((error as ReelayError).message).toMatch(/DRM/);
  });
});

describe('invalid HLS', () => {
  test('text that does not start with #EXTM3U is an upstream error', () => {
    expect(() => parseHls('<html>not found</html>', BASE)).toThrow(expect.objectContaining({ code: 'upstream_error' }));
  });

  test('a playlist with neither variants nor segments is an upstream error', () => {
    expect(() => parseHls('#EXTM3U\n#EXT-X-VERSION:3\n', BASE)).toThrow(
      expect.objectContaining({ code: 'upstream_error' }),
    );
  });

  test('a playlist hls-parser cannot read is an upstream error, not a crash', () => {
    // Master and media tags mixed: hls-parser throws a TypeError on it.
    const text = m3u8('#EXT-X-TARGETDURATION:10', '#EXT-X-STREAM-INF:BANDWIDTH=1', 'v.m3u8');
    expect(() => parseHls(text, BASE)).toThrow(expect.objectContaining({ code: 'upstream_error' }));
  });
});

describe('HLS through the registry', () => {
  let origin: Origin;
  const egress = new Egress({ allowlist: ['127.0.0.1'] });
  const registry = createRegistry();
  const extract = (p: string) => registry.extract(new URL(origin.url(p)), { egress, endpoints: {} });
  const MASTER = m3u8(
    '#EXT-X-STREAM-INF:BANDWIDTH=720000,RESOLUTION=320x240,CODECS="avc1.42c00d,mp4a.40.2"',
    'index.m3u8',
  );

  beforeAll(async () => {
    origin = await startOrigin();
    const media = await testMedia();
    for (const name of fs.readdirSync(media.hlsDir)) {
      const type = name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t';
      origin.file(`/media/hls/${name}`, path.join(media.hlsDir, name), type);
    }
    origin.body('/media/hls/master.m3u8', MASTER, 'application/x-mpegURL');
    origin.redirect('/watch/latest', '/media/hls/master.m3u8');
    origin.file('/plain/index.m3u8', path.join(media.hlsDir, 'index.m3u8'), 'text/plain; charset=utf-8');
    origin.body('/stream', MASTER, 'application/octet-stream');
    origin.body('/broken.m3u8', '#EXTM3U\n#EXT-X-VERSION:3\n', 'application/vnd.apple.mpegurl');
    origin.body('/not-hls.m3u8', 'this is not a playlist', 'application/vnd.apple.mpegurl');
    origin.body('/error-page.m3u8', '<!doctype html><title>Not found</title>', 'text/html');
  });
  afterAll(async () => {
    await origin.close();
  });

  test('the ffmpeg-made media playlist becomes one hls source labelled original, lasting its segments', async () => {
    const { result, records } = await extract('/media/hls/index.m3u8');
    expect(result).toMatchObject({
      platform: 'generic',
      extract_profile: 'hls_manifest',
      content_type: 'video',
      url: origin.url('/media/hls/index.m3u8'),
    });
    expect(result.media).toHaveLength(1);
    expect(result.media[0].duration).toBeCloseTo(2, 1);
    expect(result.media[0].sources).toEqual([
      { quality: 'original', url: origin.url('/media/hls/index.m3u8'), stream_profile: 'hls', has_video: true },
    ]);
    expect(records[0]).toMatchObject({ stream_profile: 'hls', media_type: 'video' });
  });

  test('a master playlist reached through a redirect resolves its variants against the final URL', async () => {
    const { result } = await extract('/watch/latest');
    expect(result.url).toBe(origin.url('/watch/latest'));
    expect(result.media[0].sources).toEqual([
      {
        quality: '240p',
        url: origin.url('/media/hls/index.m3u8'),
        stream_profile: 'hls',
        width: 320,
        height: 240,
        bitrate: 720000,
        codecs: 'avc1.42c00d,mp4a.40.2',
        has_audio: true,
        has_video: true,
      },
    ]);
  });

  test('a playlist served as text/plain is recognised by its .m3u8 extension', async () => {
    const { result } = await extract('/plain/index.m3u8');
    expect(result.extract_profile).toBe('hls_manifest');
    expect(result.media[0].sources[0]).toMatchObject({ stream_profile: 'hls', url: origin.url('/plain/index.m3u8') });
  });

  test('a playlist served as octet-stream without an extension is recognised by its #EXTM3U head', async () => {
    const { result } = await extract('/stream');
    expect(result.extract_profile).toBe('hls_manifest');
    expect(result.media[0].sources[0]).toMatchObject({ quality: '240p', url: origin.url('/index.m3u8') });
  });

  test('a broken playlist is an upstream error', async () => {
    await expect(extract('/broken.m3u8')).rejects.toMatchObject({ code: 'upstream_error' });
    await expect(extract('/not-hls.m3u8')).rejects.toMatchObject({ code: 'upstream_error' });
  });

  test('an HTML page at a .m3u8 URL is not taken for a playlist', async () => {
    const doc = await fetchDocument(egress, new URL(origin.url('/error-page.m3u8')));
    try {
      expect(hlsManifest.detect(doc)).toBe(false);
    } finally {
      doc.close();
    }
  });
});
