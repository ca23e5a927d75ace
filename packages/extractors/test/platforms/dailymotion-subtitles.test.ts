// Dailymotion's subtitle list (subtitles.data in the player metadata) as the video's subtitles.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startOrigin, testMedia, type Origin } from '@reelay/testkit';
import { extractor, serveJson } from './public-api-fixtures.js';

let origin: Origin;

beforeAll(async () => {
  const media = await testMedia();
  origin = await startOrigin();
  origin.file('/cdn/H264-512x384/video/x8sub01.mp4', media.muxedMp4, 'video/mp4');
  serveJson(
    origin,
    '/player/metadata/video/x8sub01',
    JSON.stringify({
      id: 'x8sub01',
      title: 'With subtitles',
      qualities: { 380: [{ type: 'video/mp4', url: '/cdn/H264-512x384/video/x8sub01.mp4' }] },
      subtitles: {
        enable: true,
        data: {
          en: { label: 'English', urls: ['/static/video/x8sub01/subs/en.vtt'] },
          'fr-auto': { label: 'Français (auto)', urls: ['javascript:alert(1)', '/static/video/x8sub01/subs/fr.vtt'] },
          de: { label: 'no file', urls: [] },
        },
      },
    }),
  );
});
afterAll(() => origin.close());

test('each language with a file is a WebVTT track; a language without one is left out', async () => {
  const { result } = await extractor({ dailymotion_www: origin.base })('https://www.dailymotion.com/video/x8sub01');
  expect(result.media[0].subtitles).toEqual([
    { language: 'en', label: 'English', url: `${origin.base}/static/video/x8sub01/subs/en.vtt`, format: 'vtt' },
    {
      language: 'fr-auto',
      label: 'Français (auto)',
      url: `${origin.base}/static/video/x8sub01/subs/fr.vtt`,
      format: 'vtt',
    },
  ]);
});
