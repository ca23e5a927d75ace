// Live HLS as it is read: the rule a media playlist is judged live by (the extract's, on a master's
// first variant), and the recorder's window of a playlist.
import { describe, expect, test } from '@jest/globals';
import { isLiveMediaPlaylist, parseLivePlaylist, type LivePlaylist } from '../src/hls-live.js';

const m3u8 = (...lines: string[]) =>
  ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-TARGETDURATION:4', ...lines, ''].join('\n');
const segments = (first: number, n: number) =>
  Array.from({ length: n }, (_, i) => [`#EXTINF:4.000,`, `seg${first + i}.ts`]).flat();
const master = (...variants: string[]) =>
  [
    '#EXTM3U',
    ...variants.flatMap((v, i) => [`#EXT-X-STREAM-INF:BANDWIDTH=${(i + 1) * 400000},RESOLUTION=640x360`, v]),
    '',
  ].join('\n');

describe('whether a media playlist is live', () => {
  test('the rule on the text: live media playlists only (EVENT growing yes; ENDLIST, VOD, a master, no segments no)', () => {
    expect(isLiveMediaPlaylist(m3u8(...segments(0, 2)))).toBe(true);
    expect(isLiveMediaPlaylist(m3u8('#EXT-X-PLAYLIST-TYPE:EVENT', ...segments(0, 2)))).toBe(true);
    expect(isLiveMediaPlaylist(m3u8(...segments(0, 2), '#EXT-X-ENDLIST'))).toBe(false);
    expect(isLiveMediaPlaylist(m3u8('#EXT-X-PLAYLIST-TYPE:VOD', ...segments(0, 2)))).toBe(false);
    expect(isLiveMediaPlaylist(master('a.m3u8'))).toBe(false);
    expect(isLiveMediaPlaylist(m3u8())).toBe(false);
    expect(isLiveMediaPlaylist('<html>')).toBe(false);
  });
});

describe("the recorder's window of a live playlist", () => {
  test('segments numbered by media sequence, with their init section, discontinuities and encryption', () => {
    const text = m3u8(
      '#EXT-X-MEDIA-SEQUENCE:41',
      '#EXT-X-MAP:URI="init.mp4"',
      ...segments(41, 1),
      '#EXT-X-DISCONTINUITY',
      '#EXT-X-KEY:METHOD=AES-128,URI="k"',
      ...segments(42, 1),
    );
    const parsed = parseLivePlaylist(text, 'http://127.0.0.1/live/x.m3u8') as LivePlaylist;
    expect(parsed).toMatchObject({ kind: 'media', targetDuration: 4, mediaSequence: 41, ended: false });
    expect(parsed.encrypted).toBe(true);
    expect(parsed.segments).toEqual([
      {
        seq: 41,
        url: 'http://127.0.0.1/live/seg41.ts',
        duration: 4,
        init: 'http://127.0.0.1/live/init.mp4',
        discontinuity: false,
      },
      {
        seq: 42,
        url: 'http://127.0.0.1/live/seg42.ts',
        duration: 4,
        init: 'http://127.0.0.1/live/init.mp4',
        discontinuity: true,
      },
    ]);
  });

  test('a master resolves to its highest-bandwidth variant, quoted or not', () => {
    const text = [
      '#EXTM3U',
      '#EXT-X-STREAM-INF:BANDWIDTH=400000,CODECS="avc1.4d401e,mp4a.40.2"',
      'lo.m3u8',
      '#EXT-X-STREAM-INF:CODECS="avc1.640028,mp4a.40.2",BANDWIDTH=2400000',
      'hi/index.m3u8',
      '',
    ].join('\n');
    expect(parseLivePlaylist(text, 'http://127.0.0.1/live/master.m3u8')).toEqual({
      kind: 'master',
      variant: 'http://127.0.0.1/live/hi/index.m3u8',
    });
  });
});
