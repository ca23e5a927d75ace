// Subtitle tracks found by each extractor (HLS renditions, DASH text sets, HTML5 <track>, yt-dlp's
// lists) and how a result assembles them: languages, de-duplication, refused URLs, the cap.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { MAX_ITEM_SUBTITLES } from '@reelay/contracts';
import { Egress } from '@reelay/egress';
import { startOrigin, type Origin } from '@reelay/testkit';
import { parseMpd } from '../src/dash.js';
import { parseHls } from '../src/hls.js';
import { createRegistry } from '../src/index.js';
import { buildResult } from '../src/result.js';
import { MAX_RESULT_SUBTITLES, normaliseLanguage, subtitleFormat } from '../src/subtitles.js';
import { mapYtdlpInfo } from '../src/ytdlp-map.js';

const BASE = new URL('https://media.example.com/show/master.m3u8');
const m3u8 = (...lines: string[]) => ['#EXTM3U', ...lines, ''].join('\n');

describe('HLS subtitle renditions', () => {
  const text = m3u8(
    '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="subs/en.m3u8"',
    '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="Français",LANGUAGE="fr",URI="subs/fr.m3u8"',
    '#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",LANGUAGE="en",INSTREAM-ID="CC1"',
    '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",SUBTITLES="subs"',
    'low.m3u8',
    '#EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",SUBTITLES="subs"',
    'high.m3u8',
  );

  test('every EXT-X-MEDIA TYPE=SUBTITLES rendition becomes one hls track of the item, listed once', () => {
    const [item] = parseHls(text, BASE, { headers: { referer: 'https://media.example.com/' } });
    expect(item.subtitles).toEqual([
      {
        language: 'en',
        label: 'English',
        url: 'https://media.example.com/show/subs/en.m3u8',
        format: 'hls',
        headers: { referer: 'https://media.example.com/' },
      },
      {
        language: 'fr',
        label: 'Français',
        url: 'https://media.example.com/show/subs/fr.m3u8',
        format: 'hls',
        headers: { referer: 'https://media.example.com/' },
      },
    ]);
    // Subtitle playlists are not media sources.
    expect(item.sources.map((s) => s.url)).toEqual([
      'https://media.example.com/show/low.m3u8',
      'https://media.example.com/show/high.m3u8',
    ]);
  });

  test('a master without subtitle renditions has no subtitles field', () => {
    const [item] = parseHls(m3u8('#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS="avc1.4d401e,mp4a.40.2"', 'v.m3u8'), BASE);
    expect(item.subtitles).toBeUndefined();
  });

  test('the result lists them on the item and gives the registry a record per track', () => {
    const { result, subtitles } = buildResult({
      url: BASE.href,
      platform: 'generic',
      extract_profile: 'hls_manifest',
      media: parseHls(text, BASE),
    });
    expect(result.media[0].subtitles).toEqual([
      { language: 'en', label: 'English', url: 'https://media.example.com/show/subs/en.m3u8', format: 'hls' },
      { language: 'fr', label: 'Français', url: 'https://media.example.com/show/subs/fr.m3u8', format: 'hls' },
    ]);
    expect(subtitles.map((r) => [r.kind, r.language, r.media_index, r.format])).toEqual([
      ['subtitle', 'en', 0, 'hls'],
      ['subtitle', 'fr', 0, 'hls'],
    ]);
  });
});

describe('DASH text adaptation sets', () => {
  const mpd = `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT10S">
  <Period>
    <AdaptationSet mimeType="video/mp4" codecs="avc1.64001f">
      <SegmentTemplate media="v_$Number$.m4s" initialization="v_init.mp4" duration="2" timescale="1"/>
      <Representation id="v1" bandwidth="1000000" width="1280" height="720"/>
    </AdaptationSet>
    <AdaptationSet contentType="text" mimeType="text/vtt" lang="en"><Label>English</Label>
      <Representation id="sub-en" bandwidth="256"><BaseURL>subs/en.vtt</BaseURL></Representation>
    </AdaptationSet>
    <AdaptationSet contentType="text" mimeType="application/ttml+xml" lang="de">
      <Representation id="sub-de" bandwidth="256"><BaseURL>subs/de.ttml</BaseURL></Representation>
    </AdaptationSet>
    <AdaptationSet contentType="text" mimeType="application/mp4" codecs="wvtt" lang="es">
      <SegmentTemplate media="es_$Number$.m4s" initialization="es_init.mp4" duration="2" timescale="1"/>
      <Representation id="sub-es" bandwidth="256"/>
    </AdaptationSet>
    <AdaptationSet mimeType="application/mp4" codecs="stpp" lang="und">
      <SegmentTemplate media="x_$Number$.m4s" initialization="x_init.mp4" duration="2" timescale="1"/>
      <Representation id="sub-x" bandwidth="256"/>
    </AdaptationSet>
    <AdaptationSet contentType="text" mimeType="text/vtt" lang="it">
      <Representation id="sub-it" bandwidth="256"/>
    </AdaptationSet>
  </Period>
</MPD>`;
  const url = new URL('https://cdn.example.com/v/manifest.mpd');

  test('sidecar files keep their format, segmented tracks are named by representation, and the video is untouched', () => {
    const [item] = parseMpd(mpd, url);
    expect(item.sources.map((s) => s.url)).toEqual(['https://cdn.example.com/v/manifest.mpd#representation=v1']);
    expect(item.subtitles).toEqual([
      { language: 'en', label: 'English', url: 'https://cdn.example.com/v/subs/en.vtt', format: 'vtt' },
      { language: 'de', url: 'https://cdn.example.com/v/subs/de.ttml', format: 'ttml' },
      {
        language: 'es',
        url: 'https://cdn.example.com/v/manifest.mpd#representation=sub-es',
        format: 'dash',
        codecs: 'wvtt',
      },
      // lang="und" names no language; a text set without a file (no BaseURL, no segments) is skipped.
      {
        language: 'und',
        url: 'https://cdn.example.com/v/manifest.mpd#representation=sub-x',
        format: 'dash',
        codecs: 'stpp',
      },
    ]);
  });

  test('a manifest of only subtitles still has no media', () => {
    const only = mpd.replace(/<AdaptationSet mimeType="video\/mp4"[\s\S]*?<\/AdaptationSet>/, '');
    expect(() => parseMpd(only, url)).toThrow(/no audio or video/);
  });
});

