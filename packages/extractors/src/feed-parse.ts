// RSS 2.0, RSS 1.0 and Atom feeds (podcasts among them) read into collection entries, under the
// bounds DASH manifests have: no DTD entities (refused on the text; the parser never expands any), a
// nesting limit, and a count of items taken on the text before anything is parsed. The parser is
// htmlparser2's streaming XML mode, stopped once the page asked for is read: fast-xml-parser, which
// reads DASH, builds the whole document first and took seconds of CPU on a 5 MB feed here.
import { ReelayError } from '@reelay/contracts';
import { Parser } from 'htmlparser2';
import { urlExtension } from './document.js';
import { kindOfMime, mimeOfExt } from './media-types.js';
import type { EntryDraft, MediaDraft, SourceDraft } from './types.js';
import { positive } from './values.js';

/** Most items one feed document may hold (a real feed this long is far over the 5 MB page limit). */
export const MAX_FEED_ITEMS = 10_000;
/** Deepest element nesting a feed may have (a podcast item with media:group is about 6). */
export const MAX_FEED_DEPTH = 32;

/** Whether the first bytes of a document are a feed's root element (after the prolog). */
export function looksLikeFeed(text: string): boolean {
  return /^(?:\s|<\?xml[^>]*\?>|<!--[\s\S]*?-->|<\?xml-stylesheet[^>]*\?>|<!DOCTYPE[^>[]*>)*<(?:rss|feed|(?:[\w.-]+:)?RDF)[\s>]/.test(
    text.replace(/^\uFEFF/, '').slice(0, 4096),
  );
}

export interface ParsedFeed {
  title?: string;
  /** The items of the window asked for, in document order (newest first in most feeds). */
  entries: EntryDraft[];
  /** Whether the document has items past the window. */
  more: boolean;
  /** Items the document lists (counted on its text). */
  total: number;
  /** RFC 5005's `<atom:link rel="next">`: the next page of a paged feed (when it comes before the parser stopped). */
  next?: URL;
}

/** Refusals made on the text, before the parser sees it; the number of items it lists. */
export function checkFeedText(text: string): number {
  if (/<!ENTITY/i.test(text) || /<!DOCTYPE[^>]*\[/i.test(text)) {
    throw new ReelayError(
      'upstream_error',
      'The feed declares XML entities in a DOCTYPE, which this service does not expand.',
    );
  }
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

type Attrs = Record<string, string>;

/** What one item says, as read from its elements (local names: prefixes differ between feeds). */
interface RawItem {
  text: Record<string, string>;
  guidPermalink?: string;
  /** Elements with attributes anywhere in the item, by local name, in order. */
  els: { name: string; parent: string; attrs: Attrs }[];
  groupTitle?: string;
}

/** Stops the parser once the window is read. */
class Enough extends Error {}

const localName = (name: string): string => name.slice(name.indexOf(':') + 1);
const ROOTS = new Set(['rss', 'feed', 'RDF']);
/** Elements whose text an item keeps (direct children of the item). */
const ITEM_TEXT = new Set(['title', 'link', 'guid', 'pubDate', 'date', 'duration', 'id', 'published', 'updated']);
const ITEM_ELEMENTS = new Set(['enclosure', 'link', 'image', 'thumbnail', 'content']);

/**
 * The feed's title, the items from `from` (0-based) to `from + count`, whether more follow, and its
 * next page. Items before the window are skipped unread; parsing stops at the item after it.
 */
export function parseFeed(
  text: string,
  base: URL,
  window: { from: number; count: number } = { from: 0, count: MAX_FEED_ITEMS },
): ParsedFeed {
  const total = checkFeedText(text);
  const stack: string[] = [];
  let root: string | undefined;
  let title: string | undefined;
  let next: URL | undefined;
  let itemDepth = -1;
  let seen = 0;
  let more = false;
  let item: RawItem | undefined;
  let buffer: { key: string; depth: number; text: string } | undefined;
  const raws: RawItem[] = [];

  const parser = new Parser(
    {
      onopentag(name, attrs) {
        const local = localName(name);
        stack.push(local);
        const depth = stack.length;
        if (depth > MAX_FEED_DEPTH)
          throw new ReelayError('upstream_error', `The feed is nested deeper than ${MAX_FEED_DEPTH} elements.`);
        if (depth === 1) {
          if (!ROOTS.has(local))
            throw new ReelayError('upstream_error', 'The feed is invalid: its root element is not rss, RDF or feed.');
          root = local;
          return;
        }
        const parent = stack[depth - 2];
        const isItem =
          itemDepth === -1 && (local === 'item' || local === 'entry') && (parent === 'channel' || parent === root);
        if (isItem) {
          itemDepth = depth;
          seen++;
          if (seen > window.from + window.count) {
            more = true;
            throw new Enough();
          }
          item = seen > window.from ? { text: {}, els: [] } : undefined;
          return;
        }
        if (itemDepth === -1) {
          // The channel's (or Atom feed's) own title and next page.
          const channelLevel = (root === 'feed' && depth === 2) || (parent === 'channel' && depth === 3);
          if (channelLevel && local === 'title' && title === undefined) buffer = { key: 'title', depth, text: '' };
          if (channelLevel && local === 'link' && attrs.rel === 'next' && !next) next = resolved(attrs.href, base);
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
      ontext(data) {
        if (buffer && buffer.text.length < 10_000) buffer.text += data;
      },
      onclosetag() {
        const depth = stack.length;
        if (buffer && buffer.depth === depth) {
          const value = buffer.text.trim();
          if (buffer.key === 'title' && itemDepth === -1) title = value || undefined;
          else if (buffer.key === '#group-title' && item) item.groupTitle = value || undefined;
          else if (item) item.text[buffer.key] = value;
          buffer = undefined;
        }
        if (depth === itemDepth) {
          if (item) raws.push(item);
          item = undefined;
          itemDepth = -1;
        }
        stack.pop();
      },
    },
    { xmlMode: true, decodeEntities: true, recognizeCDATA: true },
  );
  try {
    parser.write(text.replace(/^\uFEFF/, ''));
    parser.end();
  } catch (err) {
    if (!(err instanceof Enough)) throw err;
  }
  if (!root) throw new ReelayError('upstream_error', 'The feed is invalid: it has no root element.');
  const atom = root === 'feed';
  return { title, entries: raws.flatMap((r) => (atom ? atomEntry(r, base) : rssEntry(r, base))), more, total, next };
}

/** An absolute http(s) URL from a feed's text, resolved against the document; undefined otherwise. */
function link(raw: string | undefined, base: URL): string | undefined {
  if (!raw || raw.length > 2048 || !URL.canParse(raw.trim(), base.href)) return undefined;
  const url = new URL(raw.trim(), base);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
}

function resolved(raw: string | undefined, base: URL): URL | undefined {
  const href = link(raw, base);
  return href ? new URL(href) : undefined;
}

/** itunes:duration: seconds, MM:SS or HH:MM:SS. */
export function clockDuration(text: string | undefined): number | undefined {
  const m = text ? /^(?:(?:(\d+):)?(\d{1,2}):)?(\d+(?:\.\d+)?)$/.exec(text.trim()) : null;
  if (!m) return undefined;
  const seconds = Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3]);
  return Number.isFinite(seconds) ? seconds : undefined;
}

/** A feed's date (RFC 822 in RSS, RFC 3339 in Atom) as an ISO date-time. */
function feedDate(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : undefined;
}

/** A file the feed names (enclosure, media:content), as a media item; undefined for other kinds. */
function fileItem(
  url: string | undefined,
  type: string | undefined,
  length: string | undefined,
  base: URL,
): MediaDraft | undefined {
  const href = link(url, base);
  if (!href) return undefined;
  const mime = type?.toLowerCase().split(';')[0].trim() || mimeOfExt(urlExtension(href));
  const kind = kindOfMime(mime);
  if (!kind) return undefined;
  const source: SourceDraft = {
    url: href,
    stream_profile: kind === 'video' ? 'muxed_progressive' : kind === 'audio' ? 'audio_only' : 'image',
    quality: 'original',
    mime_type: mime,
    ext: urlExtension(href) || undefined,
    size: positive(length),
  };
  if (kind === 'audio') Object.assign(source, { has_audio: true, has_video: false });
  return { type: kind, sources: [source] };
}

/** The files an item names: enclosures (RSS), enclosure links (Atom) and media:content anywhere in it. */
function files(raw: RawItem, base: URL, atom: boolean): MediaDraft[] {
  return raw.els.flatMap((e) => {
    const file =
      e.name === 'enclosure' && !atom
        ? fileItem(e.attrs.url, e.attrs.type, e.attrs.length, base)
        : e.name === 'link' && atom && e.attrs.rel === 'enclosure'
          ? fileItem(e.attrs.href, e.attrs.type, e.attrs.length, base)
          : e.name === 'content' && e.attrs.url
            ? fileItem(e.attrs.url, e.attrs.type, e.attrs.fileSize, base)
            : undefined;
    return file ? [file] : [];
  });
}

function thumbnailOf(raw: RawItem, base: URL): string | undefined {
  const image = raw.els.find((e) => e.name === 'image' && e.attrs.href);
  const thumb = raw.els.find((e) => e.name === 'thumbnail' && e.attrs.url);
  return link(image?.attrs.href, base) ?? link(thumb?.attrs.url, base);
}

function rssEntry(raw: RawItem, base: URL): EntryDraft[] {
  const media = files(raw, base, false);
  const guid = raw.text.guid || undefined;
  const permalink = raw.guidPermalink !== 'false' ? link(guid, base) : undefined;
  // The entry's own page; a podcast episode without one is its audio file.
  const url = link(raw.text.link, base) ?? permalink ?? media[0]?.sources[0].url;
  if (!url) return [];
  return [
    {
      url,
      title: raw.text.title || undefined,
      id: guid,
      duration: clockDuration(raw.text.duration),
      thumbnail: thumbnailOf(raw, base),
      upload_date: feedDate(raw.text.pubDate || raw.text.date),
      media: media.length ? media : undefined,
    },
  ];
}

function atomEntry(raw: RawItem, base: URL): EntryDraft[] {
  const media = files(raw, base, true);
  const alternate = raw.els.find(
    (e) => e.name === 'link' && e.parent === 'entry' && (e.attrs.rel ?? 'alternate') === 'alternate' && e.attrs.href,
  );
  const url = link(alternate?.attrs.href, base) ?? media[0]?.sources[0].url;
  if (!url) return [];
  return [
    {
      url,
      title: raw.text.title || raw.groupTitle,
      id: raw.text.id || undefined,
      duration: clockDuration(raw.text.duration),
      thumbnail: thumbnailOf(raw, base),
      upload_date: feedDate(raw.text.published || raw.text.updated),
      media: media.length ? media : undefined,
    },
  ];
}
