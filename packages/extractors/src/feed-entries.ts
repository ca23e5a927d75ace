// A feed's items as collection entries: an item's page (or, for a podcast episode without one, its
// audio file), its title, id, date, duration and thumbnail, and the files it names (enclosures,
// media:content) as media. @reelay/manifests reads the feed (RSS 2.0, RSS 1.0, Atom) under its limits.
import { feedLink, readFeed, type FeedItem } from '@reelay/manifests';
import { urlExtension } from './document.js';
import { kindOfMime, mimeOfExt } from './media-types.js';
import type { EntryDraft, MediaDraft, SourceDraft } from './types.js';
import { positive } from './values.js';

export interface ParsedFeed {
  title?: string;
  /** The items of the window asked for, in document order (newest first in most feeds). */
  entries: EntryDraft[];
  /** Whether the document has items past the window. */
  more: boolean;
  /** Items the document lists (counted on its text). */
  total: number;
  /** RFC 5005's `<atom:link rel="next">`: the next page of a paged feed (when it comes before the reader stopped). */
  next?: URL;
}

/**
 * The feed's title, the entries of the items from `from` (0-based) to `from + count`, whether more
 * follow, and its next page.
 */
export function parseFeed(text: string, base: URL, window?: { from: number; count: number }): ParsedFeed {
  const feed = readFeed(text, base, window);
  const atom = feed.root === 'feed';
  return {
    title: feed.title,
    entries: feed.items.flatMap((r) => (atom ? atomEntry(r, base) : rssEntry(r, base))),
    more: feed.more,
    total: feed.total,
    next: feed.next,
  };
}

/** An absolute http(s) URL from a feed's text, resolved against the document; undefined otherwise. */
function link(raw: string | undefined, base: URL): string | undefined {
  return feedLink(raw, base)?.href;
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
function files(raw: FeedItem, base: URL, atom: boolean): MediaDraft[] {
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

function thumbnailOf(raw: FeedItem, base: URL): string | undefined {
  const image = raw.els.find((e) => e.name === 'image' && e.attrs.href);
  const thumb = raw.els.find((e) => e.name === 'thumbnail' && e.attrs.url);
  return link(image?.attrs.href, base) ?? link(thumb?.attrs.url, base);
}

function rssEntry(raw: FeedItem, base: URL): EntryDraft[] {
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

function atomEntry(raw: FeedItem, base: URL): EntryDraft[] {
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
