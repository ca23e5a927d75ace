// How a job reads a DASH source's URL back: the manifest, the representation id, and the kind when
// an audio and a video representation share the id (packages/extractors/src/dash.ts writes them).
import { describe, expect, test } from '@jest/globals';
import { parseDashFragment } from '../src/services/dash-fragment.js';

const MPD = 'https://cdn.example.com/vod/manifest.mpd?token=a%26b';

describe('parseDashFragment', () => {
  test.each([
    [`${MPD}#representation=v720`, { url: MPD, id: 'v720' }],
    [`${MPD}#representation=a-en%3D128000`, { url: MPD, id: 'a-en=128000' }],
    [`${MPD}#representation=318597&type=audio`, { url: MPD, id: '318597', type: 'audio' }],
    [`${MPD}#representation=318597&type=video`, { url: MPD, id: '318597', type: 'video' }],
    [`${MPD}#representation=sub%26en&type=text`, { url: MPD, id: 'sub&en', type: 'text' }],
    // An unknown parameter or type is ignored; a malformed escape is kept as written (ffmpeg's map refuses it).
    [`${MPD}#representation=1&type=image&x=y`, { url: MPD, id: '1' }],
    [`${MPD}#representation=%E0%A4%A`, { url: MPD, id: '%E0%A4%A' }],
  ])('%s', (url, expected) => {
    expect(parseDashFragment(url)).toEqual(expected);
  });

  test('a URL without a representation names none', () => {
    expect(parseDashFragment(MPD)).toBeUndefined();
    expect(parseDashFragment(`${MPD}#t=10`)).toBeUndefined();
  });
});
