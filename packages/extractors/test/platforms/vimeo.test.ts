import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import path from 'node:path';
import { Egress } from '@reelay/egress';
import * as shared from './public-api-fixtures.js';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { createRegistry } from '../../src/index.js';
import { findPlayerConfig, vimeo, vimeoRoute } from '../../src/platforms/vimeo.js';

const registry = createRegistry();
const egress = new Egress({ allowlist: ['127.0.0.1'] });
let origin: Origin;
let media: TestMedia;

const fixture = (name: string): string => shared.fixture(origin, `vimeo/${name}`);

function page(route: string, file: string, status = 200, type = 'text/html; charset=UTF-8'): void {
  origin.route(route, (_req, res) => void res.writeHead(status, { 'content-type': type }).end(fixture(file)));
}

const extract = (url: string) => registry.extract(new URL(url), { egress, endpoints: { vimeo_player: origin.base } });

const failure = (url: string) => shared.failure(extract(url));

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  page('/video/1001', 'progressive.html');
  page('/video/1002', 'hls.html');
  page('/video/1003', 'dash.html');
  // Unlisted: the player answers only with the hash.
  page('/video/1004?h=abcdef1234', 'unlisted.html');
  page('/video/1005', 'pointer.html');
  page('/video/2002', 'private.html', 403);
  page('/video/2003', 'password.html');
  origin.status('/video/2004', 429, 'Too Many Requests');
  page('/video/2005', 'blocked.html', 403);
  page('/video/2006', 'no-config.html');
  page('/video/2007', 'error.json', 403, 'application/json');
  origin.body('/vimeo/fastly/1002/playlist.m3u8', fixture('hls-master.m3u8'), 'application/vnd.apple.mpegurl');
  origin.file('/vimeo/1003/sep/video/master.mpd', path.join(media.dashDir, 'manifest.mpd'), 'application/dash+xml');
  origin.body('/vimeo/1005/sep/video/manifest', JSON.stringify({ url: 'master.mpd?from=pointer' }), 'application/json');
  origin.file('/vimeo/1005/sep/video/master.mpd', path.join(media.dashDir, 'manifest.mpd'), 'application/dash+xml');
});

afterAll(async () => {
  await origin.close();
});

describe('Vimeo URLs', () => {
  test.each([
    ['https://vimeo.com/1001', { id: '1001' }],
    ['https://www.vimeo.com/1001/', { id: '1001' }],
    ['https://vimeo.com/1004/abcdef1234', { id: '1004', hash: 'abcdef1234' }],
    ['https://vimeo.com/1004?h=abcdef1234', { id: '1004', hash: 'abcdef1234' }],
    ['https://player.vimeo.com/video/1001', { id: '1001' }],
    ['https://player.vimeo.com/video/1004?h=abcdef1234&badge=0', { id: '1004', hash: 'abcdef1234' }],
    ['https://vimeo.com/channels/staffpicks/1001', { id: '1001' }],
    ['https://vimeo.com/groups/shortfilms/videos/1001', { id: '1001' }],
    ['https://vimeo.com/album/12345/video/1001', { id: '1001' }],
    ['https://vimeo.com/showcase/12345/video/1001', { id: '1001' }],
    ['https://vimeo.com/reelaytest/review/1004/abcdef1234', { id: '1004', hash: 'abcdef1234' }],
    // Share parameters and time fragments.
    ['https://vimeo.com/1001?share=copy#t=30s', { id: '1001' }],
    ['https://vimeo.com/1004/abcdef1234?share=copy', { id: '1004', hash: 'abcdef1234' }],
    ['https://player.vimeo.com/video/1001/?autoplay=1#t=20', { id: '1001' }],
    ['https://vimeo.com/channels/staffpicks/1001?h=abcdef1234', { id: '1001', hash: 'abcdef1234' }],
    // Not ours: profiles, channels, OnDemand (paid), look-alike hosts, the player's script.
    ['https://vimeo.com/reelaytest', null],
    ['https://vimeo.com/channels/staffpicks', null],
    ['https://vimeo.com/ondemand/somefilm', null],
    ['https://notvimeo.com/1001', null],
    ['https://vimeo.com.example/1001', null],
    ['https://player.vimeo.com/api/player.js', null],
  ])('%s is %j', (url, route) => {
    expect(vimeoRoute(new URL(url)) ?? null).toEqual(route === null ? null : { hash: undefined, ...route });
    expect(vimeo.matches(new URL(url))).toBe(route !== null);
  });
});

describe('reading the player config', () => {
  test('the object after playerConfig = is found by balanced braces, strings with braces and escapes included', () => {
    const html = `<script>window.playerConfig = {"video":{"title":"a } b { \\"c\\" \\\\"},"request":{}}; if (x) { y({}); }</script>`;
    expect(findPlayerConfig(html)).toEqual({ video: { title: 'a } b { "c" \\' }, request: {} });
  });

  test('a script object of the same name that is not JSON is skipped for the next one', () => {
    expect(findPlayerConfig(`var config = { lazy: true }; var config = {"video":{"title":"t"}};`)).toEqual({
      video: { title: 't' },
    });
  });

  test('a page without a config, or a truncated one, has none', () => {
    expect(findPlayerConfig('<html><script>var playerConfig = {"video":{"title":"cut</script>')).toBeUndefined();
    expect(findPlayerConfig('<html></html>')).toBeUndefined();
  });
});

