// RSS 2.0, RSS 1.0 and Atom feeds (podcasts among them) read into collection entries, under the
// bounds DASH manifests have: no DTD entities, a nesting limit, and a count of items taken on the
// text before anything is parsed, so a feed of 10^5 items never becomes 10^5 objects.
import { ReelayError } from '@reelay/contracts';
import { XMLParser } from 'fast-xml-parser';
import { urlExtension } from './document.js';
import { kindOfMime, mimeOfExt } from './media-types.js';
import type { EntryDraft, MediaDraft, SourceDraft } from './types.js';
import { arr, obj, positive, str, type Json } from './values.js';

/** Most items one feed document may hold (a real feed this long is far over the 5 MB page limit). */
export const MAX_FEED_ITEMS = 10_000;
/** Deepest element nesting a feed may have (a podcast item with media:group is about 6). */
export const MAX_FEED_DEPTH = 32;

const REPEATED = new Set(['item', 'entry', 'link', 'enclosure', 'content', 'thumbnail', 'category']);

const parser = new XMLParser({
  processEntities: true,
  htmlEntities: false,
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  // Prefixes differ between feeds (itunes:, media:, atom:); only local names matter here.
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  maxNestedTags: MAX_FEED_DEPTH,
  isArray: (name, _path, _leaf, isAttribute) => !isAttribute && REPEATED.has(name),
});

