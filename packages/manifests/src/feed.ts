// RSS 2.0, RSS 1.0 and Atom feeds (podcasts among them) read into their items, as the elements and
// texts each names: what those mean (entries, enclosures as files) is the extractors' to say. Under
// the XML rules of xml.ts, and a count of items taken on the text before anything is parsed. The
// document is streamed and left once the window asked for is read.
import { ReelayError } from '@reelay/contracts';
import { MAX_FEED_ITEMS } from './limits.js';
import { streamXml, type XmlEvents } from './xml.js';

export type FeedAttrs = Record<string, string>;

/** What one item says, as read from its elements (local names: prefixes differ between feeds). */
export interface FeedItem {
  /** The texts of the item's own children that entries use (title, link, guid, dates, duration, id). */
  text: Record<string, string>;
  /** The guid's isPermaLink. */
  guidPermalink?: string;
  /** Elements with attributes anywhere in the item (enclosures, links, images, media:content), in order. */
  els: { name: string; parent: string; attrs: FeedAttrs }[];
  /** A media:group's title (YouTube's Atom feeds title their entries only there). */
  groupTitle?: string;
}

export interface FeedDocument {
  /** Atom (`feed`) or RSS (`rss`, RSS 1.0's `RDF`). */
  root: 'rss' | 'feed' | 'RDF';
  title?: string;
  /** The items of the window asked for, in document order (newest first in most feeds). */
  items: FeedItem[];
  /** Whether the document has items past the window. */
  more: boolean;
  /** Items the document lists (counted on its text). */
  total: number;
  /** RFC 5005's `<atom:link rel="next">`: the next page of a paged feed (when it comes before the reader stopped). */
  next?: URL;
}

/** An absolute http(s) URL from a feed's text, resolved against the document; undefined otherwise. */
export function feedLink(raw: string | undefined, base: URL): URL | undefined {
  if (!raw || raw.length > 2048 || !URL.canParse(raw.trim(), base.href)) return undefined;
  const url = new URL(raw.trim(), base);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}

/** The number of items a feed lists, counted on its text; more than MAX_FEED_ITEMS is refused. */
export function countFeedItems(text: string): number {
  const items = /<(?:[\w.-]+:)?(?:item|entry)[\s>/]/g;
  let count = 0;
  while (items.exec(text)) {
    if (++count > MAX_FEED_ITEMS)
      throw new ReelayError(
        'upstream_error',
        `The feed lists more than ${MAX_FEED_ITEMS} items, the most this service reads in one document.`,
      );
  }
  return count;
}

const ROOTS = new Set(['rss', 'feed', 'RDF']);
/** Elements whose text an item keeps (direct children of the item). */
const ITEM_TEXT = new Set(['title', 'link', 'guid', 'pubDate', 'date', 'duration', 'id', 'published', 'updated']);
const ITEM_ELEMENTS = new Set(['enclosure', 'link', 'image', 'thumbnail', 'content']);

/**
 * The feed's title, the items from `from` (0-based) to `from + count`, whether more follow, and its
 * next page. Items before the window are skipped unread; reading stops at the item after it.
 */
export function readFeed(
  text: string,
  base: URL,
  window: { from: number; count: number } = { from: 0, count: MAX_FEED_ITEMS },
): FeedDocument {
  let total = 0;
  let root: FeedDocument['root'] | undefined;
  let title: string | undefined;
  let next: URL | undefined;
  let itemDepth = -1;
  let seen = 0;
  let more = false;
  let item: FeedItem | undefined;
  let buffer: { key: string; depth: number; text: string } | undefined;
  const items: FeedItem[] = [];

  const events: XmlEvents = {
    open(local, attrs, path) {
      const depth = path.length;
      if (depth === 1) {
        if (!ROOTS.has(local))
          throw new ReelayError('upstream_error', 'The feed is invalid: its root element is not rss, RDF or feed.');
        root = local as FeedDocument['root'];
        return;
      }
      const parent = path[depth - 2];
      const isItem =
        itemDepth === -1 && (local === 'item' || local === 'entry') && (parent === 'channel' || parent === root);
      if (isItem) {
        itemDepth = depth;
        seen++;
        if (seen > window.from + window.count) {
          more = true;
          return 'stop';
        }
        item = seen > window.from ? { text: {}, els: [] } : undefined;
        return;
      }
      if (itemDepth === -1) {
        // The channel's (or Atom feed's) own title and next page.
        const channelLevel = (root === 'feed' && depth === 2) || (parent === 'channel' && depth === 3);
        if (channelLevel && local === 'title' && title === undefined) buffer = { key: 'title', depth, text: '' };
        if (channelLevel && local === 'link' && attrs.rel === 'next' && !next) next = feedLink(attrs.href, base);
        return;
      }
      if (!item) return;
      if (depth === itemDepth + 1 && ITEM_TEXT.has(local) && item.text[local] === undefined) {
        buffer = { key: local, depth, text: '' };
        if (local === 'guid') item.guidPermalink = attrs.isPermaLink;
      }
      if (local === 'title' && parent === 'group' && item.groupTitle === undefined)
        buffer = { key: '#group-title', depth, text: '' };
      if (ITEM_ELEMENTS.has(local) && Object.keys(attrs).length) item.els.push({ name: local, parent, attrs });
    },
    text(data) {
      if (buffer && buffer.text.length < 10_000) buffer.text += data;
    },
    close(path) {
      const depth = path.length;
      if (buffer && buffer.depth === depth) {
        const value = buffer.text.trim();
        if (buffer.key === 'title' && itemDepth === -1) title = value || undefined;
        else if (buffer.key === '#group-title' && item) item.groupTitle = value || undefined;
        else if (item) item.text[buffer.key] = value;
        buffer = undefined;
      }
      if (depth === itemDepth) {
        if (item) items.push(item);
        item = undefined;
        itemDepth = -1;
      }
    },
  };
  streamXml(text, 'feed', events, () => (total = countFeedItems(text)));
  if (!root) throw new ReelayError('upstream_error', 'The feed is invalid: it has no root element.');
  return { root, title, items, more, total, next };
}