describe('HTML5 <track> elements', () => {
  let origin: Origin;
  const egress = new Egress({ allowlist: ['127.0.0.1'] });
  beforeAll(async () => {
    origin = await startOrigin();
    origin.body('/v.mp4', Buffer.alloc(64), 'video/mp4');
  });
  afterAll(() => origin.close());

  test('subtitles and captions tracks of a video are its subtitles, with the page as Referer; chapters and metadata are not', async () => {
    const page = `<!doctype html><html><head><title>Tracks</title></head><body>
      <video controls><source src="/v.mp4" type="video/mp4">
        <track kind="subtitles" src="/subs/en.vtt" srclang="en" label="English" default>
        <track kind="captions" src="/subs/en-sdh.vtt" srclang="en-US" label="English (SDH)">
        <track src="/subs/fr.srt" srclang="fr">
        <track kind="chapters" src="/chapters.vtt" srclang="en">
        <track kind="metadata" src="/meta.vtt">
        <track kind="subtitles" src="javascript:alert(1)" srclang="xx">
        <track kind="subtitles" src="http://10.0.0.1/private.vtt" srclang="pt">
        <track kind="subtitles" src="/subs/nolang.vtt">
      </video></body></html>`;
    origin.body('/page', page, 'text/html');
    const { result, subtitles } = await createRegistry().extract(new URL(origin.url('/page')), {
      egress,
      endpoints: {},
    });
    expect(result.media[0].subtitles).toEqual([
      { language: 'en', label: 'English', url: origin.url('/subs/en.vtt'), format: 'vtt' },
      { language: 'en-US', label: 'English (SDH)', url: origin.url('/subs/en-sdh.vtt'), format: 'vtt' },
      { language: 'fr', url: origin.url('/subs/fr.srt'), format: 'srt' },
      { language: 'und', url: origin.url('/subs/nolang.vtt'), format: 'vtt' },
    ]);
    expect(subtitles.every((r) => r.headers?.referer === origin.url('/page'))).toBe(true);
  });

  test('thousands of elements sharing one file with a track each make one item listing the first 100', async () => {
    const elements = Array.from(
      { length: 5000 },
      (_, i) => `<video src="/v.mp4"><track src="/t/${i}.vtt" srclang="en"></video>`,
    ).join('');
    origin.body('/many', `<!doctype html><title>Many</title>${elements}`, 'text/html');
    const { result, subtitles } = await createRegistry().extract(new URL(origin.url('/many')), {
      egress,
      endpoints: {},
    });
    expect(result.media).toHaveLength(1);
    expect(subtitles).toHaveLength(100);
    expect(result.media[0].subtitles?.[99].url).toBe(origin.url('/t/99.vtt'));
  });
});

