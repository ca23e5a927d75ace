// schema.org JSON-LD: VideoObject, AudioObject and ImageObject (and a typed MediaObject) found at
// the top level, in arrays, in @graph, or one property down from a page-level object (an Article's
// video, image or associatedMedia; a WebPage's mainEntity; an ItemList's entries). contentUrl is
// the file; embedUrl is a player page, which yt-dlp ignores as a media URL too.
import type { MediaType } from '@reelay/contracts';
import { addSource, findSource, resolveUrl, type Candidate, type FoundSource } from './candidate.js';
import { mimeOfExt } from './media-types.js';
import { cleanText, parseBitrate, parseDuration, parseSize, toNumber } from './labels.js';
import { positiveInt } from './values.js';

type Obj = Record<string, unknown>;

const MEDIA_KIND: Record<string, MediaType | null> = {
  VideoObject: 'video',
  VideoObjectSnapshot: 'video',
  MusicVideoObject: 'video',
  AudioObject: 'audio',
  AudioObjectSnapshot: 'audio',
  ImageObject: 'image',
  ImageObjectSnapshot: 'image',
  MediaObject: null, // its kind comes from encodingFormat or the URL
};

// Where page-level objects keep their media. Deliberately not publisher/author/logo: every page's
// Organization logo is an ImageObject, and it is not the page's picture.
const MEDIA_PROPS = [
  'video',
  'audio',
  'image',
  'associatedMedia',
  'mainEntity',
  'primaryImageOfPage',
  'hasPart',
  'subjectOf',
  'itemListElement',
  'workExample',
];

const MAX_ITEMS = 200;
/**
 * Levels of arrays, @graph and ListItem wrappers followed, at most: real pages nest a few; a page
 * of 10^5 nested arrays would otherwise overflow the stack (JSON.parse itself takes any depth).
 */
const MAX_NESTING = 32;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);

