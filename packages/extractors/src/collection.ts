// A collection page as an ExtractResult: entries numbered from where the cursor left off, cut at a
// page and at MAX_COLLECTION_ENTRIES, entries and files the download would refuse dropped, the files
// a feed names recorded like any other source, and the next page's start handed back for signing.
import {
  COLLECTION_PAGE_SIZE,
  ExtractResultSchema,
  ReelayError,
  type CollectionEntry,
  type ExtractResult,
  type MediaItem,
} from '@reelay/contracts';
import type { Egress } from '@reelay/egress';
import { compareSources, describing, fallbackTitle, sourceRecord, toSource, unfetchable } from './result.js';
import type {
  EntryDraft,
  ExtractContext,
  Extraction,
  MediaDraft,
  ResultDraft,
  SourceDraft,
  SourceRecord,
} from './types.js';
import { nonNegative } from './values.js';

/** The config default of MAX_COLLECTION_ENTRIES, for callers that pass none. */
export const DEFAULT_MAX_COLLECTION_ENTRIES = 200;
/** Most pages one collection is followed through: a run of empty pages ends here. */
export const MAX_COLLECTION_PAGES = 50;

export function buildCollection(
  draft: ResultDraft,
  extractor: string,
  ctx: Pick<ExtractContext, 'egress' | 'page' | 'maxEntries'>,
): Extraction {
  const collection = draft.collection!;
  const before = ctx.page?.index ?? 0;
  const pageNo = (ctx.page?.page ?? 0) + 1;
  const max = ctx.maxEntries ?? DEFAULT_MAX_COLLECTION_ENTRIES;
  if (collection.next !== undefined && ctx.page && collection.next === ctx.page.state) {
    throw new ReelayError('upstream_error', "The collection's next page is the page itself: it would never end.");
  }
  const room = Math.max(0, Math.min(COLLECTION_PAGE_SIZE, max - before));
  // An entry that is the collection itself would list it again inside itself, for ever.
  const listed = collection.entries.filter((e) => fetchable(e.url, ctx.egress) && !sameResource(e.url, draft.url));
  const kept = listed.slice(0, room);
  const more = collection.next !== undefined || listed.length > kept.length;
  const truncated = more && before + kept.length >= max;
  if (more && !truncated && kept.length < listed.length) {
    // An extractor listed more than a page: its own paging is broken, and entries would be lost.
    throw new ReelayError(
      'internal_error',
      `Extractor ${draft.extract_profile} listed more than ${COLLECTION_PAGE_SIZE} entries on one page.`,
    );
  }
  if (more && !truncated && pageNo >= MAX_COLLECTION_PAGES) {
    throw new ReelayError(
      'upstream_error',
      `The collection goes on past ${MAX_COLLECTION_PAGES} pages (${before + kept.length} entries listed): it looks endless, so this service stops there.`,
    );
  }

  const records: SourceRecord[] = [];
  const seen = new Set<string>();
  const entries = kept.map((e, i) => toEntry(e, before + i + 1, draft.url, ctx.egress, seen, records));
  const title = (draft.title?.trim() || fallbackTitle(draft.url)).slice(0, 500);
  const result: ExtractResult = {
    url: draft.url,
    platform: draft.platform,
    extract_profile: draft.extract_profile,
    content_type: 'collection',
    title,
    media: [],
    collection: { kind: collection.kind },
    entries,
  };
  const count = collection.entry_count;
  if (count !== undefined && Number.isSafeInteger(count) && count >= 0) result.collection!.entry_count = count;
  if (truncated) result.collection!.truncated = true;
  const checked = ExtractResultSchema.safeParse(result);
  if (!checked.success) {
    throw new ReelayError(
      'internal_error',
      `Extractor ${draft.extract_profile} produced an invalid collection: ${checked.error.issues[0]?.message}`,
    );
  }
  const extraction: Extraction = { result, records, subtitles: [] };
  if (more && !truncated) {
    // Entries cut at the end of a page come first on the next; otherwise the extractor's next page.
    extraction.next = { extractor, state: collection.next ?? '', index: before + kept.length, page: pageNo };
  }
  return extraction;
}

