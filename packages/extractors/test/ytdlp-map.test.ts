// The yt-dlp bridge's pure parts: its JSON mapped to a result (from fixtures in yt-dlp's shape), the
// command line and environment it is started with, how its errors read, and which hosts it claims.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { parseMpd } from '../src/dash.js';
import { buildResult } from '../src/result.js';
import { RunLimiter } from '../src/limiter.js';
import { classify, hostListed } from '../src/ytdlp.js';
import { dashSourceUrl, mapYtdlpInfo, platformName } from '../src/ytdlp-map.js';
import { childEnv, errorLine, ytdlpArgs } from '../src/ytdlp-process.js';

const fixture = (name: string): unknown =>
  JSON.parse(fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/ytdlp', name), 'utf8'));
const PAGE = new URL('https://www.youtube.com/watch?v=abc123xyz00');
const CDN = 'https://rr1.example-cdn.com/videoplayback';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) yt-dlp-test';

describe('mapping yt-dlp formats', () => {
  const { result, records } = buildResult(mapYtdlpInfo(PAGE, fixture('video.json')));
  const sources = result.media[0].sources;
  const byUrl = (url: string) => sources.find((s) => s.url === url);

  test("the result names the platform by extractor_key, the ytdlp profile, and the video's title, thumbnail and duration", () => {
    expect(result).toMatchObject({
      url: PAGE.href,
      platform: 'youtube',
      extract_profile: 'ytdlp',
      content_type: 'video',
      title: 'A recorded-shape yt-dlp answer',
    });
    expect(result.media).toHaveLength(1);
    expect(result.media[0]).toMatchObject({
      type: 'video',
      thumbnail: 'https://i.example-cdn.com/vi/abc123xyz00/maxresdefault.jpg',
      duration: 212,
    });
  });

  test('video and audio in one file is muxed, video alone video_only, audio alone audio_only', () => {
    expect(byUrl(`${CDN}?itag=18&sig=DDD`)).toEqual({
      url: `${CDN}?itag=18&sig=DDD`,
      quality: '360p',
      stream_profile: 'muxed_progressive',
      mime_type: 'video/mp4',
      ext: 'mp4',
      width: 640,
      height: 360,
      fps: 30,
      bitrate: 531_600,
      codecs: 'avc1.42001E,mp4a.40.2',
      size: 14_100_000,
    });
    expect(byUrl(`${CDN}?itag=137&sig=CCC`)).toEqual({
      url: `${CDN}?itag=137&sig=CCC`,
      quality: '1080p',
      stream_profile: 'video_only',
      mime_type: 'video/mp4',
      ext: 'mp4',
      width: 1920,
      height: 1080,
      fps: 30,
      bitrate: 4_402_100,
      codecs: 'avc1.640028',
      size: 116_700_000,
      has_audio: false,
      has_video: true,
    });
    expect(byUrl(`${CDN}?itag=139&sig=AAA`)).toEqual({
      url: `${CDN}?itag=139&sig=AAA`,
      quality: '49k',
      stream_profile: 'audio_only',
      mime_type: 'audio/mp4',
      ext: 'm4a',
      bitrate: 48_800,
      codecs: 'mp4a.40.5',
      size: 1_290_000,
      has_audio: true,
      has_video: false,
      language: 'en',
    });
    expect(byUrl(`${CDN}?itag=251&sig=BBB`)).toMatchObject({
      stream_profile: 'audio_only',
      mime_type: 'audio/webm',
      ext: 'webm',
      codecs: 'opus',
    });
  });

  test('an HLS format is its variant playlist, a DASH format its manifest with the representation named', () => {
    expect(byUrl('https://manifest.example-cdn.com/hls/abc/720/index.m3u8')).toMatchObject({
      stream_profile: 'hls',
      width: 1280,
      height: 720,
      bitrate: 2_800_000,
      has_video: true,
      has_audio: true,
    });
    expect(byUrl('https://dash.example-cdn.com/abc/manifest.mpd#representation=v480')).toMatchObject({
      stream_profile: 'dash',
      height: 480,
      has_audio: false,
      has_video: true,
    });
    expect(byUrl('https://dash.example-cdn.com/abc/manifest.mpd#representation=a128%20en')).toMatchObject({
      stream_profile: 'dash',
      has_audio: true,
      has_video: false,
    });
    expect(dashSourceUrl('https://x.example/m.mpd#t=1', 'dash-1')).toBe('https://x.example/m.mpd#representation=1');
  });

  test("a DASH id yt-dlp renamed because an audio and a video representation share it (float_duration.mpd) gets our extractor's URLs", () => {
    // yt-dlp 2025.04.30's -J on the corpus file, as recorded: 318597 became 318597-0 (audio) and -1 (video).
    const mpd = 'https://media.example.com/vod/show/manifest.mpd';
    const format = (format_id: string, vcodec: string, acodec: string) => ({
      format_id,
      protocol: 'http_dash_segments',
      url: mpd,
      manifest_url: mpd,
      vcodec,
      acodec,
    });
    const info = {
      title: 'x',
      formats: [
        format('318597-0', 'none', 'mp4a.40.2'),
        format('318597-1', 'avc1.42001f', 'none'),
        format('638590', 'avc1.42001f', 'none'),
        format('1022565-1', 'avc1.4d001f', 'none'),
      ],
    };
    const urls = mapYtdlpInfo(new URL(mpd), info).media[0].sources.map((s) => s.url.split('#')[1]);
    // A lone "-1" with no "-0" sibling is an id of its own, kept as it is.
    expect(urls).toEqual([
      'representation=318597&type=audio',
      'representation=318597&type=video',
      'representation=638590',
      'representation=1022565-1',
    ]);
    const ours = parseMpd(
      fs.readFileSync(
        path.join(path.dirname(fileURLToPath(import.meta.url)), 'corpus/dash/ytdlp-float-duration.mpd'),
        'utf8',
      ),
      new URL(mpd),
    )[0].sources.map((s) => s.url.split('#')[1]);
    expect(ours.slice(0, 3)).toEqual(urls.slice(0, 3));
    // Two videos renamed alike cannot be told apart by kind: they keep yt-dlp's ids.
    const twins = { title: 'x', formats: [format('7-0', 'avc1.42001f', 'none'), format('7-1', 'avc1.4d001f', 'none')] };
    expect(
      mapYtdlpInfo(new URL(mpd), twins)
        .media[0].sources.map((s) => s.url.split('#')[1])
        .sort(),
    ).toEqual(['representation=7-0', 'representation=7-1']);
  });

  test('DRM, storyboards, RTMP and non-http URLs are left out, and the rest is sorted best first', () => {
    expect(sources.map((s) => s.url)).toEqual([
      `${CDN}?itag=137&sig=CCC`,
      'https://manifest.example-cdn.com/hls/abc/720/index.m3u8',
      'https://dash.example-cdn.com/abc/manifest.mpd#representation=v480',
      `${CDN}?itag=18&sig=DDD`,
      `${CDN}?itag=251&sig=BBB`,
      'https://dash.example-cdn.com/abc/manifest.mpd#representation=a128%20en',
      `${CDN}?itag=139&sig=AAA`,
    ]);
  });

  test('only the download headers yt-dlp recorded are kept (User-Agent, Referer, Cookie, Origin), and none with a line break', () => {
    const headers = (url: string) => records.find((r) => r.url === url)?.headers;
    expect(headers(`${CDN}?itag=137&sig=CCC`)).toEqual({
      'User-Agent': UA,
      Referer: 'https://www.youtube.com/',
      Cookie: 'CONSENT=YES+1',
      Origin: 'https://www.youtube.com',
    });
    expect(headers(`${CDN}?itag=139&sig=AAA`)).toEqual({ 'User-Agent': UA });
    expect(headers(`${CDN}?itag=18&sig=DDD`)).toEqual({ 'User-Agent': UA });
    expect(headers('https://manifest.example-cdn.com/hls/abc/720/index.m3u8')).toBeUndefined();
  });

  test('a playlist is one media item per entry; failed and unresolved entries are skipped', () => {
    const { result: list } = buildResult(
      mapYtdlpInfo(new URL('http://media.example.com/page'), fixture('playlist.json')),
    );
    expect(list).toMatchObject({
      platform: 'generic',
      extract_profile: 'ytdlp',
      content_type: 'gallery',
      title: 'Two clips',
    });
    expect(list.media).toEqual([
      {
        index: 0,
        type: 'video',
        title: 'First clip',
        thumbnail: 'http://media.example.com/a.jpg',
        duration: 2.5,
        sources: [
          {
            url: 'http://media.example.com/a.mp4',
            quality: 'original',
            stream_profile: 'muxed_progressive',
            ext: 'mp4',
            mime_type: 'video/mp4',
          },
        ],
      },
      {
        index: 1,
        type: 'audio',
        title: 'Second clip',
        sources: [
          {
            url: 'http://media.example.com/b.mp3',
            quality: '128k',
            stream_profile: 'audio_only',
            ext: 'mp3',
            mime_type: 'audio/mpeg',
            bitrate: 128_000,
            codecs: 'mp3',
            has_audio: true,
            has_video: false,
          },
        ],
      },
    ]);
  });

  test('an answer with nothing deliverable maps to no media, which the result builder refuses', () => {
    const draft = mapYtdlpInfo(PAGE, {
      extractor_key: 'Generic',
      formats: [
        { format_id: 'sb', format_note: 'storyboard', url: 'https://x.example/sb.jpg', vcodec: 'none', acodec: 'none' },
      ],
    });
    expect(draft.media).toEqual([]);
    expect(() => buildResult(draft)).toThrow(expect.objectContaining({ code: 'no_media_found' }));
  });

  test.each([
    ['Youtube', 'youtube'],
    ['Generic', 'generic'],
    ['BBCCoUk', 'bbccouk'],
    ['Youtube:Tab', 'youtubetab'],
    ['VK', 'vk'],
    [undefined, 'ytdlp'],
  ])('extractor_key %s is reported as platform %s', (key, platform) => {
    expect(platformName(key)).toBe(platform);
  });
});

