// Manifests built to exhaust an extract: loops, a master inside a media playlist, a million
// segments, a timeline entry standing for 10^8 segments, entity bombs. Each is refused with a clear
// upstream_error, within a stated time, with the peak memory of this process in the assertion.
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startOrigin, type Origin } from '@reelay/testkit';
import { parseHls } from '../../src/hls.js';
import { parseMpd } from '../../src/dash.js';
import { failureOf, hostileExtract } from './helpers.js';

const HLS = 'application/vnd.apple.mpegurl';
const MPD = 'application/dash+xml';
/** Peak memory an extract may add over what the process held before it, in MiB. */
const GROWTH_BOUND_MB = 64;
const TIME_BOUND_MS = 5_000;

let origin: Origin;
beforeAll(async () => {
  origin = await startOrigin();
});
afterAll(async () => {
  await origin.close();
});

const master = (...variants: string[]) =>
  ['#EXTM3U', ...variants.flatMap((v) => ['#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360', v]), ''].join('\n');
/** An MPD of one video adaptation set around `body` (no XML declaration: callers add one with a DOCTYPE). */
const mpd = (body: string, attrs = 'mediaPresentationDuration="PT100000H"') =>
  `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" ${attrs}><Period><AdaptationSet mimeType="video/mp4" codecs="avc1.64001f">${body}</AdaptationSet></Period></MPD>`;

describe('HLS loops and nesting', () => {
  test('a master playlist that names itself as a variant is refused as upstream_error', async () => {
    origin.body('/self.m3u8', master('low.m3u8', 'self.m3u8'), HLS);
    const m = await hostileExtract('hls: master naming itself', origin.url('/self.m3u8'));
    const err = failureOf(m);
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/names itself/);
    expect(m.ms).toBeLessThan(TIME_BOUND_MS);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('a master reached through a redirect that names its first URL is refused as naming itself', async () => {
    origin.body('/moved2.m3u8', master('/entry2.m3u8'), HLS);
    origin.redirect('/entry2.m3u8', '/moved2.m3u8');
    const err = failureOf(await hostileExtract('hls: master naming itself via redirect', origin.url('/entry2.m3u8')));
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/names itself/);
  });

  test('mutually recursive masters are never followed: the extract reads the first once, the second once (is it live?), and lists it as a variant', async () => {
    origin.body('/a.m3u8', master('b.m3u8'), HLS);
    origin.body('/b.m3u8', master('a.m3u8'), HLS);
    const m = await hostileExtract('hls: mutually recursive masters', origin.url('/a.m3u8'));
    expect('value' in m.outcome && m.outcome.value.result.media[0].sources.map((s) => s.url)).toEqual([
      origin.url('/b.m3u8'),
    ]);
    // b is read once to judge whether the master is live (hls-live.ts), and not followed: it names a
    // again, which is never read a second time. The job that downloads b.m3u8 refuses it as a master.
    expect(origin.hits.get('/a.m3u8')).toBe(1);
    expect(origin.hits.get('/b.m3u8')).toBe(1);
    expect(m.ms).toBeLessThan(TIME_BOUND_MS);
  });

  test('a playlist that is a master and a media playlist at once is refused as upstream_error', async () => {
    const text = [
      '#EXTM3U',
      '#EXT-X-TARGETDURATION:4',
      '#EXTINF:4,',
      'seg0.ts',
      '#EXT-X-STREAM-INF:BANDWIDTH=1000',
      'other.m3u8',
      '#EXTINF:4,',
      'seg1.ts',
      '#EXT-X-ENDLIST',
      '',
    ].join('\n');
    origin.body('/mixed.m3u8', text, HLS);
    const err = failureOf(await hostileExtract('hls: master inside media', origin.url('/mixed.m3u8')));
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/master playlist and a media playlist at once/);
  });
});

