// The feed reader: a window of a long feed (and stopping after it), and its refusals (no feed root,
// depth, a DTD, the item count).
import { describe, expect, test } from '@jest/globals';
import { readFeed } from '../src/feed.js';

const BASE = new URL('https://feeds.example/show.xml');
const rss = (items: string, extra = '') =>
  `<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>Show</title>${extra}${items}</channel></rss>`;
const items = (n: number) =>
  Array.from({ length: n }, (_, i) => `<item><title>Item ${i + 1}</title><link>/i/${i + 1}</link></item>`).join('');

describe('reading feeds', () => {
  test('a window: its items as written, whether more follow, the total and the next page resolved', () => {
    const feed = readFeed(
      rss(items(3), '<atom:link rel="next" href="ftp://x/"/><atom:link rel="next" href="?page=2"/>'),
      BASE,
      {
        from: 1,
        count: 1,
      },
    );
    expect(feed).toMatchObject({ root: 'rss', title: 'Show', total: 3, more: true });
    expect(feed.items).toEqual([{ text: { title: 'Item 2', link: '/i/2' }, els: [] }]);
    expect(feed.next?.href).toBe('https://feeds.example/show.xml?page=2');
  });

  test('parsing stops after the window: a malformed tail past it is never read', () => {
    const feed = readFeed(rss(items(5) + `<item>${'<x>'.repeat(100)}</item>`), BASE, { from: 0, count: 5 });
    expect(feed).toMatchObject({ more: true });
    expect(() => readFeed(rss(items(5) + `<item>${'<x>'.repeat(100)}</item>`), BASE)).toThrow(/nested deeper than 32/);
  });

  test('refusals: no feed root, DTD entities or an internal subset, more than 10,000 items', () => {
    expect(() => readFeed('<html><body>hi</body></html>', BASE)).toThrow(/root element is not rss/);
    expect(() => readFeed('<?xml version="1.0"?><!DOCTYPE rss [<!ELEMENT rss ANY>]><rss/>', BASE)).toThrow(/entities/);
    expect(() => readFeed(rss('<item/>'.repeat(10_001)), BASE)).toThrow(/more than 10000 items/);
  });
});
