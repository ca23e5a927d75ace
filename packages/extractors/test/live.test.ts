// Live sources (DESIGN.md "Live streams"): an HLS media playlist without EXT-X-ENDLIST that is not
// PLAYLIST-TYPE:VOD, a DASH MPD with type="dynamic" and yt-dlp's is_live mark the item and its
// sources `is_live: true`, with no duration; a finished stream of each kind does not.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Egress } from '@reelay/egress';
import { MAX_LIVE_MANIFEST_BYTES } from '@reelay/manifests';
import { startOrigin, type Origin } from '@reelay/testkit';
import { createRegistry } from '../src/index.js';
import { buildResult } from '../src/result.js';
import { parseHls } from '../src/hls.js';
import { parseMpd } from '../src/dash.js';
import { mapYtdlpInfo } from '../src/ytdlp-map.js';
import type { MediaDraft } from '../src/types.js';

const PLAYLIST = new URL('https://live.example.com/channel/index.m3u8');
const MPD = new URL('https://live.example.com/channel/manifest.mpd');

const m3u8 = (...lines: string[]) =>
  ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-TARGETDURATION:4', ...lines, ''].join('\n');
const segments = (first: number, n: number) =>
  Array.from({ length: n }, (_, i) => [`#EXTINF:4.000,`, `seg${first + i}.ts`]).flat();

/** The item as the extract answers it, and the registry records of its sources. */
function assembled(media: MediaDraft[], url: URL) {
  const { result, records } = buildResult({ url: url.href, platform: 'generic', extract_profile: 'test', media });
  return { item: result.media[0], records };
}

describe('HLS', () => {
  test('a sliding-window media playlist (no EXT-X-ENDLIST) is live: item and source is_live, no duration', () => {
    const { item, records } = assembled(
      parseHls(m3u8('#EXT-X-MEDIA-SEQUENCE:120', ...segments(120, 5)), PLAYLIST),
      PLAYLIST,
    );
    expect(item.is_live).toBe(true);
    expect(item.duration).toBeUndefined();
    expect(item.sources.map((s) => s.is_live)).toEqual([true]);
    expect(records.map((r) => r.is_live)).toEqual([true]);
  });

  test('an EVENT playlist that is still growing is live', () => {
    const { item } = assembled(parseHls(m3u8('#EXT-X-PLAYLIST-TYPE:EVENT', ...segments(0, 3)), PLAYLIST), PLAYLIST);
    expect(item).toMatchObject({ is_live: true });
    expect(item.duration).toBeUndefined();
  });

  test('an EVENT playlist that has ended (EXT-X-ENDLIST) is on demand, with its duration', () => {
    const { item, records } = assembled(
      parseHls(m3u8('#EXT-X-PLAYLIST-TYPE:EVENT', ...segments(0, 3), '#EXT-X-ENDLIST'), PLAYLIST),
      PLAYLIST,
    );
    expect(item.is_live).toBeUndefined();
    expect(item.duration).toBe(12);
    expect(item.sources[0].is_live).toBeUndefined();
    expect(records[0].is_live).toBeUndefined();
  });

  test('PLAYLIST-TYPE:VOD without EXT-X-ENDLIST is on demand (the type says it will not change)', () => {
    const { item } = assembled(parseHls(m3u8('#EXT-X-PLAYLIST-TYPE:VOD', ...segments(0, 2)), PLAYLIST), PLAYLIST);
    expect(item.is_live).toBeUndefined();
    expect(item.duration).toBe(8);
  });

  test('the parser alone does not judge a master (it fetches nothing): its item is not marked', () => {
    const master = ['#EXTM3U', '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360', 'low.m3u8', ''].join('\n');
    const { item } = assembled(parseHls(master, PLAYLIST), PLAYLIST);
    expect(item.is_live).toBeUndefined();
    expect(item.duration).toBeUndefined();
  });
});