/** The media kind of a node's @type (which may be an array or a full IRI), undefined for non-media. */
function mediaKindOf(node: Obj): MediaType | null | undefined {
  for (const t of list(node['@type'])) {
    if (typeof t !== 'string') continue;
    const name = t.slice(t.search(/[^/:#]*$/));
    if (name in MEDIA_KIND) return MEDIA_KIND[name];
  }
  return undefined;
}

function isListItem(node: Obj): boolean {
  return list(node['@type']).some((t) => t === 'ListItem' || (typeof t === 'string' && t.endsWith('/ListItem')));
}

/** encodingFormat as a MIME type: "video/mp4" stays, "mp4" or ".MP4" becomes video/mp4. */
function formatType(value: unknown): string | undefined {
  if (typeof value !== 'string' || !value.trim()) return undefined;
  return value.includes('/') ? value : mimeOfExt(value.trim());
}

/** schema.org bitrate is free text; bare numbers are kbps when small (as sites write them), bps when large. */
function bitrateOf(value: unknown): number | undefined {
  const n =
    typeof value === 'number' || (typeof value === 'string' && /^\s*\d+(?:\.\d+)?\s*$/.test(value))
      ? toNumber(value)
      : undefined;
  if (n !== undefined) return n > 0 ? (n < 50_000 ? n * 1000 : n) : undefined;
  return typeof value === 'string' ? parseBitrate(value) : undefined;
}

/** A picture's URL from a string, an array or an ImageObject. */
function imageUrl(value: unknown, base: URL): string | undefined {
  for (const v of list(value)) {
    const raw = typeof v === 'string' ? v : isObj(v) ? (v.contentUrl ?? v.url) : undefined;
    const url = typeof raw === 'string' ? resolveUrl(raw, base) : undefined;
    if (url) return url;
  }
  return undefined;
}

function addFiles(
  sources: FoundSource[],
  node: Obj,
  declared: MediaType | undefined,
  base: URL,
  pageUrl: string,
): void {
  const hints = {
    type: formatType(node.encodingFormat ?? node.fileFormat),
    declared,
    width: positiveInt(toNumber(node.width)),
    height: positiveInt(toNumber(node.height)),
    bitrate: bitrateOf(node.bitrate),
    size: parseSize(node.contentSize),
  };
  // contentUrl is the file by definition, but sites also put their watch page there: video and
  // audio URLs must show they are media. An ImageObject's `url` is often the picture too.
  const urls: [unknown, boolean][] = list(node.contentUrl).map((u) => [u, declared !== 'image']);
  if (declared === 'image') urls.push(...list(node.url).map((u): [unknown, boolean] => [u, true]));
  for (const [raw, strict] of urls) {
    if (typeof raw !== 'string' || resolveUrl(raw, base) === pageUrl) continue;
    const source = findSource(raw, base, { ...hints, strict: strict || declared === undefined });
    if (source) addSource(sources, source);
  }
}

function mediaCandidate(node: Obj, kind: MediaType | null, base: URL, pageUrl: string): Candidate | undefined {
  const declared = kind ?? undefined;
  const sources: FoundSource[] = [];
  addFiles(sources, node, declared, base, pageUrl);
  // A video's `encoding` (alias associatedMedia) lists other encodings of the same video.
  if (declared === 'video' || declared === 'audio') {
    for (const enc of [...list(node.encoding), ...list(node.associatedMedia)])
      if (isObj(enc)) addFiles(sources, enc, declared, base, pageUrl);
  }
  if (!sources.length) return undefined;
  const item: Candidate = { method: 'json_ld', type: declared ?? sources[0].kind, sources };
  const thumbnail = imageUrl(node.thumbnailUrl, base) ?? imageUrl(node.thumbnail, base);
  if (thumbnail && item.type !== 'image') item.thumbnail = thumbnail;
  const duration = parseDuration(node.duration);
  if (duration !== undefined) item.duration = duration;
  const title = cleanText(
    typeof node.name === 'string' ? node.name : typeof node.headline === 'string' ? node.headline : undefined,
  );
  if (title) item.title = title;
  Object.assign(item, describing(node));
  return item;
}

/** A person's or organisation's name from a string, an object with `name`, or a list of either. */
function nameOf(value: unknown): string | undefined {
  for (const v of list(value)) {
    const name = cleanText(typeof v === 'string' ? v : isObj(v) && typeof v.name === 'string' ? v.name : undefined);
    if (name && !/^https?:\/\//.test(name)) return name;
  }
  return undefined;
}

/** A media object's author (or creator), upload date (or publication date) and description. */
function describing(node: Obj): Pick<Candidate, 'author' | 'upload_date' | 'description'> {
  const out: Pick<Candidate, 'author' | 'upload_date' | 'description'> = {};
  const author = nameOf(node.author) ?? nameOf(node.creator);
  if (author) out.author = author;
  const date = [node.uploadDate, node.datePublished, node.dateCreated].find(
    (d): d is string => typeof d === 'string' && d.trim() !== '',
  );
  if (date) out.upload_date = date.trim();
  const description = cleanText(typeof node.description === 'string' ? node.description : undefined);
  if (description) out.description = description;
  return out;
}

/** Every media item in the page's JSON-LD blocks, in document order. */
export function jsonLdCandidates(blocks: readonly unknown[], base: URL, pageUrl: string): Candidate[] {
  const items: Candidate[] = [];
  // depth counts page-level properties followed (one); nesting counts every level of the walk.
  const visit = (value: unknown, depth: number, nesting: number): void => {
    if (items.length >= MAX_ITEMS || nesting > MAX_NESTING) return;
    if (Array.isArray(value)) {
      for (const v of value) visit(v, depth, nesting + 1);
      return;
    }
    if (!isObj(value)) return;
    if (Array.isArray(value['@graph'])) visit(value['@graph'], depth, nesting + 1);
    const kind = mediaKindOf(value);
    if (kind !== undefined) {
      const item = mediaCandidate(value, kind, base, pageUrl);
      if (item) items.push(item);
      return;
    }
    // ListItem is a wrapper: its item counts as the list's own entry.
    if (isListItem(value)) return visit(value.item, depth, nesting + 1);
    if (depth >= 1) return;
    for (const prop of MEDIA_PROPS) if (value[prop] !== undefined) visit(value[prop], depth + 1, nesting + 1);
  };
  for (const block of blocks) visit(block, 0, 0);
  return items;
}