/** Whether the first bytes of a document are a feed's root element (after the prolog). */
export function looksLikeFeed(text: string): boolean {
  return /^(?:\s|<\?xml[^>]*\?>|<!--[\s\S]*?-->|<\?xml-stylesheet[^>]*\?>|<!DOCTYPE[^>[]*>)*<(?:rss|feed|(?:[\w.-]+:)?RDF)[\s>]/.test(text.replace(/^\uFEFF/, '').slice(0, 4096));
}

export interface ParsedFeed {
  title?: string;
  /** Every item of the document, in its order (newest first in most feeds). */
  entries: EntryDraft[];
  /** RFC 5005's `<atom:link rel="next">`: the next page of a paged feed. */
  next?: URL;
}

/** Refusals made on the text, before the parser sees it. */
export function checkFeedText(text: string): void {
  if (/<!ENTITY/i.test(text) || /<!DOCTYPE[^>]*\[/i.test(text)) {
    throw new ReelayError('upstream_error', 'The feed declares XML entities in a DOCTYPE, which this service does not expand.');
  }
  const items = /<(?:[\w.-]+:)?(?:item|entry)[\s>/]/g;
  let count = 0;
  while (items.exec(text)) {
    if (++count > MAX_FEED_ITEMS) throw new ReelayError('upstream_error', `The feed lists more than ${MAX_FEED_ITEMS} items, the most this service reads in one document.`);
  }
}

export function parseFeed(text: string, base: URL): ParsedFeed {
  checkFeedText(text);
  let doc: Json | undefined;
  try {
    doc = obj(parser.parse(text.replace(/^\uFEFF/, '').trimStart(), true));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new ReelayError('upstream_error', `The feed is not valid XML or is nested deeper than ${MAX_FEED_DEPTH} elements (${why.slice(0, 200)}).`, { cause: err });
  }
  const rss = obj(doc?.rss);
  const channel = obj(rss?.channel) ?? obj(obj(doc?.RDF)?.channel);
  if (channel) {
    const items = rss ? arr(channel.item) : arr(obj(doc?.RDF)?.item);
    return { title: text1(channel.title), entries: items.flatMap((i) => rssEntry(obj(i), base)), next: nextLink(channel, base) };
  }
  const feed = obj(doc?.feed);
  if (feed) return { title: text1(feed.title), entries: arr(feed.entry).flatMap((e) => atomEntry(obj(e), base)), next: nextLink(feed, base) };
  throw new ReelayError('upstream_error', 'The feed is invalid: its root element is not rss, RDF or feed.');
}

/** An element's text, whether the parser gave a string or an object with #text (attributes beside it). */
function text1(v: unknown): string | undefined {
  const first = Array.isArray(v) ? v[0] : v;
  if (typeof first === 'string') return first.trim() || undefined;
  const t = obj(first)?.['#text'];
  return typeof t === 'string' ? t.trim() || undefined : undefined;
}

function attr(v: unknown, name: string): string | undefined {
  return str(obj(v)?.[`@${name}`])?.trim();
}

/** An absolute http(s) URL from a feed's text, resolved against the document; undefined otherwise. */
function link(raw: string | undefined, base: URL): string | undefined {
  if (!raw || raw.length > 2048 || !URL.canParse(raw.trim(), base.href)) return undefined;
  const url = new URL(raw.trim(), base);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
}

function nextLink(node: Json, base: URL): URL | undefined {
  const next = arr(node.link).find((l) => attr(l, 'rel') === 'next');
  const href = link(attr(next, 'href'), base);
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
function fileItem(url: string | undefined, type: string | undefined, length: string | undefined, base: URL): MediaDraft | undefined {
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

/** Every media:content, directly under the item or in media:group. */
function mediaContents(node: Json): Json[] {
  const direct = arr(node.content).flatMap((c) => (obj(c) && attr(c, 'url') ? [obj(c)!] : []));
  const grouped = arr(obj(node.group)?.content).flatMap((c) => (obj(c) && attr(c, 'url') ? [obj(c)!] : []));
  return [...direct, ...grouped];
}

function thumbnailOf(node: Json, base: URL): string | undefined {
  const candidates = [attr(node.image, 'href'), attr(arr(node.thumbnail)[0], 'url'), attr(arr(obj(node.group)?.thumbnail)[0], 'url')];
  for (const c of candidates) {
    const href = link(c, base);
    if (href) return href;
  }
  return undefined;
}

function rssEntry(item: Json | undefined, base: URL): EntryDraft[] {
  if (!item) return [];
  const media: MediaDraft[] = [];
  for (const e of arr(item.enclosure)) {
    const file = fileItem(attr(e, 'url'), attr(e, 'type'), attr(e, 'length'), base);
    if (file) media.push(file);
  }
  for (const c of mediaContents(item)) {
    const file = fileItem(attr(c, 'url'), attr(c, 'type'), attr(c, 'fileSize'), base);
    if (file) media.push(file);
  }
  const guid = text1(item.guid);
  const permalink = attr(item.guid, 'isPermaLink') !== 'false' ? link(guid, base) : undefined;
  // The entry's own page; a podcast episode without one is its audio file.
  const url = link(text1(arr(item.link)[0]), base) ?? permalink ?? media[0]?.sources[0].url;
  if (!url) return [];
  return [
    {
      url,
      title: text1(item.title),
      id: guid,
      duration: clockDuration(text1(item.duration)),
      thumbnail: thumbnailOf(item, base),
      upload_date: feedDate(text1(item.pubDate) ?? text1(item.date)),
      media: media.length ? media : undefined,
    },
  ];
}

function atomEntry(entry: Json | undefined, base: URL): EntryDraft[] {
  if (!entry) return [];
  const links = arr(entry.link);
  const media: MediaDraft[] = [];
  for (const l of links) {
    if (attr(l, 'rel') !== 'enclosure') continue;
    const file = fileItem(attr(l, 'href'), attr(l, 'type'), attr(l, 'length'), base);
    if (file) media.push(file);
  }
  for (const c of mediaContents(entry)) {
    const file = fileItem(attr(c, 'url'), attr(c, 'type'), attr(c, 'fileSize'), base);
    if (file) media.push(file);
  }
  const alternate = links.find((l) => (attr(l, 'rel') ?? 'alternate') === 'alternate');
  const url = link(attr(alternate, 'href'), base) ?? media[0]?.sources[0].url;
  if (!url) return [];
  return [
    {
      url,
      title: text1(entry.title) ?? text1(obj(entry.group)?.title),
      id: text1(entry.id),
      duration: clockDuration(text1(entry.duration)),
      thumbnail: thumbnailOf(entry, base),
      upload_date: feedDate(text1(entry.published) ?? text1(entry.updated)),
      media: media.length ? media : undefined,
    },
  ];
}
