// Which item of an extract result a page_url download takes: a pure function, so the answers for a
// collection (which no extractor on this branch returns yet) and for an index out of range are
// checked here without a page that makes them.
import { expect, test } from '@jest/globals';
import type { ExtractResult, MediaItem } from '@reelay/contracts';
import { itemOf } from '../src/services/one-step.js';

const item = (index: number): MediaItem => ({
  index,
  type: 'video',
  sources: [{ quality: 'original', url: `https://example.com/${index}.mp4`, stream_profile: 'muxed_progressive' }],
});
const result = (count: number, content_type = 'gallery'): ExtractResult => ({
  url: 'https://example.com/',
  platform: 'generic',
  extract_profile: 'html5',
  content_type: content_type as ExtractResult['content_type'],
  title: 't',
  media: Array.from({ length: count }, (_, i) => item(i)),
});

test('the item at the index, counted from 0', () => {
  expect(itemOf(result(3), 2)).toEqual(item(2));
});

test('an index out of range is invalid_request naming the count', () => {
  expect(() => itemOf(result(3), 3)).toThrow('item 3 is out of range: this page has 3 media items (item 0–2).');
  expect(() => itemOf(result(1), 1)).toThrow('item 1 is out of range: this page has 1 media item (item 0).');
  expect(() => itemOf(result(1), 1)).toThrow(expect.objectContaining({ code: 'invalid_request', status: 400 }));
});

test('a collection is not downloadable in one step yet, and says so', () => {
  expect(() => itemOf(result(1, 'collection'), 0)).toThrow(
    expect.objectContaining({
      code: 'invalid_request',
      message: expect.stringContaining('collection downloads are not available yet'),
    }),
  );
});