function sameResource(a: string, b: string): boolean {
  return a.split('#')[0] === b.split('#')[0];
}

function fetchable(url: string, egress: Pick<Egress, 'assertUrlAllowed'>): boolean {
  return (
    typeof url === 'string' && url.length <= 2048 && /^https?:\/\//i.test(url) && unfetchable(url, egress) === undefined
  );
}

function toEntry(
  e: EntryDraft,
  index: number,
  pageUrl: string,
  egress: Pick<Egress, 'assertUrlAllowed'>,
  seen: Set<string>,
  records: SourceRecord[],
): CollectionEntry {
  const out: CollectionEntry = { index, url: e.url };
  const title = e.title?.trim();
  if (title) out.title = title.slice(0, 500);
  const duration = nonNegative(e.duration);
  if (duration !== undefined) out.duration = Math.round(duration * 1000) / 1000;
  if (e.thumbnail && fetchable(e.thumbnail, egress)) out.thumbnail = e.thumbnail;
  const { upload_date } = describing({ upload_date: e.upload_date });
  if (upload_date) out.upload_date = upload_date;
  const id = e.id?.trim();
  if (id) out.id = id.slice(0, 200);
  const media = (e.media ?? []).flatMap((m) => toItem(m, out, pageUrl, egress, seen, records));
  if (media.length) out.media = media.map((m, i) => ({ ...m, index: i }));
  return out;
}

/**
 * An entry's file as a media item, its sources recorded under the entry's index (so every entry is
 * its own item for download's pairing rule). Sources the download would refuse are left out.
 */
function toItem(
  d: MediaDraft,
  entry: CollectionEntry,
  pageUrl: string,
  egress: Pick<Egress, 'assertUrlAllowed'>,
  seen: Set<string>,
  records: SourceRecord[],
): MediaItem[] {
  const sources: SourceDraft[] = d.sources
    .filter((s) => s.url && !seen.has(s.url) && fetchable(s.url, egress))
    .sort(compareSources);
  if (!sources.length) return [];
  const item: MediaItem = { index: 0, type: d.type, sources: sources.map(toSource) };
  for (const s of sources) seen.add(s.url);
  const duration = nonNegative(d.duration ?? entry.duration);
  if (duration !== undefined) item.duration = Math.round(duration * 1000) / 1000;
  const thumbnail = d.thumbnail ?? entry.thumbnail;
  if (thumbnail) item.thumbnail = thumbnail;
  const title = d.title?.trim() || entry.title;
  if (title) item.title = title.slice(0, 500);
  Object.assign(
    item,
    describing({ author: d.author, upload_date: d.upload_date ?? entry.upload_date, description: d.description }),
  );
  for (const [i, s] of sources.entries()) {
    const pub = item.sources[i];
    records.push(
      sourceRecord(pub, s.headers, { media_index: entry.index, title: title ?? entry.url, page_url: pageUrl }, item),
    );
  }
  return [item];
}

/** The error for a page state an extractor cannot read (a cursor from another version, or forged). */
export function staleCursor(): ReelayError {
  return new ReelayError('invalid_request', 'The cursor is not valid for this URL; start again without it.');
}

/** A page state the extractor wrote as a position or page number (1 to 10^7), else a stale cursor. */
export function statePosition(state: string | undefined, first: number): number {
  if (state === undefined) return first;
  if (!/^\d{1,7}$/.test(state)) throw staleCursor();
  return Number(state);
}

/** A page state that is an API's own opaque token, within the shape that API uses; else a stale cursor. */
export function stateToken(state: string | undefined, shape: RegExp): string | undefined {
  if (state === undefined) return undefined;
  if (!shape.test(state)) throw staleCursor();
  return state;
}
