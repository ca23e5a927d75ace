// Feeds built to exhaust the reader: 10^5 items, 10^5-deep nesting, an entity bomb, a window near
// the end of the largest feed accepted. Each is read or refused within a stated time, with the peak
// memory of this process in the assertion.
import { describe, expect, test } from '@jest/globals';
import { readFeed } from '../../src/feed.js';
import { failureOf, hostileRead, valueOf, withinBounds } from './measure.js';

const BASE = new URL('http://127.0.0.1/feed.xml');
const feed = (items: string) =>
  `<?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Hostile</title>${items}</channel></rss>`;

describe('feeds at and past their bounds', () => {
  test('10^5 items are refused before they are parsed', async () => {
    const text = feed('<item><link>/x</link></item>\n'.repeat(100_000));
    const m = await hostileRead('feed: 10^5 items', () => readFeed(text, BASE));
    expect(failureOf(m).message).toMatch(/more than 10000 items/);
    withinBounds(m);
  });

  test('elements nested 10^5 deep are refused at depth 32', async () => {
    const text = feed(`<item>${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}</item>`);
    const m = await hostileRead('feed: nested 10^5 deep', () => readFeed(text, BASE));
    expect(failureOf(m).message).toMatch(/nested deeper than 32/);
    withinBounds(m);
  });

  test('an entity bomb (a billion laughs) is refused, never expanded', async () => {
    const lol = [
      '<!ENTITY lol0 "lol">',
      ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`),
    ].join('');
    const text = `<?xml version="1.0"?><!DOCTYPE rss [${lol}]><rss version="2.0"><channel><title>&lol9;</title></channel></rss>`;
    const m = await hostileRead('feed: billion laughs', () => readFeed(text, BASE));
    expect(failureOf(m).message).toMatch(/entities/);
    withinBounds(m);
  });

  test('the last page of a 10,000-item feed reads only that page into items', async () => {
    const text = feed(
      Array.from(
        { length: 10_000 },
        (_, n) => `<item><title>Episode ${n}</title><enclosure url="/e/${n}.mp3" type="audio/mpeg"/></item>`,
      ).join(''),
    );
    const m = await hostileRead('feed: last page of 10^4 items', () =>
      readFeed(text, BASE, { from: 9_900, count: 100 }),
    );
    const read = valueOf(m);
    expect(read).toMatchObject({ total: 10_000, more: false });
    expect(read.items).toHaveLength(100);
    expect(read.items[0].text.title).toBe('Episode 9900');
    withinBounds(m);
  });
});
