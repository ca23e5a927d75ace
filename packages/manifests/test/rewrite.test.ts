import { describe, expect, test } from '@jest/globals';
import { withoutTextSets } from '../src/rewrite.js';

const set = (attrs: string, body: string) => `<AdaptationSet ${attrs}>${body}</AdaptationSet>`;

describe('DASH manifests handed to ffmpeg', () => {
  test('lose the adaptation sets of subtitles, however the set says it is text', () => {
    const video = set('contentType="video" mimeType="video/mp4"', '<Representation id="0" codecs="avc1.64001f"/>');
    const audio = set('mimeType="audio/mp4"', '<Representation id="1" codecs="mp4a.40.2"/>');
    const mpd = [
      '<MPD><Period>',
      video,
      set('contentType="text" lang="en"', '<Representation id="s1"><BaseURL>en.vtt</BaseURL></Representation>'),
      set('mimeType="application/ttml+xml"', '<Representation id="s2"><BaseURL>ja.ttml</BaseURL></Representation>'),
      set('lang="es"', '<Representation id="s3" mimeType="application/mp4" codecs="wvtt"/>'),
      '<mpd:AdaptationSet mimeType=\'text/vtt\'><mpd:Representation id="s4"/></mpd:AdaptationSet>',
      audio,
      '</Period></MPD>',
    ].join('\n');
    expect(withoutTextSets(mpd)).toBe(['<MPD><Period>', video, '', '', '', '', audio, '</Period></MPD>'].join('\n'));
  });

  test('keep a video set whose components or roles mention text, and sets with mixed representations', () => {
    const captioned = set(
      'contentType="video"',
      '<ContentComponent contentType="text"/><Role value="caption"/><Representation id="0" codecs="avc1.64001f"/>',
    );
    const mixed = set(
      'mimeType="application/mp4"',
      '<Representation id="a" codecs="wvtt"/><Representation id="b" codecs="mp4a.40.2"/>',
    );
    const mpd = `<MPD><Period>${captioned}${mixed}</Period></MPD>`;
    expect(withoutTextSets(mpd)).toBe(mpd);
  });
});