describe('HLS master through the registry: judged from its first media playlist, one bounded fetch', () => {
  let origin: Origin;
  const egress = new Egress({ allowlist: ['127.0.0.1'] });
  const registry = createRegistry();
  const extract = (p: string) => registry.extract(new URL(origin.url(p)), { egress, endpoints: {} });
  const master = (...variants: string[]) =>
    [
      '#EXTM3U',
      ...variants.flatMap((v, i) => [`#EXT-X-STREAM-INF:BANDWIDTH=${(i + 1) * 400000},RESOLUTION=640x360`, v]),
      '',
    ].join('\n');
  const HLS = 'application/vnd.apple.mpegurl';

  beforeAll(async () => {
    origin = await startOrigin();
    for (const dir of ['live', 'vod', 'gone', 'huge'])
      origin.body(`/${dir}/master.m3u8`, master('hi.m3u8', 'lo.m3u8'), HLS);
    origin.body('/live/hi.m3u8', m3u8('#EXT-X-MEDIA-SEQUENCE:7', ...segments(7, 3)), HLS);
    origin.body('/live/lo.m3u8', m3u8('#EXT-X-MEDIA-SEQUENCE:7', ...segments(7, 3)), HLS);
    origin.body('/vod/hi.m3u8', m3u8('#EXT-X-PLAYLIST-TYPE:VOD', ...segments(0, 3), '#EXT-X-ENDLIST'), HLS);
    origin.status('/gone/hi.m3u8', 404);
    origin.body('/huge/hi.m3u8', m3u8(...segments(0, 3)) + '#' + 'x'.repeat(MAX_LIVE_MANIFEST_BYTES), HLS);
  });
  afterAll(async () => {
    await origin?.close();
  });

  test('a master whose media playlist is live: the item and every variant is_live, no duration, and only one variant was read', async () => {
    const { result } = await extract('/live/master.m3u8');
    expect(result.media[0].is_live).toBe(true);
    expect(result.media[0].duration).toBeUndefined();
    expect(result.media[0].sources).toHaveLength(2);
    expect(result.media[0].sources.every((s) => s.is_live === true)).toBe(true);
    expect(origin.hits.get('/live/hi.m3u8')).toBe(1);
    expect(origin.hits.get('/live/lo.m3u8')).toBeUndefined();
  });

  test('a master of an on-demand stream is not marked', async () => {
    const { result } = await extract('/vod/master.m3u8');
    expect(result.media[0].is_live).toBeUndefined();
    expect(result.media[0].sources.some((s) => s.is_live)).toBe(false);
  });

  test('a variant that cannot be read (404, or larger than the bound) leaves the master unjudged, not failed', async () => {
    for (const dir of ['gone', 'huge']) {
      const { result } = await extract(`/${dir}/master.m3u8`);
      expect(result.media[0].is_live).toBeUndefined();
      expect(result.media[0].sources).toHaveLength(2);
      expect(origin.hits.get(`/${dir}/hi.m3u8`)).toBe(1);
      expect(origin.hits.get(`/${dir}/lo.m3u8`)).toBeUndefined();
    }
  });
});

const mpd = (attrs: string, period = '<Period id="p0" start="PT0S">') => `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" minBufferTime="PT2S" ${attrs}>
  ${period}
    <AdaptationSet mimeType="video/mp4" codecs="avc1.64001f">
      <SegmentTemplate timescale="1000" duration="4000" startNumber="1" media="v-$Number$.m4s" initialization="v-init.mp4"/>
      <Representation id="v1" bandwidth="1500000" width="1280" height="720"/>
    </AdaptationSet>
    <AdaptationSet mimeType="audio/mp4" codecs="mp4a.40.2">
      <SegmentTemplate timescale="1000" duration="4000" startNumber="1" media="a-$Number$.m4s" initialization="a-init.mp4"/>
      <Representation id="a1" bandwidth="128000"/>
    </AdaptationSet>
  </Period>
</MPD>`;

describe('DASH', () => {
  test('type="dynamic" is live: the item and every representation is_live, no duration', () => {
    const text = mpd(
      'type="dynamic" availabilityStartTime="2026-11-27T00:00:00Z" minimumUpdatePeriod="PT4S" timeShiftBufferDepth="PT60S"',
    );
    const { item, records } = assembled(parseMpd(text, MPD), MPD);
    expect(item.is_live).toBe(true);
    expect(item.duration).toBeUndefined();
    expect(item.sources).toHaveLength(2);
    expect(item.sources.every((s) => s.is_live === true)).toBe(true);
    expect(records.every((r) => r.is_live === true)).toBe(true);
  });

  test('a dynamic MPD that names a duration still has none: it describes a window, not the length', () => {
    const text = mpd('type="dynamic" availabilityStartTime="2026-11-27T00:00:00Z" mediaPresentationDuration="PT1H"');
    const { item } = assembled(parseMpd(text, MPD), MPD);
    expect(item).toMatchObject({ is_live: true });
    expect(item.duration).toBeUndefined();
  });

  test('type="static" is on demand, with its duration', () => {
    const { item } = assembled(parseMpd(mpd('type="static" mediaPresentationDuration="PT20S"'), MPD), MPD);
    expect(item.is_live).toBeUndefined();
    expect(item.duration).toBe(20);
  });
});

describe("yt-dlp's is_live", () => {
  const info = (extra: Record<string, unknown>) => ({
    id: 'x',
    title: 'Broadcast',
    extractor_key: 'Generic',
    duration: 3600,
    formats: [
      {
        format_id: 'hls-720',
        url: 'https://live.example.com/720.m3u8',
        protocol: 'm3u8_native',
        ext: 'mp4',
        vcodec: 'avc1.64001f',
        acodec: 'mp4a.40.2',
        width: 1280,
        height: 720,
      },
    ],
    ...extra,
  });

  test('is_live: true marks the item and its sources, and drops the duration', () => {
    const { result } = buildResult(
      mapYtdlpInfo(new URL('https://live.example.com/watch'), info({ is_live: true, live_status: 'is_live' })),
    );
    expect(result.media[0].is_live).toBe(true);
    expect(result.media[0].duration).toBeUndefined();
    expect(result.media[0].sources.every((s) => s.is_live === true)).toBe(true);
  });

  test('a finished broadcast (was_live) is an ordinary video with its duration', () => {
    const { result } = buildResult(
      mapYtdlpInfo(
        new URL('https://live.example.com/watch'),
        info({ is_live: false, was_live: true, live_status: 'was_live' }),
      ),
    );
    expect(result.media[0].is_live).toBeUndefined();
    expect(result.media[0].duration).toBe(3600);
  });
});
