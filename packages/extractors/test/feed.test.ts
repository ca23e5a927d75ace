// A feed's entries: RSS 1.0, CDATA, Atom's media:group title, a window of a long feed and its next
// page, and which documents are read as feeds. The reading itself and its refusals are
// @reelay/manifests' (its feed test).
import { describe, expect, test } from '@jest/globals';
import type { FetchedDocument } from '../src/document.js';
import { feedDocument } from '../src/feed.js';
import { parseFeed } from '../src/feed-entries.js';

const BASE = new URL('https://feeds.example/show.xml');
const rss = (items: string, extra = '') =>
  `<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>Show</title>${extra}${items}</channel></rss>`;
const items = (n: number) =>
  Array.from({ length: n }, (_, i) => `<item><title>Item ${i + 1}</title><link>/i/${i + 1}</link></item>`).join('');

describe('reading feeds', () => {
  test('RSS 1.0 (RDF) with dc:date, and titles in CDATA', () => {
    const feed = parseFeed(
      `<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="https://feeds.example/"><title>RDF show</title><link>https://feeds.example/</link></channel>
<item rdf:about="https://feeds.example/1"><title><![CDATA[One & <only>]]></title><link>https://feeds.example/1</link><dc:date>2026-03-04T05:06:07Z</dc:date></item>
</rdf:RDF>`,
      BASE,
    );
    expect(feed).toMatchObject({ title: 'RDF show', total: 1, more: false });
    expect(feed.entries).toEqual([
      { url: 'https://feeds.example/1', title: 'One & <only>', upload_date: '2026-03-04T05:06:07.000Z' },
    ]);
  });

  test('relative links resolve against the document; a permalink guid is the page when there is no link', () => {
    const feed = parseFeed(
      rss(
        '<item><title>a</title><guid>https://feeds.example/p/a</guid></item><item><guid isPermaLink="false">https://feeds.example/p/b</guid></item><item><link>rel/c</link></item>',
      ),
      BASE,
    );
    expect(feed.entries.map((e) => e.url)).toEqual(['https://feeds.example/p/a', 'https://feeds.example/rel/c']);
  });

  test('a window of a long feed: the items asked for, whether more follow, and the next page link', () => {
    const text = rss(items(250), '<atom:link rel="next" href="/show.xml?page=2"/>');
    const middle = parseFeed(text, BASE, { from: 100, count: 100 });
    expect(middle.entries).toHaveLength(100);
    expect(middle.entries[0]).toMatchObject({ title: 'Item 101', url: 'https://feeds.example/i/101' });
    expect(middle).toMatchObject({ more: true, total: 250 });
    const last = parseFeed(text, BASE, { from: 200, count: 100 });
    expect(last.entries.map((e) => e.title)).toEqual(Array.from({ length: 50 }, (_, i) => `Item ${201 + i}`));
    expect(last.more).toBe(false);
    expect(last.next?.href).toBe('https://feeds.example/show.xml?page=2');
  });
});

describe('which documents are read as feeds', () => {
  const doc = (contentType: string, body: string): FetchedDocument => {
    const head = Buffer.from(body);
    return {
      url: BASE,
      finalUrl: BASE,
      status: 200,
      headers: {},
      contentType,
      head,
      text: async () => body,
      close: () => undefined,
    };
  };

  test('a feed served as text/html (a static host typing it by name) is still a feed; a page is not', () => {
    expect(feedDocument.detect(doc('text/html', rss(items(2))))).toBe(true);
    expect(
      feedDocument.detect(
        doc('text/html', '<!DOCTYPE html><html><head><title>rss</title></head><body><rss></rss></body></html>'),
      ),
    ).toBe(false);
    expect(feedDocument.detect(doc('application/xml', rss(items(1))))).toBe(true);
    expect(feedDocument.detect(doc('application/rss+xml', 'not even xml'))).toBe(true);
    expect(feedDocument.detect(doc('audio/mpeg', rss(items(1))))).toBe(false);
  });
});
