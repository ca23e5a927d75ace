// Manifests built to exhaust a reader: loops, a master inside a media playlist, a million segments,
// a timeline entry standing for 10^8 segments, a template asking for a gigabyte of zeros, entity
// bombs, more than MAX_MANIFEST_BYTES. Each reader (the extract's, the recorder's, a job's plan and
// checks) refuses it with a clear upstream_error or bounds what it builds, within a stated time, with
// the peak memory of this process in the assertion.
import { describe, expect, test } from '@jest/globals';
import { parseLivePlaylist, type LivePlaylist } from '../../src/hls-live.js';
import { readHls, refuseSelfNaming, type MasterPlaylist } from '../../src/hls-read.js';
import { ManifestLedger } from '../../src/ledger.js';
import { DEFAULT_MAX_SEGMENTS, MAX_LISTED, MAX_MANIFEST_BYTES } from '../../src/limits.js';
import { kids, readMpd, segmentCount } from '../../src/mpd.js';
import { liveDashWindow } from '../../src/mpd-live.js';
import { dashSegments, hlsSegments } from '../../src/segment-plan.js';
import { failureOf, hostileRead, valueOf, withinBounds } from './measure.js';

const PLAYLIST = new URL('http://127.0.0.1/p.m3u8');
const MANIFEST = new URL('http://127.0.0.1/m.mpd');

const master = (...variants: string[]) =>
  ['#EXTM3U', ...variants.flatMap((v) => ['#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360', v]), ''].join('\n');
const media = (n: number, line = '#EXTINF:1,\ns\n') =>
  `#EXTM3U\n#EXT-X-TARGETDURATION:1\n${line.repeat(n)}#EXT-X-ENDLIST\n`;
/** An MPD of one video adaptation set around `body` (no XML declaration: callers add one with a DOCTYPE). */
const mpd = (body: string, attrs = 'mediaPresentationDuration="PT100000H"') =>
  `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" ${attrs}><Period><AdaptationSet mimeType="video/mp4" codecs="avc1.64001f">${body}</AdaptationSet></Period></MPD>`;
const timeline = (entries: string, media = '$Number$.m4s', timescale = '1') =>
  `<Representation id="v" bandwidth="1000"><SegmentTemplate timescale="${timescale}" media="${media}"><SegmentTimeline>${entries}</SegmentTimeline></SegmentTemplate></Representation>`;
/** The segments the extract counts for the MPD's one representation (its walk: representation, set, period). */
const declared = (text: string, max = DEFAULT_MAX_SEGMENTS) => {
  const root = readMpd(text, max);
  const period = kids(root, 'Period')[0];
  const set = kids(period, 'AdaptationSet')[0];
  return segmentCount([kids(set, 'Representation')[0], set, period], 100_000 * 3600, max);
};

describe('HLS loops and nesting', () => {
  test('a master playlist that names itself as a variant is refused as upstream_error', async () => {
    const text = master('low.m3u8', 'self.m3u8');
    const self = new URL('http://127.0.0.1/self.m3u8');
    const m = await hostileRead('hls: master naming itself', () =>
      refuseSelfNaming(readHls(text) as MasterPlaylist, [self]),
    );
    expect(failureOf(m)).toMatchObject({ code: 'upstream_error', message: expect.stringMatching(/names itself/) });
    withinBounds(m);
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
    const err = failureOf(await hostileRead('hls: master inside media', () => readHls(text)));
    expect(err.code).toBe('upstream_error');
    expect(err.message).toMatch(/master playlist and a media playlist at once/);
  });
});

