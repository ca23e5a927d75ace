// The HTML page extractor: parses the page once, asks each method (JSON-LD, HTML5 elements,
// Twitter card, OpenGraph — in that priority) for candidate items, merges candidates that share a
// file, expands HLS/DASH manifests into their variants, and drafts the result. Every source is
// recorded with the page as Referer, as yt-dlp sends it, because many CDNs check it.
import { ReelayError } from '@reelay/contracts';
import { nothingFound } from './no-media.js';
import { splitCodecs } from '@reelay/manifests';
import { addSource, resolveUrl, type Candidate, type FoundSource, type PageMethod } from './candidate.js';
import type { FetchedDocument } from './document.js';
import { html5Candidates } from './html5.js';
import { jsonLdCandidates } from './jsonld.js';
import { cleanText } from './labels.js';
import { expandManifest } from './manifest.js';
import { ogImage, ogTitle, openGraphImages, openGraphMedia, pageDescribing } from './opengraph.js';
import { HTML_TYPES } from './media-types.js';
import { parsePage, type PageInfo } from './page.js';
import { twitterCandidates, twitterImage, twitterTitle } from './twitter.js';
import type { DocumentExtractor, ExtractContext, MediaDraft, ResultDraft, SourceDraft } from './types.js';

/** Subtitle tracks an item of a page gathers, at most, before the result keeps its best 100. */
const MAX_PAGE_TRACKS = 1000;

/** Manifests fetched per page, at most: each is a request to the origin. */
export const MAX_MANIFESTS = 4;

// Types origins send when they do not know (or lie): the first bytes decide.
const UNTYPED = new Set([
  '',
  'text/plain',
  'application/octet-stream',
  'binary/octet-stream',
  'application/binary',
  'application/force-download',
  'application/x-download',
]);
const HTML_START = /^(?:\s|<!--[\s\S]*?-->)*<(?:!doctype\s+html|html|head|meta)[\s>/]/i;

export function looksLikeHtml(head: Buffer): boolean {
  // \s also matches a byte order mark (U+FEFF).
  return HTML_START.test(head.toString('utf8'));
}

/** A candidate item after merging: the method that found it first names it. */
type Item = Candidate;

/**
 * Joins candidates that share any source URL into one item, keeping the first one's position, and
 * the first non-empty thumbnail, duration and title.
 */
export function mergeCandidates(candidates: readonly Candidate[]): Item[] {
  const items: (Item | undefined)[] = [];
  const owner = new Map<string, number>();
  const absorb = (into: Item, from: Candidate) => {
    for (const s of from.sources) addSource(into.sources, s);
    into.thumbnail ??= from.thumbnail;
    into.duration ??= from.duration;
    into.title ??= from.title;
    into.author ??= from.author;
    into.upload_date ??= from.upload_date;
    into.description ??= from.description;
    // Appended in place, and bounded: a page of thousands of elements sharing one file must not
    // copy a growing list at each merge.
    for (const t of from.subtitles ?? []) {
      if ((into.subtitles ??= []).length >= MAX_PAGE_TRACKS) break;
      into.subtitles.push(t);
    }
  };
  for (const candidate of candidates) {
    const hits = [
      ...new Set(candidate.sources.map((s) => owner.get(s.url)).filter((i): i is number => i !== undefined)),
    ].sort((a, b) => a - b);
    let target: number;
    if (hits.length === 0) target = items.push({ method: candidate.method, type: candidate.type, sources: [] }) - 1;
    else target = hits[0];
    const item = items[target]!;
    absorb(item, candidate);
    // A candidate can bridge two earlier items (og and html5 each found one of its files).
    for (const other of hits.slice(1)) {
      absorb(item, items[other]!);
      items[other] = undefined;
    }
    for (const s of item.sources) owner.set(s.url, target);
  }
  return items.filter((i): i is Item => i !== undefined);
}

/** A page's found source as a result source (exported for the yt-dlp differential test). */
export function toDraft(s: FoundSource, headers: Record<string, string>): SourceDraft {
  const draft: SourceDraft = { url: s.url, stream_profile: 'muxed_progressive', headers: { ...headers } };
  if (s.kind === 'image') draft.stream_profile = 'image';
  else if (s.kind === 'audio')
    Object.assign(draft, { stream_profile: 'audio_only', has_audio: true, has_video: false });
  else if (s.codecs) {
    // A declared codecs list naming only one kind of track tells us the file has only that track.
    const { video, audio } = splitCodecs(s.codecs);
    if (video.length && !audio.length)
      Object.assign(draft, { stream_profile: 'video_only', has_audio: false, has_video: true });
    else if (audio.length && !video.length)
      Object.assign(draft, { stream_profile: 'audio_only', has_audio: true, has_video: false });
  }
  for (const key of ['width', 'height', 'bitrate', 'codecs', 'size'] as const)
    if (s[key] !== undefined) Object.assign(draft, { [key]: s[key] });
  if (s.mime) draft.mime_type = s.mime;
  if (s.ext) draft.ext = s.ext;
  return draft;
}

interface Expansion {
  drafts: Map<string, MediaDraft[]>;
  errors: unknown[];
}

