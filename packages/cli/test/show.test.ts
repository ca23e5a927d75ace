// How `reelay extract` prints for a person: items and sources numbered from 1 (as --items and
// --source take them) and a RESOLUTION column; a collection's entries; text from the internet made
// safe for a terminal.
import { expect, test } from '@jest/globals';
import { clock, collectionHints, extractText, printable, shellWord } from '../src/show.js';
import { pickedText } from '../src/get.js';

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

const feed = (entries: { index: number; url: string; title?: string; duration?: number; upload_date?: string }[]) => ({
  url: 'https://example.com/feed.xml',
  platform: 'generic',
  content_type: 'collection',
  title: 'Tones Weekly',
  media: [],
  collection: { kind: 'feed', entry_count: 250, next_cursor: 'c1' },
  entries,
});

test("a collection's entries are listed by their index, with durations and dates when known", () => {
  const result = feed([
    { index: 101, url: 'https://example.com/a', title: 'A', duration: 65, upload_date: '2026-03-01' },
    { index: 102, url: 'https://example.com/b', duration: 3725 },
  ]);
  expect(extractText(result)).toBe(
    [
      'Tones Weekly (generic, feed: 250 entries)',
      '',
      '#    TITLE                  DURATION  DATE',
      '101  A                      1:05      2026-03-01',
      '102  https://example.com/b  1:02:05',
      '',
    ].join('\n'),
  );
  expect(collectionHints('https://example.com/feed.xml?a=1&b=2', result, 2)).toEqual([
    "download every entry with `reelay get 'https://example.com/feed.xml?a=1&b=2'`, or some by number: `reelay get 'https://example.com/feed.xml?a=1&b=2' --items 101-102`",
    "this is page 2 (entries 101-102 of 250); the next page: `reelay extract 'https://example.com/feed.xml?a=1&b=2' --page 3`",
  ]);
});

test('titles lose control characters (escape sequences, bidi overrides) before they reach a terminal', () => {
  expect(printable('Evil\x1b]0;owned\x07 title\x1b[2J\u202e')).toBe('Evil ]0;owned  title [2J ');
  expect(printable('Plain – ünïcode ✓')).toBe('Plain – ünïcode ✓');
  expect(clock(59.6)).toBe('1:00');
  expect(shellWord("it's")).toBe(`'it'\\''s'`);
  expect(shellWord('https://example.com/a.xml')).toBe('https://example.com/a.xml');
});

test('what the server picked is said in its words, with the conversion asked for', () => {
  expect(pickedText('360p', 'video (mp4) + audio (m4a), merged')).toBe('video (mp4) + audio (m4a), merged');
  expect(pickedText('original', 'audio (m4a)', 'mp3')).toBe('audio (m4a) → mp3');
  // An older server sends the label only.
  expect(pickedText('original', null)).toBe('the original file');
  expect(pickedText('720p', undefined)).toBe('720p');
});
