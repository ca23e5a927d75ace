// A live DASH manifest as the recorder reads it (mpd-live.ts): the window of one representation's
// segments, with positions that hold from one refresh to the next, built under the MPD reader's
// bounds. Hostile timelines (10^8 repeats, an open-ended repeat) cost only the newest segments.
import { describe, expect, test } from '@jest/globals';
import { liveDashWindow, readLiveMpd } from '../src/mpd-live.js';

const URL_ = new URL('http://127.0.0.1:9/live/manifest.mpd');
const AST = '2026-11-27T00:00:00Z';
const at = (seconds: number) => Date.parse(AST) + seconds * 1000;

const mpd = (attrs: string, video: string, audio = '') => `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" ${attrs}>
  <Period id="0" start="PT0S">
    <AdaptationSet contentType="video" mimeType="video/mp4">
      <Representation id="v" codecs="avc1.42c00a" bandwidth="90000">${video}</Representation>
    </AdaptationSet>
    <AdaptationSet contentType="audio" mimeType="audio/mp4">
      <Representation id="a" codecs="mp4a.40.2" bandwidth="32000">${audio}</Representation>
    </AdaptationSet>
  </Period>
</MPD>`;
const DYNAMIC = `type="dynamic" availabilityStartTime="${AST}" minimumUpdatePeriod="PT1S"`;
const timeline = (media: string, entries: string, startNumber = 1) =>
  `<SegmentTemplate timescale="1000" startNumber="${startNumber}" initialization="init-$RepresentationID$.m4s" media="${media}"><SegmentTimeline>${entries}</SegmentTimeline></SegmentTemplate>`;

describe('a SegmentTemplate with a SegmentTimeline', () => {
  test('$Number$ names: numbers from startNumber, positions in ms of presentation time, the init segment, what the representation declares', () => {
    const w = liveDashWindow(
      mpd(
        DYNAMIC,
        timeline('chunk-$RepresentationID$-$Number%05d$.m4s', '<S t="4000" d="1000" r="2"/><S d="500"/>', 5),
      ),
      URL_,
      { representation: 'v' },
    );
    expect(w.dynamic).toBe(true);
    expect(w.unit).toBe('ms');
    expect(w.segments.map((s) => [s.seq, s.next, s.duration, s.url.split('/').pop()])).toEqual([
      [4000, 5000, 1, 'chunk-v-00005.m4s'],
      [5000, 6000, 1, 'chunk-v-00006.m4s'],
      [6000, 7000, 1, 'chunk-v-00007.m4s'],
      [7000, 7500, 0.5, 'chunk-v-00008.m4s'],
    ]);
    expect(w.init).toBe('http://127.0.0.1:9/live/init-v.m4s');
    expect(w.codecs).toBe('video/mp4;avc1.42c00a');
    expect(w.maxSegmentDuration).toBe(1);
    expect(w.minimumUpdatePeriod).toBe(1);
    expect([w.dropped, w.encrypted]).toEqual([0, false]);
  });

  test('the same segment keeps its position and its name when the window slides', () => {
    const before = liveDashWindow(mpd(DYNAMIC, timeline('$Number$.m4s', '<S t="0" d="1000" r="3"/>', 1)), URL_, {
      representation: 'v',
    });
    const after = liveDashWindow(mpd(DYNAMIC, timeline('$Number$.m4s', '<S t="2000" d="1000" r="3"/>', 3)), URL_, {
      representation: 'v',
    });
    expect(after.segments[0]).toEqual(before.segments[2]);
  });

  test('$Time$ names, and the audio representation by id or by type', () => {
    const text = mpd(DYNAMIC, '', timeline('a-$Time$.m4s', '<S t="0" d="1024"/><S d="1000" r="1"/>'));
    for (const options of [{ representation: 'a' }, { type: 'audio' as const }]) {
      const w = liveDashWindow(text, URL_, options);
      expect(w.representation).toBe('a');
      expect(w.segments.map((s) => s.url.split('/').pop())).toEqual(['a-0.m4s', 'a-1024.m4s', 'a-2024.m4s']);
      expect(w.codecs).toBe('audio/mp4;mp4a.40.2');
    }
  });

  test('each segment says where it starts on the presentation timeline the representations share (period start and presentationTimeOffset applied), from one read of the MPD', () => {
    const video =
      '<SegmentTemplate timescale="90000" presentationTimeOffset="900000" media="v-$Time$.m4s"><SegmentTimeline><S t="900000" d="180000" r="1"/></SegmentTimeline></SegmentTemplate>';
    const audio =
      '<SegmentTemplate timescale="48000" media="a-$Time$.m4s"><SegmentTimeline><S t="0" d="96256"/><S d="95744"/></SegmentTimeline></SegmentTemplate>';
    const read = readLiveMpd(mpd(DYNAMIC, video, audio).replace('start="PT0S"', 'start="PT100S"'));
    expect(liveDashWindow(read, URL_, { representation: 'v' }).segments.map((s) => s.start)).toEqual([100, 102]);
    expect(
      liveDashWindow(read, URL_, { representation: 'a' }).segments.map((s) => Math.round(s.start * 1000) / 1000),
    ).toEqual([100, 102.005]);
  });

  test('r="-1" repeats up to the live edge: the complete segments before now', () => {
    const text = mpd(DYNAMIC, timeline('$Number$.m4s', '<S t="0" d="2000" r="-1"/>'));
    expect(liveDashWindow(text, URL_, { now: at(9) }).segments.map((s) => s.url.split('/').pop())).toEqual([
      '1.m4s',
      '2.m4s',
      '3.m4s',
      '4.m4s',
    ]);
    expect(liveDashWindow(text, URL_, { now: at(10) }).segments).toHaveLength(5);
  });

  test('10^8 repeats in one entry: only the newest maxListed are built, the rest counted as dropped, in bounded memory', () => {
    const text = mpd(DYNAMIC, timeline('$Number$.m4s', '<S t="0" d="1000" r="99999999"/>'));
    const heap = process.memoryUsage().heapUsed;
    const w = liveDashWindow(text, URL_, { maxListed: 2_000 });
    expect(w.segments).toHaveLength(2_000);
    expect(w.dropped).toBe(100_000_000 - 2_000);
    expect(w.droppedSeconds).toBe(100_000_000 - 2_000);
    expect(w.segments.at(-1)!.url).toBe('http://127.0.0.1:9/live/100000000.m4s');
    expect(process.memoryUsage().heapUsed - heap).toBeLessThan(32 * 1024 * 1024);
  });

  test('more S entries than MAX_SEGMENTS is refused before parsing, as at extract time', () => {
    const entries = Array.from({ length: 30 }, (_, i) => `<S t="${i * 1000}" d="1000"/>`).join('');
    expect(() => liveDashWindow(mpd(DYNAMIC, timeline('$Number$.m4s', entries)), URL_, { maxSegments: 20 })).toThrow(
      expect.objectContaining({ code: 'upstream_error' }),
    );
  });
});

