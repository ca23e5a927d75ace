// Manifests built to exhaust an extract, as the extract meets them: through the guarded fetch (a
// redirect, a 13 MB body, a gzip of an entity bomb behind a page link) and its walk (a master's
// variants, a representation's segments). Each is refused with a clear upstream_error, within a
// stated time, with the peak memory of this process in the assertion. The readers' own hostile
// inputs (loops, counts, entity bombs, sizes) are @reelay/manifests' (its test/hostile).
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startOrigin, type Origin } from '@reelay/testkit';
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
});

describe('XML entities', () => {
  const lol = (n: number) =>
    Array.from({ length: n }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('');
  const bomb = `<?xml version="1.0"?><!DOCTYPE MPD [<!ENTITY lol0 "lol">${lol(9)}]>${mpd('<Representation id="v" bandwidth="1000"><BaseURL>&lol9;</BaseURL></Representation>')}`;

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
});