/** Fetches the first MAX_MANIFESTS distinct manifests in parallel; failures are logged and kept. */
async function expandManifests(
  items: readonly Item[],
  ctx: ExtractContext,
  headers: Record<string, string>,
): Promise<Expansion> {
  const urls = [...new Set(items.flatMap((i) => i.sources.filter((s) => s.manifest).map((s) => s.url)))];
  if (urls.length > MAX_MANIFESTS)
    ctx.log?.('page manifests beyond the limit skipped', { skipped: urls.slice(MAX_MANIFESTS) });
  const chosen = urls.slice(0, MAX_MANIFESTS);
  const settled = await Promise.allSettled(chosen.map((url) => expandManifest(url, ctx, { ...headers })));
  const out: Expansion = { drafts: new Map(), errors: [] };
  settled.forEach((r, i) => {
    if (r.status === 'fulfilled') out.drafts.set(chosen[i], r.value);
    else {
      ctx.log?.('page manifest skipped', {
        url: chosen[i],
        error: r.reason instanceof Error ? r.reason.message : String(r.reason),
      });
      out.errors.push(r.reason);
    }
  });
  return out;
}

interface Drafted {
  method: PageMethod;
  media: MediaDraft;
}

const NO_EXPANSION: Expansion = { drafts: new Map(), errors: [] };

function draftItem(item: Item, expansion: Expansion, headers: Record<string, string>): Drafted | undefined {
  const sources: SourceDraft[] = [];
  const media: MediaDraft = { type: item.type, sources };
  // An item known only through its manifests is what the first manifest says (an audio-only HLS, say).
  let retype = item.sources.every((s) => s.manifest);
  for (const s of item.sources) {
    if (!s.manifest) {
      sources.push(toDraft(s, headers));
      continue;
    }
    // All of a manifest's items are renditions of this one page item (the page named one file).
    for (const variant of expansion.drafts.get(s.url) ?? []) {
      sources.push(...variant.sources);
      if (retype) [media.type, retype] = [variant.type, false];
      media.thumbnail ??= variant.thumbnail;
      media.duration ??= variant.duration;
    }
  }
  if (!sources.length) return undefined;
  // The page's own tracks first, then those of its manifests; every one is fetched with the page as Referer.
  const subtitles = [
    ...(item.subtitles ?? []),
    ...item.sources.flatMap((s) =>
      (s.manifest ? (expansion.drafts.get(s.url) ?? []) : []).flatMap((v) => v.subtitles ?? []),
    ),
  ];
  if (subtitles.length) media.subtitles = subtitles.map((t) => ({ ...t, headers: { ...headers, ...t.headers } }));
  if (item.thumbnail) media.thumbnail = item.thumbnail;
  if (item.duration !== undefined) media.duration = item.duration;
  if (item.title) media.title = item.title;
  if (item.author) media.author = item.author;
  if (item.upload_date) media.upload_date = item.upload_date;
  if (item.description) media.description = item.description;
  return { method: item.method, media };
}

/** og:title, then JSON-LD's name, then twitter:title, then <title>. */
function pageTitle(page: PageInfo, jsonLd: readonly Candidate[]): string | undefined {
  return (
    cleanText(ogTitle(page)) ??
    jsonLd.find((c) => c.title)?.title ??
    cleanText(twitterTitle(page)) ??
    cleanText(page.title)
  );
}

function baseOf(page: PageInfo, finalUrl: URL): URL {
  const base = resolveUrl(page.baseHref, finalUrl);
  return base ? new URL(base) : finalUrl;
}

export async function extractPage(doc: FetchedDocument, ctx: ExtractContext): Promise<ResultDraft> {
  const page = parsePage(await doc.text());
  if (page.jsonLdErrors)
    ctx.log?.('invalid JSON-LD blocks skipped', { count: page.jsonLdErrors, url: doc.finalUrl.href });
  const base = baseOf(page, doc.finalUrl);
  const headers = { referer: doc.finalUrl.href };

  const jsonLd = jsonLdCandidates(page.jsonLd, base, doc.finalUrl.href);
  const found = [
    ...jsonLd,
    ...html5Candidates(page.media, base),
    ...twitterCandidates(page, base),
    ...openGraphMedia(page, base),
  ];
  const av = mergeCandidates(found.filter((c) => c.type !== 'image'));
  let drafted: Drafted[] = [];
  let failure: unknown;
  if (av.length) {
    const expansion = await expandManifests(av, ctx, headers);
    drafted = av.map((item) => draftItem(item, expansion, headers)).filter((d): d is Drafted => d !== undefined);
    failure = expansion.errors[0];
  } else {
    // Pictures are the page's media only when it has no video or audio. og:image is the fallback
    // for JSON-LD's pictures: both usually name the same picture in different crops.
    const jsonLdImages = found.filter((c) => c.type === 'image');
    const images = mergeCandidates(jsonLdImages.length ? jsonLdImages : openGraphImages(page, base));
    drafted = images.map((item) => draftItem(item, NO_EXPANSION, headers)).filter((d): d is Drafted => d !== undefined);
  }
  if (!drafted.length) {
    if (failure instanceof ReelayError) throw failure;
    if (failure) throw new ReelayError('upstream_error', "The page's manifest could not be read.", { cause: failure });
    throw nothingFound();
  }
  const first = drafted[0].media;
  if (first.type !== 'image') first.thumbnail ??= ogImage(page, base) ?? twitterImage(page, base);
  // The page's own description, author and date belong to its main (first) item.
  const described = pageDescribing(page);
  first.author ??= described.author;
  first.upload_date ??= described.upload_date;
  first.description ??= described.description;
  return {
    url: doc.url.href,
    platform: 'generic',
    extract_profile: drafted[0].method,
    title: pageTitle(page, jsonLd),
    media: drafted.map((d) => d.media),
  };
}

export const htmlPage: DocumentExtractor = {
  name: 'html_page',
  detect: (doc) => HTML_TYPES.has(doc.contentType) || (UNTYPED.has(doc.contentType) && looksLikeHtml(doc.head)),
  extract: extractPage,
};