describe('Vimeo videos', () => {
  test('progressive files are muxed sources with the player as Referer, and the video has its title, duration and largest thumbnail', async () => {
    const { result, records } = await extract('https://vimeo.com/1001');
    expect(result).toMatchObject({
      platform: 'vimeo',
      extract_profile: 'vimeo_player_config',
      content_type: 'video',
      title: 'Braces } and { "quotes" in a title',
    });
    expect(result.media[0]).toMatchObject({ duration: 2, thumbnail: `${origin.base}/vimeo/thumbs/1001-1280.jpg` });
    expect(result.media[0].sources).toEqual([
      {
        url: `${origin.base}/vimeo/progressive/1001-360.mp4?s=aa`,
        quality: '360p',
        stream_profile: 'muxed_progressive',
        mime_type: 'video/mp4',
        ext: 'mp4',
        width: 640,
        height: 360,
        fps: 25,
        has_audio: true,
        has_video: true,
      },
      {
        url: `${origin.base}/vimeo/progressive/1001-240.mp4?s=bb`,
        quality: '240p',
        stream_profile: 'muxed_progressive',
        mime_type: 'video/mp4',
        ext: 'mp4',
        width: 320,
        height: 240,
        fps: 25,
        has_audio: true,
        has_video: true,
      },
    ]);
    expect(records.map((r) => r.headers)).toEqual([
      { referer: 'https://player.vimeo.com/' },
      { referer: 'https://player.vimeo.com/' },
    ]);
  });

  test("HLS comes from the default CDN's master, split into video variants and audio renditions", async () => {
    const { result, records } = await extract('https://player.vimeo.com/video/1002');
    expect(result.title).toBe('Streamed only');
    expect(
      result.media[0].sources.map((s) => [s.url.replace(origin.base, ''), s.stream_profile, s.has_video, s.has_audio]),
    ).toEqual([
      ['/vimeo/fastly/1002/sep/video/v360/playlist.m3u8', 'hls', true, false],
      ['/vimeo/fastly/1002/sep/video/v240/playlist.m3u8', 'hls', true, false],
      ['/vimeo/fastly/1002/sep/audio/a128/playlist.m3u8', 'hls', false, true],
      ['/vimeo/fastly/1002/sep/audio/a64/playlist.m3u8', 'hls', false, true],
    ]);
    expect(origin.hits.get('/vimeo/akfire/1002/playlist.m3u8')).toBeUndefined();
    expect(records.every((r) => r.headers?.referer === 'https://player.vimeo.com/')).toBe(true);
  });

  test('DASH reads master.mpd in place of master.json, from an older `config =` page', async () => {
    const { result } = await extract('https://vimeo.com/channels/staffpicks/1003');
    expect(result.title).toBe('Segmented \\ DASH');
    const sources = result.media[0].sources;
    expect(sources.map((s) => s.stream_profile)).toEqual(['dash', 'dash']);
    expect(sources.map((s) => s.url)).toEqual([
      `${origin.base}/vimeo/1003/sep/video/master.mpd?base64_init=1&query_string_ranges=1#representation=0`,
      `${origin.base}/vimeo/1003/sep/video/master.mpd?base64_init=1&query_string_ranges=1#representation=1`,
    ]);
  });

  test('a DASH address with json=1 is followed to the manifest it names', async () => {
    const { result } = await extract('https://vimeo.com/1005');
    expect(result.media[0].sources[0].url).toBe(
      `${origin.base}/vimeo/1005/sep/video/master.mpd?from=pointer#representation=0`,
    );
  });

  test('an unlisted video is asked for with its hash', async () => {
    const { result } = await extract('https://vimeo.com/1004/abcdef1234');
    expect(result.title).toBe('Unlisted clip');
    expect(result.media[0].sources[0].url).toBe(`${origin.base}/vimeo/progressive/1004-240.mp4`);
    expect(origin.hits.get('/video/1004?h=abcdef1234')).toBe(1);
    expect((await failure('https://vimeo.com/1004')).code).toBe('content_not_found');
  });
});

describe('Vimeo errors', () => {
  test.each([
    ['an unknown video', '2001', 'content_not_found', /does not exist/],
    ['a private video', '2002', 'content_not_found', /private/],
    ['a password-protected video', '2003', 'content_not_found', /password/],
    ['rate limiting', '2004', 'upstream_rate_limited', /rate limiting.*429/],
    ['a 403 block page', '2005', 'upstream_error', /refused this server/],
    ['a page without a player config', '2006', 'upstream_error', /no player config/],
    ['an error JSON', '2007', 'content_not_found', /private/],
  ])('%s (video %s) is %s', async (_name, id, code, message) => {
    const err = await failure(`https://vimeo.com/${id}`);
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
  });
});