describe('segment counts', () => {
  test('a media playlist of a million segments (13 MB) is refused as upstream_error without being parsed', async () => {
    origin.body(
      '/million.m3u8',
      `#EXTM3U\n#EXT-X-TARGETDURATION:1\n${'#EXTINF:1,\ns\n'.repeat(1_000_000)}#EXT-X-ENDLIST\n`,
      HLS,
    );
    const m = await hostileExtract('hls: 10^6 segments (13 MB)', origin.url('/million.m3u8'));
    expect(failureOf(m)).toMatchObject({ code: 'upstream_error', message: 'The page is larger than 5 MB.' });
    expect(m.ms).toBeLessThan(TIME_BOUND_MS);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('the most segments 5 MB can hold (380,000) are refused before hls-parser builds them', async () => {
    origin.body(
      '/380k.m3u8',
      `#EXTM3U\n#EXT-X-TARGETDURATION:1\n${'#EXTINF:1,\ns\n'.repeat(380_000)}#EXT-X-ENDLIST\n`,
      HLS,
    );
    const m = await hostileExtract('hls: 3.8*10^5 segments (4.9 MB)', origin.url('/380k.m3u8'));
    const err = failureOf(m);
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/more than 20000 segments/);
    expect(m.ms).toBeLessThan(TIME_BOUND_MS);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('a million bare URI lines (2 MB) are counted as segments and refused', async () => {
    origin.body('/bare.m3u8', `#EXTM3U\n#EXT-X-TARGETDURATION:1\n${'s\n'.repeat(1_000_000)}#EXT-X-ENDLIST\n`, HLS);
    const err = failureOf(await hostileExtract('hls: 10^6 bare URI lines', origin.url('/bare.m3u8')));
    expect(err.message).toMatch(/more than 20000 segments/);
  });

  test('MAX_SEGMENTS is the bound: its number of segments passes, one more is refused', () => {
    const playlist = (n: number) =>
      `#EXTM3U\n#EXT-X-TARGETDURATION:1\n${'#EXTINF:1,\ns.ts\n'.repeat(n)}#EXT-X-ENDLIST\n`;
    const url = new URL('http://127.0.0.1/p.m3u8');
    expect(parseHls(playlist(10), url, { maxSegments: 10 })[0].duration).toBe(10);
    expect(() => parseHls(playlist(11), url, { maxSegments: 10 })).toThrow(/more than 10 segments/);
  });

  test('a SegmentTimeline entry with r="100000000" is refused without expanding it', async () => {
    const body = `<Representation id="v" bandwidth="1000"><SegmentTemplate timescale="1" media="$Number$.m4s"><SegmentTimeline><S t="0" d="1" r="100000000"/></SegmentTimeline></SegmentTemplate></Representation>`;
    origin.body('/timeline.mpd', mpd(body), MPD);
    const m = await hostileExtract('dash: S r=10^8', origin.url('/timeline.mpd'));
    const err = failureOf(m);
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/DASH representation "v" names more than 20000 segments/);
    expect(m.ms).toBeLessThan(TIME_BOUND_MS);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('a SegmentTimeline entry with r="-1" over a 100,000-hour period counts to the period end, and is refused', () => {
    const body = `<Representation id="v" bandwidth="1000"><SegmentTemplate timescale="1000" media="$Time$.m4s"><SegmentTimeline><S t="0" d="1" r="-1"/></SegmentTimeline></SegmentTemplate></Representation>`;
    expect(() => parseMpd(mpd(body), new URL('http://127.0.0.1/m.mpd'))).toThrow(/more than 20000 segments/);
  });

  test('a SegmentTemplate of 1 ms segments over 100,000 hours is refused as upstream_error', async () => {
    const body = `<Representation id="tiny" bandwidth="1000"><SegmentTemplate timescale="1000" duration="1" media="$Number$.m4s"/></Representation>`;
    origin.body('/tiny.mpd', mpd(body), MPD);
    const m = await hostileExtract('dash: 1 ms segments over 10^5 h', origin.url('/tiny.mpd'));
    const err = failureOf(m);
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/"tiny" names more than 20000 segments/);
    expect(m.ms).toBeLessThan(TIME_BOUND_MS);
  });

  test('an ordinary timeline at MAX_SEGMENTS passes, one segment more is refused', () => {
    const body = (r: number) =>
      `<Representation id="v" bandwidth="1000"><SegmentTemplate timescale="1" media="$Number$.m4s"><SegmentTimeline><S t="0" d="2" r="${r}"/></SegmentTimeline></SegmentTemplate></Representation>`;
    const url = new URL('http://127.0.0.1/m.mpd');
    expect(parseMpd(mpd(body(99)), url, { maxSegments: 100 })[0].sources).toHaveLength(1);
    expect(() => parseMpd(mpd(body(100)), url, { maxSegments: 100 })).toThrow(/more than 100 segments/);
  });

  test('a timeline of 400,000 S elements (4 MB) is refused before the XML is parsed', async () => {
    const body = `<Representation id="v" bandwidth="1000"><SegmentTemplate media="$Number$.m4s"><SegmentTimeline>${'<S d="1"/>'.repeat(400_000)}</SegmentTimeline></SegmentTemplate></Representation>`;
    origin.body('/many-s.mpd', mpd(body), MPD);
    const m = await hostileExtract('dash: 4*10^5 S elements', origin.url('/many-s.mpd'));
    const err = failureOf(m);
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/more than 20000 segments/);
    expect(m.ms).toBeLessThan(TIME_BOUND_MS);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });
});

describe('XML entities', () => {
  const lol = (n: number) =>
    Array.from({ length: n }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('');
  const bomb = `<?xml version="1.0"?><!DOCTYPE MPD [<!ENTITY lol0 "lol">${lol(9)}]>${mpd('<Representation id="v" bandwidth="1000"><BaseURL>&lol9;</BaseURL></Representation>')}`;

  test('a billion-laughs manifest is refused as upstream_error without expanding anything', async () => {
    origin.body('/lol.mpd', bomb, MPD);
    const m = await hostileExtract('dash: billion laughs', origin.url('/lol.mpd'));
    const err = failureOf(m);
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/declares XML entities/);
    expect(m.ms).toBeLessThan(TIME_BOUND_MS);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('a billion-laughs manifest sent gzip-compressed to a page link is refused the same way', async () => {
    origin.body('/lolz.mpd', zlib.gzipSync(bomb), MPD, { 'content-encoding': 'gzip' });
    origin.body(
      '/lol-page.html',
      `<html><head><meta property="og:video" content="/lolz.mpd"></head></html>`,
      'text/html',
    );
    const err = failureOf(await hostileExtract('dash: billion laughs via page', origin.url('/lol-page.html')));
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/declares XML entities/);
  });

  test('an external entity (file:///etc/passwd) and a single internal one are refused alike', () => {
    const url = new URL('http://127.0.0.1/m.mpd');
    const rep = '<Representation id="v" bandwidth="1000"><BaseURL>&x;</BaseURL></Representation>';
    for (const decl of ['<!ENTITY x SYSTEM "file:///etc/passwd">', '<!ENTITY x "v.mp4">', '<!ENTITY % p "x">']) {
      expect(() => parseMpd(`<?xml version="1.0"?><!DOCTYPE MPD [${decl}]>${mpd(rep)}`, url)).toThrow(
        /declares XML entities/,
      );
    }
  });

  test('the five predefined entities are still decoded in a document with a DOCTYPE', () => {
    const rep =
      '<Representation id="v" bandwidth="1000"><BaseURL>v.mp4?a=1&amp;b=2&lt;&gt;&quot;&apos;</BaseURL></Representation>';
    const [item] = parseMpd(`<?xml version="1.0"?><!DOCTYPE MPD>${mpd(rep, '')}`, new URL('http://127.0.0.1/m.mpd'));
    expect(item.sources[0].url).toBe(new URL('v.mp4?a=1&b=2<>"\'', 'http://127.0.0.1/m.mpd').href);
  });
});
