// How `reelay extract` prints for a person: items and sources numbered from 1 (as --items and
// --source take them) and a RESOLUTION column.
import { expect, test } from '@jest/globals';
import { extractText } from '../src/show.js';

test('the table numbers sources from 1 and shows each resolution', () => {
  const text = extractText({
    url: 'https://example.com/v',
    platform: 'generic',
    content_type: 'video',
    title: 'Clip',
    media: [
      {
        index: 0,
        type: 'video',
        title: 'Clip',
        sources: [
          {
            quality: '720p',
            url: 'a',
            stream_profile: 'muxed_progressive',
            ext: 'mp4',
            width: 1280,
            height: 720,
            bitrate: 2_000_000,
          },
          { quality: '480p', url: 'b', stream_profile: 'hls', height: 480 },
          { quality: '128k', url: 'c', stream_profile: 'audio_only', has_video: false },
        ],
      },
    ],
  });
  expect(text).toBe(
    [
      'Clip (generic, video)',
      '',
      'item 1: video: Clip',
      '#  QUALITY  TRACKS       PROFILE            EXT  RESOLUTION  BITRATE  CODECS',
      '1  720p     video+audio  muxed_progressive  mp4  1280x720    2000k',
      '2  480p     video+audio  hls                     480p',
      '3  128k     audio        audio_only',
      '',
    ].join('\n'),
  );
});
