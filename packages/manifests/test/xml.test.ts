// One set of XML rules for every reader: an MPD (read whole) and a feed (streamed) refuse a DTD alike,
// decode the five predefined entities alike, stop at the same depth and the same size.
import { describe, expect, test } from '@jest/globals';
import { readFeed } from '../src/feed.js';
import { MAX_MANIFEST_BYTES, MAX_XML_DEPTH } from '../src/limits.js';
import { attr, kids, readMpd } from '../src/mpd.js';

const BASE = new URL('https://cdn.example/show.xml');
/** An MPD whose Representation (at depth 4) holds `inner`. */
const mpd = (inner = '', doctype = '') =>
  `<?xml version="1.0"?>${doctype}<MPD><Period><AdaptationSet><Representation id="v">${inner}</Representation></AdaptationSet></Period></MPD>`;
const feed = (inner = '', doctype = '') =>
  `<?xml version="1.0"?>${doctype}<rss version="2.0"><channel><title>t</title><item>${inner}</item></channel></rss>`;
const readers = {
  'an MPD': (text: string) => readMpd(text, 20_000),
  'a feed': (text: string) => readFeed(text, BASE),
};
/** `n` elements nested inside each other. */
const nested = (n: number) => '<x>'.repeat(n) + '</x>'.repeat(n);

describe.each(Object.entries(readers))('%s', (_name, read) => {
  test('a DOCTYPE that declares entities, an external entity or any internal subset is refused before parsing', () => {
    for (const decl of [
      '<!DOCTYPE x [<!ENTITY a "b">]>',
      '<!DOCTYPE x [<!ENTITY a SYSTEM "file:///etc/passwd">]>',
      '<!DOCTYPE x [<!ENTITY % p "x">]>',
      '<!DOCTYPE x [<!ELEMENT x ANY>]>',
    ]) {
      const text = _name === 'an MPD' ? mpd('', decl) : feed('', decl);
      expect(() => read(text)).toThrow(/declares XML entities in a DOCTYPE/);
    }
  });

  test(`elements nested ${MAX_XML_DEPTH} deep are read, one more is refused`, () => {
    // The MPD's Representation is at depth 4 and the feed's item at 3: fill the rest.
    const outer = _name === 'an MPD' ? 4 : 3;
    const wrap = (inner: string) => (_name === 'an MPD' ? mpd(inner) : feed(inner));
    expect(() => read(wrap(nested(MAX_XML_DEPTH - outer)))).not.toThrow();
    expect(() => read(wrap(nested(MAX_XML_DEPTH - outer + 1)))).toThrow(
      new RegExp(`nested deeper than ${MAX_XML_DEPTH} elements`),
    );
  });

  test('a document over MAX_MANIFEST_BYTES decoded (counted in UTF-8 bytes, not characters) is refused unread', () => {
    // 6 Mi characters of a three-byte character: 18 MiB as UTF-8, under the limit in characters.
    const big = '\u20ac'.repeat(6 * 1024 * 1024);
    expect(big.length).toBeLessThan(MAX_MANIFEST_BYTES);
    const text = _name === 'an MPD' ? mpd(`<!--${big}-->`) : feed(`<!--${big}-->`);
    expect(() => read(text)).toThrow(/larger than 16 MB/);
  });
});

describe('the five predefined entities and character references', () => {
  test('are decoded alike in an MPD and a feed, in a document with a bare DOCTYPE', () => {
    const written = 'a=1&amp;b=2&lt;&gt;&quot;&apos;&#x41;&#66;';
    const decoded = 'a=1&b=2<>"\'AB';
    const rep = kids(
      kids(
        kids(readMpd(mpd(`<BaseURL>${written}</BaseURL>`, '<!DOCTYPE MPD>'), 20_000), 'Period')[0],
        'AdaptationSet',
      )[0],
      'Representation',
    )[0];
    expect(kids(rep, 'BaseURL')[0]['#text']).toBe(decoded);
    expect(attr(readMpd(`<MPD id="${written}"/>`, 20_000), 'id')).toBe(decoded);
    expect(readFeed(feed(`<title>${written}</title>`, '<!DOCTYPE rss>'), BASE).items[0].text.title).toBe(decoded);
  });

  test('a reference to no character (0, a surrogate, past U+10FFFF) is U+FFFD in both, never an error', () => {
    const written = '&#0;&#xD800;&#x110000;';
    expect(attr(readMpd(`<MPD id="${written}"/>`, 20_000), 'id')).toBe('\uFFFD'.repeat(3));
    expect(readFeed(feed(`<title>${written}</title>`), BASE).items[0].text.title).toBe('\uFFFD'.repeat(3));
  });

  test("HTML's named entities are not expanded in either", () => {
    const rep = kids(
      kids(kids(readMpd(mpd('<BaseURL>a&nbsp;b&copy;</BaseURL>'), 20_000), 'Period')[0], 'AdaptationSet')[0],
      'Representation',
    )[0];
    expect(kids(rep, 'BaseURL')[0]['#text']).not.toContain('\u00a0');
    expect(readFeed(feed('<title>a&nbsp;b</title>'), BASE).items[0].text.title).not.toContain('\u00a0');
  });
});