describe('starting yt-dlp', () => {
  test('flags keep it hermetic, the proxy is its only way out, and the URL comes after -- so it is never an option', () => {
    expect(ytdlpArgs(new URL('https://www.youtube.com/watch?v=x'), 'http://u:p@127.0.0.1:9')).toEqual([
      '-J',
      '--no-playlist',
      '--ignore-config',
      '--no-config-locations',
      '--no-cache-dir',
      '--no-warnings',
      '--socket-timeout',
      '10',
      '--proxy',
      'http://u:p@127.0.0.1:9',
      '--',
      'https://www.youtube.com/watch?v=x',
    ]);
    expect(ytdlpArgs(new URL('https://x.example/'), 'p')).not.toContain('--no-check-certificates');
  });

  test("the child gets no proxy variable in any spelling, and none of the gateway's secrets", () => {
    const env = childEnv({
      PATH: '/usr/bin',
      HOME: '/home/reelay',
      HTTP_PROXY: 'http://corp:3128',
      http_proxy: 'x',
      HTTPS_PROXY: 'x',
      https_proxy: 'x',
      ALL_PROXY: 'x',
      all_proxy: 'x',
      NO_PROXY: '*',
      no_proxy: '*',
      REDIS_URL: 'redis://:secret@redis:6379',
      SSL_CERT_FILE: '/etc/ssl/ca.pem',
    });
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/reelay', SSL_CERT_FILE: '/etc/ssl/ca.pem' });
  });

  test('its error line is shortened, without URLs, paths or the advice to report a bug', () => {
    const stderr = [
      '[generic] Extracting URL: https://site.example/watch?token=SECRET',
      "ERROR: [generic] watch: Unable to download webpage: HTTP Error 403: Forbidden (caused by <HTTPError 403: 'Forbidden'>); please report this issue on  https://github.com/yt-dlp/yt-dlp/issues?q= , filling out the appropriate issue template",
    ].join('\n');
    expect(errorLine(stderr)).toBe(
      "[generic] watch: Unable to download webpage: HTTP Error 403: Forbidden (caused by <HTTPError 403: 'Forbidden'>)",
    );
    expect(
      errorLine('ERROR: Unable to open https://cdn.example/x.mp4?sig=SECRET in /home/reelay/.cache/yt-dlp/x.json'),
    ).toBe('Unable to open <url> in <path>');
    expect(errorLine('ERROR: ' + 'x'.repeat(500))).toHaveLength(200);
  });

  test.each([
    ['[generic] Unsupported URL: <url>', 'no_media_found'],
    ['[generic] page: No video formats found!', 'no_media_found'],
    ['[youtube] abc: Video unavailable', 'content_not_found'],
    ["[youtube] abc: Private video. Sign in if you've been granted access to this video", 'content_not_found'],
    ['[generic] page: Unable to download webpage: HTTP Error 404: Not Found', 'content_not_found'],
    ['[generic] page: Unable to download webpage: The read operation timed out', 'upstream_timeout'],
    ["[youtube] abc: Sign in to confirm you're not a bot", 'upstream_error'],
  ])('"%s" answers %s', (line, code) => {
    expect(classify(line).code).toBe(code);
  });

  test("an upstream error carries yt-dlp's reason", () => {
    expect(classify("[youtube] abc: Sign in to confirm you're not a bot").message).toBe(
      "yt-dlp could not extract this URL: [youtube] abc: Sign in to confirm you're not a bot",
    );
  });
});