describe("yt-dlp's subtitles and automatic captions", () => {
  const info = {
    extractor_key: 'Example',
    title: 'With captions',
    formats: [
      {
        format_id: '18',
        url: 'https://cdn.example.com/v.mp4',
        ext: 'mp4',
        vcodec: 'avc1',
        acodec: 'mp4a.40.2',
        protocol: 'https',
        http_headers: { 'User-Agent': 'UA' },
      },
    ],
    subtitles: {
      en: [
        { ext: 'json3', url: 'https://cdn.example.com/en.json3' },
        { ext: 'vtt', url: 'https://cdn.example.com/en.vtt', name: 'English' },
      ],
      de: [{ ext: 'srt', url: 'https://cdn.example.com/de.srt' }],
      ja: [{ ext: 'vtt', url: 'https://cdn.example.com/ja/index.m3u8', protocol: 'm3u8_native' }],
      ko: [{ ext: 'srv3', url: 'https://cdn.example.com/ko.srv3' }],
      live_chat: [{ ext: 'json', url: 'https://cdn.example.com/chat.json' }],
    },
    automatic_captions: { fr: [{ ext: 'vtt', url: 'https://cdn.example.com/fr-auto.vtt', name: 'French (auto)' }] },
  };

  test('each language becomes one track in the best deliverable format; automatic ones are marked and listed last', () => {
    const { result, subtitles } = buildResult(mapYtdlpInfo(new URL('https://example.com/watch'), info));
    expect(result.media[0].subtitles).toEqual([
      { language: 'en', label: 'English', url: 'https://cdn.example.com/en.vtt', format: 'vtt' },
      { language: 'de', url: 'https://cdn.example.com/de.srt', format: 'srt' },
      { language: 'ja', url: 'https://cdn.example.com/ja/index.m3u8', format: 'hls' },
      {
        language: 'fr',
        label: 'French (auto)',
        url: 'https://cdn.example.com/fr-auto.vtt',
        format: 'vtt',
        auto_generated: true,
      },
    ]);
    // The headers yt-dlp would send go with the tracks too.
    expect(subtitles[0].headers).toEqual({ 'User-Agent': 'UA' });
  });

  test(`an item lists at most ${MAX_ITEM_SUBTITLES} tracks, people's before machines'`, () => {
    const auto = Object.fromEntries(
      Array.from({ length: 150 }, (_, i) => [`a${i}`, [{ ext: 'vtt', url: `https://cdn.example.com/auto/${i}.vtt` }]]),
    );
    const { result } = buildResult(
      mapYtdlpInfo(new URL('https://example.com/watch'), { ...info, automatic_captions: auto }),
    );
    const listed = result.media[0].subtitles ?? [];
    expect(listed).toHaveLength(MAX_ITEM_SUBTITLES);
    expect(listed.slice(0, 3).every((s) => !s.auto_generated)).toBe(true);
  });
});

describe('result assembly', () => {
  const item = (subtitles: { language: string; url: string }[]) => ({
    url: 'https://example.com/p',
    platform: 'generic',
    extract_profile: 'html5',
    media: [
      {
        type: 'video' as const,
        sources: [{ url: 'https://example.com/v.mp4', stream_profile: 'muxed_progressive' as const }],
        subtitles: subtitles.map((s) => ({ ...s, format: 'vtt' as const })),
      },
    ],
  });

  test('a track at a source URL or listed twice is dropped, and unsafe language names are cleaned', () => {
    const { result } = buildResult(
      item([
        { language: 'en', url: 'https://example.com/v.mp4' },
        { language: ' pt_BR ', url: 'https://example.com/pt.vtt' },
        { language: 'de', url: 'https://example.com/pt.vtt' },
        { language: '<script>', url: 'https://example.com/x.vtt' },
      ]),
    );
    expect(result.media[0].subtitles).toEqual([
      { language: 'pt_BR', url: 'https://example.com/pt.vtt', format: 'vtt' },
      { language: 'script', url: 'https://example.com/x.vtt', format: 'vtt' },
    ]);
  });

  test(`a result lists at most ${MAX_RESULT_SUBTITLES} tracks in all, the first items keeping theirs`, () => {
    const media = Array.from({ length: 12 }, (_, i) => ({
      type: 'video' as const,
      sources: [{ url: `https://example.com/${i}.mp4`, stream_profile: 'muxed_progressive' as const }],
      subtitles: Array.from({ length: 100 }, (_, j) => ({
        language: `l${j}`,
        url: `https://example.com/${i}/${j}.vtt`,
        format: 'vtt' as const,
      })),
    }));
    const { result, subtitles } = buildResult({
      url: 'https://example.com/list',
      platform: 'generic',
      extract_profile: 'ytdlp',
      media,
    });
    expect(subtitles).toHaveLength(MAX_RESULT_SUBTITLES);
    expect(result.media.map((m) => m.subtitles?.length ?? 0)).toEqual([
      100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 0, 0,
    ]);
  });

  test('a track at an address the egress guard refuses is not offered', () => {
    const egress = new Egress({ allowlist: [] });
    const { result } = buildResult(
      item([
        { language: 'en', url: 'http://169.254.169.254/latest.vtt' },
        { language: 'fr', url: 'https://example.com/fr.vtt' },
      ]),
      egress,
    );
    expect(result.media[0].subtitles?.map((s) => s.language)).toEqual(['fr']);
  });

  test('formats come from the MIME type, else the extension; languages fall back to und', () => {
    expect(subtitleFormat('https://x/a.srt?x=1')).toBe('srt');
    expect(subtitleFormat('https://x/a', 'text/vtt; charset=utf-8')).toBe('vtt');
    expect(subtitleFormat('https://x/a.dfxp')).toBe('ttml');
    expect(subtitleFormat('https://x/a.txt')).toBeUndefined();
    expect(normaliseLanguage('')).toBe('und');
    expect(normaliseLanguage('---')).toBe('und');
    expect(normaliseLanguage('zh-Hans')).toBe('zh-Hans');
  });
});
