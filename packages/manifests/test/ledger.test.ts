// The job-side manifest checks as pure functions: what they refuse, and the requests they grant.
import { describe, expect, test } from '@jest/globals';
import { declaredDashSegments, ManifestLedger } from '../src/ledger.js';

const base = new URL('http://origin.test/v/master.m3u8');
const media = (n: number) =>
  [
    '#EXTM3U',
    '#EXT-X-TARGETDURATION:2',
    ...Array.from({ length: n }, (_, i) => `#EXTINF:2,\nseg${i}.ts`),
    '#EXT-X-ENDLIST',
  ].join('\n');

describe('HLS playlists in a job', () => {
  test('a master and its media playlist pass, and grant a request per variant and two per segment', () => {
    const ledger = new ManifestLedger(100);
    expect(
      ledger.checkHls(
        '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nlow.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=2\nhigh.m3u8\n',
        base,
      ),
    ).toBe(2);
    expect(ledger.checkHls(media(10), new URL('low.m3u8', base))).toBe(20);
    // A refresh naming the same segments grants nothing more.
    expect(ledger.checkHls(media(10), new URL('low.m3u8', base))).toBe(0);
  });

  test('a playlist naming itself is refused, also through a fragment or an absolute URL', () => {
    expect(() => new ManifestLedger(100).checkHls('#EXTM3U\n#EXTINF:1,\nmaster.m3u8#x\n', base)).toThrow(
      /names itself/,
    );
    expect(() =>
      new ManifestLedger(100).checkHls(`#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n${base.href}\n`, base),
    ).toThrow(/names itself/);
  });

  test('a master where a media playlist was expected, and a playlist where a segment was, are refused', () => {
    const ledger = new ManifestLedger(100);
    ledger.checkHls('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nlow.m3u8\n', base);
    expect(() =>
      ledger.checkHls('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nother.m3u8\n', new URL('low.m3u8', base)),
    ).toThrow(/only one level of nesting/);
    const second = new ManifestLedger(100);
    second.checkHls('#EXTM3U\n#EXTINF:1,\nnext.m3u8\n#EXT-X-ENDLIST\n', base);
    expect(() => second.checkHls(media(1), new URL('next.m3u8', base))).toThrow(/where a media segment was expected/);
  });

  test('a playlist of more than MAX_SEGMENTS segments is refused; exactly MAX_SEGMENTS passes', () => {
    expect(() => new ManifestLedger(100).checkHls(media(101), base)).toThrow(
      /names 101 segments, more than the limit of 100/,
    );
    expect(new ManifestLedger(100).checkHls(media(100), base)).toBe(200);
  });

  test('init segments and keys named by URI attributes count as resources', () => {
    const text =
      '#EXTM3U\n#EXT-X-MAP:URI="init.mp4"\n#EXT-X-KEY:METHOD=AES-128,URI="key.bin"\n#EXTINF:1,\na.m4s\n#EXT-X-ENDLIST\n';
    expect(new ManifestLedger(100).checkHls(text, base)).toBe(6);
  });
});

describe('DASH manifests in a job', () => {
  test('segments are counted from timelines, lists and templates with a duration', () => {
    expect(declaredDashSegments('<MPD><SegmentTimeline><S t="0" d="2" r="9"/><S d="1"/></SegmentTimeline></MPD>')).toBe(
      11,
    );
    expect(
      declaredDashSegments('<MPD><SegmentList><SegmentURL media="a"/><SegmentURL media="b"/></SegmentList></MPD>'),
    ).toBe(2);
    expect(
      declaredDashSegments(
        '<MPD mediaPresentationDuration="PT1H0M0S"><SegmentTemplate timescale="1000" duration="2000" media="$Number$.m4s"/></MPD>',
      ),
    ).toBe(1800);
  });

  test('a manifest with a DTD is refused by the rule the extract holds it to: no entity is expanded', () => {
    const mpd = '<?xml version="1.0"?><!DOCTYPE MPD [<!ENTITY a "v.mp4">]><MPD><BaseURL>&a;</BaseURL></MPD>';
    expect(() => new ManifestLedger(20_000).checkDash(mpd)).toThrow(
      "The job's manifest was refused: the DASH manifest declares XML entities in a DOCTYPE, which this service does not expand.",
    );
  });

  test('a manifest declaring more than MAX_SEGMENTS segments is refused', () => {
    const mpd =
      '<MPD mediaPresentationDuration="PT100000H"><Period><AdaptationSet><SegmentTemplate duration="1" media="$Number$.m4s"/><Representation id="0"/></AdaptationSet></Period></MPD>';
    expect(() => new ManifestLedger(20_000).checkDash(mpd)).toThrow(
      /declares 360000000 segments per representation, more than the limit of 20000/,
    );
  });
});

test('a live media playlist (no EXT-X-ENDLIST, not VOD) is refused, alone or as a variant: a live variant of a master is not recorded yet', () => {
  const live = [
    '#EXTM3U',
    '#EXT-X-TARGETDURATION:2',
    '#EXT-X-MEDIA-SEQUENCE:40',
    '#EXTINF:2,',
    'seg40.ts',
    '#EXTINF:2,',
    'seg41.ts',
  ].join('\n');
  expect(() => new ManifestLedger(100).checkHls(live, base)).toThrow(
    /the stream is live .* a live variant of a master playlist is not recorded yet/,
  );
  const ledger = new ManifestLedger(100);
  ledger.checkHls('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nlive.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=2\nvod.m3u8\n', base);
  expect(() => ledger.checkHls(live, new URL('live.m3u8', base))).toThrow(/the stream is live/);
  expect(ledger.checkHls(`#EXTM3U\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:2,\nseg0.ts\n`, new URL('vod.m3u8', base))).toBe(
    2,
  );
  expect(() =>
    new ManifestLedger(100).checkHls(live.replace('#EXTM3U', '#EXTM3U\n#EXT-X-PLAYLIST-TYPE:EVENT'), base),
  ).toThrow(/the stream is live/);
});