describe('which URLs go to yt-dlp first', () => {
  test.each([
    ['https://www.youtube.com/watch?v=x', true],
    ['https://youtube.com/shorts/x', true],
    ['https://m.youtube.com./watch?v=x', true],
    ['https://notyoutube.com/watch?v=x', false],
    ['https://youtube.com.evil.example/x', false],
    ['https://vm.tiktok.com/x', true],
    ['http://127.0.0.1:8080/page', true],
    ['http://127.0.0.10/page', false],
  ])('%s: %s', (url, listed) => {
    expect(hostListed(new URL(url).hostname, ['youtube.com', ' TikTok.com', '*.instagram.com', '127.0.0.1', ''])).toBe(
      listed,
    );
  });
});

describe('the run limiter', () => {
  test('a caller that gives up while waiting leaves the list, and its turn goes to the next', async () => {
    const limiter = new RunLimiter(1, 2, 'things');
    let release!: () => void;
    const first = limiter.run(() => new Promise<void>((resolve) => (release = resolve)));
    const gaveUp = new AbortController();
    const second = limiter.run(async () => 'second', gaveUp.signal);
    const third = limiter.run(async () => 'third');
    expect([limiter.active, limiter.queued]).toEqual([1, 2]);
    await expect(limiter.run(async () => 'fourth')).rejects.toMatchObject({
      code: 'service_unavailable',
      headers: { 'Retry-After': '5' },
    });
    gaveUp.abort();
    await expect(second).rejects.toMatchObject({ code: 'upstream_error' });
    release();
    await first;
    expect(await third).toBe('third');
    expect([limiter.active, limiter.queued]).toEqual([0, 0]);
  });
});
