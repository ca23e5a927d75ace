// The segments a job's proxy fetches ahead of ffmpeg, read from a VOD playlist or an MPD: in order,
// resolved as ffmpeg resolves them, bounded like every other reading of a manifest.
import { describe, expect, test } from '@jest/globals';
import { dashSegments, hlsSegments, segmentsFrom, type PlannedSegment } from '../src/segment-plan.js';

const at = new URL('http://cdn.test/v/manifest');
const hrefs = (segments: PlannedSegment[]) => segments.map((s) => s.url.href);

describe('the segments a playlist names, in order', () => {
  test('an HLS media playlist gives its segments resolved against it; a master or byte ranges give none', () => {
    const media =
      '#EXTM3U\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:2,\na.ts\n#EXTINF:2,\n/abs/b.ts#frag\n#EXTINF:2,\nhttps://other.test/c.ts\n#EXT-X-ENDLIST\n';
    expect(hrefs(hlsSegments(media, at))).toEqual([
      'http://cdn.test/v/a.ts',
      'http://cdn.test/abs/b.ts',
      'https://other.test/c.ts',
    ]);
    expect(hlsSegments(media, at).map((s) => s.start)).toEqual([0, 2, 4]);
    expect(segmentsFrom(hlsSegments(media, at), 2.5).map((u) => u.pathname)).toEqual(['/abs/b.ts', '/c.ts']);
    expect(segmentsFrom(hlsSegments(media, at), 9).map((u) => u.pathname)).toEqual(['/c.ts']);
    expect(hlsSegments('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nlow.m3u8\n', at)).toEqual([]);
    expect(
      hlsSegments(
        '#EXTM3U\n#EXTINF:2,\n#EXT-X-BYTERANGE:100@0\nall.ts\n#EXTINF:2,\n#EXT-X-BYTERANGE:100@100\nall.ts\n',
        at,
      ),
    ).toEqual([]);
  });

  test('a DASH template over a timeline expands $Number%05d$, $Time$ and $RepresentationID$ under each BaseURL', () => {
    const mpd = `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" mediaPresentationDuration="PT4S"><BaseURL>media/</BaseURL><Period><AdaptationSet>
      <SegmentTemplate timescale="10" media="v-$RepresentationID$-$Number%05d$.m4s" startNumber="3"/>
      <Representation id="hi" bandwidth="9"><SegmentTemplate timescale="10" media="v-$RepresentationID$-$Number%05d$.m4s" startNumber="3"><SegmentTimeline><S t="0" d="20" r="1"/></SegmentTimeline></SegmentTemplate></Representation>
      <Representation id="lo" bandwidth="5"><BaseURL>lo/</BaseURL><SegmentTemplate timescale="10" media="t$Time$-$Bandwidth$.m4s"><SegmentTimeline><S t="5" d="10"/><S d="30"/></SegmentTimeline></SegmentTemplate></Representation>
    </AdaptationSet></Period></MPD>`;
    expect(dashSegments(mpd, at).map(hrefs)).toEqual([
      ['http://cdn.test/v/media/v-hi-00003.m4s', 'http://cdn.test/v/media/v-hi-00004.m4s'],
      ['http://cdn.test/v/media/lo/t5-5.m4s', 'http://cdn.test/v/media/lo/t15-5.m4s'],
    ]);
    expect(dashSegments(mpd, at).map((segments) => segments.map((s) => s.start))).toEqual([
      [0, 2],
      [0, 1],
    ]);
  });

  test('a DASH fixed-duration template counts from the duration; a SegmentList lists; an open-ended timeline plans nothing', () => {
    const mpd = `<MPD mediaPresentationDuration="PT5S"><Period>
      <AdaptationSet><SegmentTemplate timescale="1" duration="2" media="d$Number$.m4s"/><Representation id="a"/></AdaptationSet>
      <AdaptationSet><Representation id="b"><SegmentList><SegmentURL media="x.m4s"/><SegmentURL media="y.m4s"/></SegmentList></Representation></AdaptationSet>
      <AdaptationSet><Representation id="c"><SegmentTemplate media="o$Number$.m4s"><SegmentTimeline><S d="1" r="-1"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet>
    </Period></MPD>`;
    expect(dashSegments(mpd, at).map(hrefs)).toEqual([
      ['http://cdn.test/v/d1.m4s', 'http://cdn.test/v/d2.m4s', 'http://cdn.test/v/d3.m4s'],
      ['http://cdn.test/v/x.m4s', 'http://cdn.test/v/y.m4s'],
    ]);
    expect(dashSegments('<!DOCTYPE x [<!ENTITY a "b">]><MPD/>', at)).toEqual([]);
  });
});

describe('the plan reads an MPD as the extract and ffmpeg do', () => {
  test('a predefined entity or character reference in a SegmentURL or a BaseURL is decoded: &amp; is the & ffmpeg asks for', () => {
    const mpd = `<MPD><Period><AdaptationSet><Representation id="a"><BaseURL>d&#47;</BaseURL><SegmentList>
      <SegmentURL media="s.m4s?n=1&amp;sig=x"/><SegmentURL media="s.m4s?n=2&amp;sig=x"/></SegmentList></Representation></AdaptationSet></Period></MPD>`;
    expect(dashSegments(mpd, at).map(hrefs)).toEqual([
      ['http://cdn.test/v/d/s.m4s?n=1&sig=x', 'http://cdn.test/v/d/s.m4s?n=2&sig=x'],
    ]);
  });

  test('a printf width pads a number to at most 32 digits', () => {
    const mpd = `<MPD><Period><AdaptationSet><Representation id="a"><SegmentTemplate media="$Number%0100d$.m4s">
      <SegmentTimeline><S d="1" r="1"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet></Period></MPD>`;
    expect(dashSegments(mpd, at).map(hrefs)).toEqual([
      [`http://cdn.test/v/${'1'.padStart(32, '0')}.m4s`, `http://cdn.test/v/${'2'.padStart(32, '0')}.m4s`],
    ]);
  });

  test('a representation or playlist of more than MAX_SEGMENTS segments plans nothing', () => {
    const mpd = (r: number) =>
      `<MPD><Period><AdaptationSet><Representation id="a"><SegmentTemplate media="$Number$.m4s"><SegmentTimeline><S d="1" r="${r}"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet></Period></MPD>`;
    expect(dashSegments(mpd(9), at, 10)[0]).toHaveLength(10);
    expect(dashSegments(mpd(10), at, 10)).toEqual([]);
    const media = (n: number) => `#EXTM3U\n${'#EXTINF:2,\ns.ts\n'.repeat(n)}#EXT-X-ENDLIST\n`;
    expect(hlsSegments(media(10), at, 10)).toHaveLength(10);
    expect(hlsSegments(media(11), at, 10)).toEqual([]);
  });
});