describe('HLS segment counts and size', () => {
  test('the most segments 5 MB can hold (380,000) are refused before hls-parser builds them', async () => {
    const text = media(380_000);
    const m = await hostileRead('hls: 3.8*10^5 segments (4.9 MB)', () => readHls(text));
    expect(failureOf(m)).toMatchObject({
      code: 'upstream_error',
      message: expect.stringMatching(/more than 20000 segments/),
    });
    withinBounds(m);
  });

  test('a million bare URI lines (2 MB) are counted as segments and refused', async () => {
    const text = media(1_000_000, 's\n');
    const m = await hostileRead('hls: 10^6 bare URI lines', () => readHls(text));
    expect(failureOf(m).message).toMatch(/more than 20000 segments/);
    withinBounds(m);
  });

  test('MAX_SEGMENTS is the bound: its number of segments passes, one more is refused', () => {
    const playlist = (n: number) => media(n, '#EXTINF:1,\ns.ts\n');
    expect(readHls(playlist(10), 10).isMasterPlaylist).toBe(false);
    expect(() => readHls(playlist(11), 10)).toThrow(/more than 10 segments/);
  });

  test('a playlist of more than MAX_MANIFEST_BYTES decoded is refused by every reader before it is read', async () => {
    const text = `#EXTM3U\n#EXT-X-TARGETDURATION:1\n#${'x'.repeat(MAX_MANIFEST_BYTES)}\n#EXTINF:1,\ns.ts\n`;
    const readers: [string, () => unknown][] = [
      ['extract', () => readHls(text)],
      ['recorder', () => parseLivePlaylist(text, PLAYLIST.href)],
      ['job', () => new ManifestLedger(DEFAULT_MAX_SEGMENTS).checkHls(text, PLAYLIST)],
    ];
    for (const [name, read] of readers) {
      const m = await hostileRead(`hls: 16 MB + 1 (${name})`, read);
      expect(failureOf(m).message).toMatch(/larger than 16 MB/);
      withinBounds(m);
    }
    expect(hlsSegments(text, PLAYLIST)).toEqual([]);
  });

  test("a live playlist of 100 000 segments keeps only the newest MAX_LISTED in the recorder's window, and says how many it dropped", async () => {
    const text = `#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:1\n${Array.from({ length: 100_000 }, (_, i) => `#EXTINF:1.0,\nseg${i + 1}.ts\n`).join('')}`;
    const m = await hostileRead('hls live: 10^5 segments', () => parseLivePlaylist(text, PLAYLIST.href));
    const parsed = valueOf(m) as LivePlaylist;
    expect(parsed.segments).toHaveLength(MAX_LISTED);
    expect(parsed.dropped).toBe(100_000 - MAX_LISTED);
    expect(parsed.segments[0].seq).toBe(1 + 100_000 - MAX_LISTED);
    expect(parsed.segments.at(-1)!.seq).toBe(100_000);
    withinBounds(m);
  });

  test("a million segments in 13 MB: the proxy's plan lists none (it would have built a million URLs)", async () => {
    const text = media(1_000_000);
    const m = await hostileRead('hls plan: 10^6 segments (13 MB)', () => hlsSegments(text, PLAYLIST));
    expect(valueOf(m)).toEqual([]);
    withinBounds(m);
  });
});

