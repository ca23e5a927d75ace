// OpenGraph (https://ogp.me): og:video, og:audio and og:image are structured properties read in
// document order, so several og:video tags give several videos, each with its own :secure_url,
// :type, :width and :height. og:video often names a player page or a Flash file rather than the
// file itself; like yt-dlp we keep only what is typed or named as media.
import type { MediaType } from '@reelay/contracts';
import { findSource, type Candidate } from './candidate.js';
import { parseDuration, toNumber } from './labels.js';
import { positiveInt } from './values.js';
import { metaFirst, type MetaTag, type PageInfo } from './page.js';

type Root = 'og:video' | 'og:audio' | 'og:image';

/** One og:video (or og:audio, og:image) with its sub-properties: '' is the root value. */
type Group = Partial<Record<'' | 'url' | 'secure_url' | 'type' | 'width' | 'height', string>>;

const SUB_KEYS = new Set(['url', 'secure_url', 'type', 'width', 'height']);

/**
 * Splits the meta tags of one root into groups. A root value starts a new group unless the open one
 * has none yet (sites write :secure_url before og:video too); a sub-property joins the open group
 * unless that group already has it, which means the page skipped the root of the next one.
 */
export function ogGroups(meta: readonly MetaTag[], root: Root): Group[] {
  const groups: Group[] = [];
  const prefix = `${root}:`;
  for (const { key, value } of meta) {
    let sub: keyof Group;
    if (key === root) sub = '';
    else if (key.startsWith(prefix) && SUB_KEYS.has(key.slice(prefix.length)))
      sub = key.slice(prefix.length) as keyof Group;
    else continue;
    const open = groups[groups.length - 1];
    if (open && open[sub] === undefined) open[sub] = value;
    else groups.push({ [sub]: value });
  }
  return groups;
}

/** The URL a group names: https first, then the root, then :url (yt-dlp's _og_search_video_url order). */
function groupUrls(group: Group): string[] {
  return [group.secure_url, group[''], group.url].filter((u): u is string => !!u?.trim());
}

function groupCandidate(group: Group, base: URL, declared: MediaType, strict: boolean): Candidate | undefined {
  const hints = {
    type: group.type,
    declared,
    strict,
    width: positiveInt(toNumber(group.width)),
    height: positiveInt(toNumber(group.height)),
  };
  for (const raw of groupUrls(group)) {
    const source = findSource(raw, base, hints);
    if (source) return { method: 'opengraph', type: declared, sources: [source] };
  }
  return undefined;
}

/** The first og:image, as a thumbnail for whatever media the page has. */
export function ogImage(page: PageInfo, base: URL): string | undefined {
  for (const group of ogGroups(page.meta, 'og:image')) {
    const image = groupCandidate(group, base, 'image', false);
    if (image) return image.sources[0].url;
  }
  return undefined;
}

/**
 * What the page says about its media besides the files: og:description (or the description meta),
 * the author meta (article:author only when it is a name, not a profile URL), and a publication
 * date (og:video:release_date, article:published_time, or microdata uploadDate).
 */
export function pageDescribing(page: PageInfo): Pick<Candidate, 'author' | 'upload_date' | 'description'> {
  const out: Pick<Candidate, 'author' | 'upload_date' | 'description'> = {};
  const first = (...keys: string[]) =>
    keys.map((k) => metaFirst(page, k)?.replace(/\s+/g, ' ').trim()).find((v) => !!v);
  const description = first('og:description', 'description', 'twitter:description');
  if (description) out.description = description;
  const author = [first('author'), first('article:author'), first('video:director')].find(
    (a) => a && !/^https?:\/\//.test(a),
  );
  if (author) out.author = author;
  const date = first(
    'og:video:release_date',
    'video:release_date',
    'article:published_time',
    'uploaddate',
    'datepublished',
  );
  if (date) out.upload_date = date;
  return out;
}

export function ogTitle(page: PageInfo): string | undefined {
  return metaFirst(page, 'og:title');
}

/** og:video and og:audio items; the page's duration and first og:image go to the first of them. */
export function openGraphMedia(page: PageInfo, base: URL): Candidate[] {
  const items: Candidate[] = [];
  for (const [root, kind] of [
    ['og:video', 'video'],
    ['og:audio', 'audio'],
  ] as const) {
    for (const group of ogGroups(page.meta, root)) {
      const item = groupCandidate(group, base, kind, true);
      if (item) items.push(item);
    }
  }
  if (items.length) {
    const keys =
      items[0].type === 'video' ? ['og:video:duration', 'video:duration'] : ['og:audio:duration', 'music:duration'];
    const duration = parseDuration(metaFirst(page, keys[0]) ?? metaFirst(page, keys[1]));
    if (duration !== undefined) items[0].duration = duration;
    items[0].thumbnail = ogImage(page, base);
  }
  return items;
}

/** og:image pictures, one item each: the page's media when it has no video or audio. */
export function openGraphImages(page: PageInfo, base: URL): Candidate[] {
  const items: Candidate[] = [];
  for (const group of ogGroups(page.meta, 'og:image')) {
    const item = groupCandidate(group, base, 'image', false);
    if (item) items.push(item);
  }
  return items;
}
