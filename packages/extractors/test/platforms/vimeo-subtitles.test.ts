// Vimeo's text tracks (captions and subtitles in the player config) as the video's subtitles.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Egress } from '@reelay/egress';
import { fixture, startOrigin, type Origin } from '@reelay/testkit';
import { createRegistry } from '../../src/index.js';

const egress = new Egress({ allowlist: ['127.0.0.1'] });
let origin: Origin;

beforeAll(async () => {
  origin = await startOrigin();
  const tracks = [
    { id: 1, lang: 'en', url: '/texttrack/1.vtt?token=a', kind: 'captions', label: 'English (CC)' },
    { id: 2, lang: 'de', url: '/texttrack/2.vtt?token=b', kind: 'subtitles', label: 'Deutsch' },
    { id: 3, lang: 'fr', kind: 'subtitles', label: 'no url' },
  ];
  const html = fixture(origin, 'vimeo/progressive.html').replace(
    '"text_tracks":[]',
    `"text_tracks":${JSON.stringify(tracks)}`,
  );
  origin.body('/video/1001', html, 'text/html; charset=UTF-8');
});
afterAll(() => origin.close());

test("the player's text tracks become WebVTT subtitles on the player's host, with the player as Referer", async () => {
  const { result, subtitles } = await createRegistry().extract(new URL('https://vimeo.com/1001'), {
    egress,
    endpoints: { vimeo_player: origin.base },
  });
  expect(result.media[0].subtitles).toEqual([
    { language: 'en', label: 'English (CC)', url: `${origin.base}/texttrack/1.vtt?token=a`, format: 'vtt' },
    { language: 'de', label: 'Deutsch', url: `${origin.base}/texttrack/2.vtt?token=b`, format: 'vtt' },
  ]);
  expect(subtitles.map((s) => s.headers)).toEqual([
    { referer: 'https://player.vimeo.com/' },
    { referer: 'https://player.vimeo.com/' },
  ]);
});