describe('a SegmentTemplate with a fixed duration (segments from the clock)', () => {
  const fixed =
    '<SegmentTemplate timescale="1000000" duration="1000000" startNumber="1" initialization="init-$RepresentationID$.m4s" media="c-$RepresentationID$-$Number%05d$.m4s"/>';

  test('the complete segments before now, timeShiftBufferDepth of them, numbered from startNumber', () => {
    const w = liveDashWindow(mpd(`${DYNAMIC} timeShiftBufferDepth="PT3S"`, fixed), URL_, {
      representation: 'v',
      now: at(10.5),
    });
    expect(w.unit).toBe('number');
    expect(w.segments.map((s) => s.start)).toEqual([7, 8, 9]);
    expect(w.segments.map((s) => [s.seq, s.next, s.url.split('/').pop()])).toEqual([
      [8, 9, 'c-v-00008.m4s'],
      [9, 10, 'c-v-00009.m4s'],
      [10, 11, 'c-v-00010.m4s'],
    ]);
  });

  test('the MPD turned static at the end (ffmpeg drops availabilityStartTime): the whole presentation, not dynamic', () => {
    const w = liveDashWindow(mpd('type="static" mediaPresentationDuration="PT3.0S"', fixed), URL_, {
      representation: 'v',
    });
    expect(w.dynamic).toBe(false);
    expect(w.segments.map((s) => s.seq)).toEqual([1, 2, 3]);
  });
});

describe('what cannot be recorded is a clear upstream_error', () => {
  test('a representation the MPD no longer lists, a SegmentList, no clock for a fixed duration', () => {
    const text = mpd(DYNAMIC, timeline('$Number$.m4s', '<S t="0" d="1000"/>'));
    expect(() => liveDashWindow(text, URL_, { representation: 'gone' })).toThrow(
      /no longer lists representation "gone"/,
    );
    expect(() =>
      liveDashWindow(mpd(DYNAMIC, '<SegmentList><SegmentURL media="a.m4s"/></SegmentList>'), URL_, {
        representation: 'v',
      }),
    ).toThrow(/SegmentList/);
    expect(() =>
      liveDashWindow(mpd('type="dynamic"', '<SegmentTemplate duration="1" media="$Number$.m4s"/>'), URL_, {
        representation: 'v',
      }),
    ).toThrow(/availabilityStartTime/);
  });

  test('ContentProtection marks the window encrypted', () => {
    const text = mpd(
      DYNAMIC,
      `<ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="cenc"/>${timeline('$Number$.m4s', '<S t="0" d="1000"/>')}`,
    );
    expect(liveDashWindow(text, URL_, { representation: 'v' }).encrypted).toBe(true);
  });
});