describe('DASH segment counts', () => {
  test('a SegmentTimeline entry with r="100000000" is counted, not expanded, by every reader', async () => {
    const text = mpd(timeline('<S t="0" d="1" r="100000000"/>'));
    const count = await hostileRead('dash: S r=10^8 (extract count)', () => declared(text));
    expect(valueOf(count)).toBeGreaterThan(DEFAULT_MAX_SEGMENTS);
    withinBounds(count);
    const plan = await hostileRead('dash: S r=10^8 (plan)', () => dashSegments(text, MANIFEST));
    expect(valueOf(plan)).toEqual([]);
    withinBounds(plan);
    const live = await hostileRead('dash: S r=10^8 (live window)', () =>
      liveDashWindow(text, MANIFEST, { maxListed: MAX_LISTED }),
    );
    expect(valueOf(live)).toMatchObject({ dropped: 100_000_001 - MAX_LISTED });
    withinBounds(live);
  });

  test('a SegmentTimeline entry with r="-1" over a 100,000-hour period counts to the period end', async () => {
    const text = mpd(timeline('<S t="0" d="1" r="-1"/>', '$Time$.m4s', '1000'));
    const m = await hostileRead('dash: S r=-1 over 10^5 h', () => declared(text));
    expect(valueOf(m)).toBeGreaterThan(DEFAULT_MAX_SEGMENTS);
    withinBounds(m);
  });

  test('a SegmentTemplate of 1 ms segments over 100,000 hours is counted from its numbers, and not planned', async () => {
    const text = mpd(
      `<Representation id="tiny" bandwidth="1000"><SegmentTemplate timescale="1000" duration="1" media="$Number$.m4s"/></Representation>`,
    );
    const count = await hostileRead('dash: 1 ms segments over 10^5 h', () => declared(text));
    expect(valueOf(count)).toBe(360_000_000_000);
    withinBounds(count);
    const plan = await hostileRead('dash: 1 ms segments over 10^5 h (plan)', () => dashSegments(text, MANIFEST));
    expect(valueOf(plan)).toEqual([]);
    withinBounds(plan);
  });

  test('an ordinary timeline at MAX_SEGMENTS counts as that many, one segment more passes the bound', () => {
    const text = (r: number) => mpd(timeline(`<S t="0" d="2" r="${r}"/>`));
    expect(declared(text(99), 100)).toBe(100);
    expect(declared(text(100), 100)).toBe(101);
    expect(dashSegments(text(99), MANIFEST, 100)[0]).toHaveLength(100);
    expect(dashSegments(text(100), MANIFEST, 100)).toEqual([]);
  });

  test('a timeline of 400,000 S elements (4 MB) is refused before the XML is parsed', async () => {
    const text = mpd(timeline('<S d="1"/>'.repeat(400_000)));
    const m = await hostileRead('dash: 4*10^5 S elements', () => readMpd(text, DEFAULT_MAX_SEGMENTS));
    expect(failureOf(m)).toMatchObject({
      code: 'upstream_error',
      message: expect.stringMatching(/more than 20000 segments/),
    });
    withinBounds(m);
  });

  test('a template asking for numbers padded to 100,000 digits gets at most 32, over 20,000 segments', async () => {
    const text = mpd(timeline('<S t="0" d="1" r="19999"/>', '$Number%0100000d$.m4s'));
    const m = await hostileRead('dash plan: %0100000d over 2*10^4 segments', () => dashSegments(text, MANIFEST));
    const [segments] = valueOf(m);
    expect(segments).toHaveLength(20_000);
    expect(segments[0].url.pathname).toBe(`/${'1'.padStart(32, '0')}.m4s`);
    withinBounds(m);
  });
});

describe('XML entities', () => {
  const lol = (n: number) =>
    Array.from({ length: n }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('');
  const bomb = `<?xml version="1.0"?><!DOCTYPE MPD [<!ENTITY lol0 "lol">${lol(9)}]>${mpd('<Representation id="v" bandwidth="1000"><BaseURL>&lol9;</BaseURL></Representation>')}`;

  test('a billion-laughs manifest is refused as upstream_error without expanding anything, by every reader', async () => {
    const readers: [string, () => unknown][] = [
      ['extract', () => readMpd(bomb, DEFAULT_MAX_SEGMENTS)],
      ['recorder', () => liveDashWindow(bomb, MANIFEST)],
      ['job', () => new ManifestLedger(DEFAULT_MAX_SEGMENTS).checkDash(bomb)],
    ];
    for (const [name, read] of readers) {
      const m = await hostileRead(`dash: billion laughs (${name})`, read);
      expect(failureOf(m)).toMatchObject({
        code: 'upstream_error',
        message: expect.stringMatching(/declares XML entities/),
      });
      withinBounds(m);
    }
    expect(dashSegments(bomb, MANIFEST)).toEqual([]);
  });

  test('an external entity (file:///etc/passwd) and a single internal one are refused alike', () => {
    const rep = '<Representation id="v" bandwidth="1000"><BaseURL>&x;</BaseURL></Representation>';
    for (const decl of ['<!ENTITY x SYSTEM "file:///etc/passwd">', '<!ENTITY x "v.mp4">', '<!ENTITY % p "x">']) {
      expect(() => readMpd(`<?xml version="1.0"?><!DOCTYPE MPD [${decl}]>${mpd(rep)}`, DEFAULT_MAX_SEGMENTS)).toThrow(
        /declares XML entities/,
      );
    }
  });
});
