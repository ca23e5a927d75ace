// Feeds as collections: an RSS, RSS 1.0 or Atom document (a podcast, a channel's feed) lists its
// items as entries, a page of at most 100 at a time; a paged feed (RFC 5005 rel="next") goes on at
// its next document. The page state is where the page starts: the document and the offset in it.
import { COLLECTION_PAGE_SIZE, ReelayError } from '@reelay/contracts';
import { looksLikeFeed, sameResource } from '@reelay/manifests';
import { fetchDocument, type FetchedDocument } from './document.js';
import { parseFeed } from './feed-entries.js';
import type { DocumentExtractor, ExtractContext, ResultDraft } from './types.js';

/** Content types feeds are served as; generic XML types are read only when the root is a feed. */
const FEED_TYPES = new Set([
  'application/rss+xml',
  'application/atom+xml',
  'application/rdf+xml',
  'application/feed+xml',
]);

interface FeedState {
  /** The document the page is in (absent: the collection's own URL). */
  d?: string;
  /** The first item of the page in that document. */
  o: number;
}

// A feed served as text/html (a static host that types files by a .html name, a CMS's default) is
// still read as one when its root element is a feed's: a page's root is <html>, so no page a browser
// shows is taken for a feed. Refusing it sent such feeds to the yt-dlp bridge, which lists them
// without their files, so every entry had to be extracted again (a round trip per entry).
function detect(doc: FetchedDocument): boolean {
  if (/^(video|audio|image)\//.test(doc.contentType)) return false;
  if (FEED_TYPES.has(doc.contentType)) return true;
  return looksLikeFeed(doc.head.toString('utf8'));
}

async function page(doc: FetchedDocument, collectionUrl: URL, state: FeedState): Promise<ResultDraft> {
  const feed = parseFeed(await doc.text(), doc.finalUrl, { from: state.o, count: COLLECTION_PAGE_SIZE });
  const end = state.o + COLLECTION_PAGE_SIZE;
  const entries = feed.entries;
  let next: FeedState | undefined;
  if (feed.more) next = { d: state.d, o: end };
  else if (feed.next) {
    // A feed whose next page is itself, or the collection's first, would be listed for ever.
    if (
      sameResource(feed.next, doc.finalUrl) ||
      sameResource(feed.next, doc.url) ||
      sameResource(feed.next, collectionUrl)
    ) {
      throw new ReelayError(
        'upstream_error',
        'The feed\'s next page (rel="next") is the page itself: it would never end.',
      );
    }
    next = { d: feed.next.href, o: 0 };
  }
  return {
    url: collectionUrl.href,
    platform: 'generic',
    extract_profile: 'feed',
    title: feed.title,
    media: [],
    collection: {
      kind: 'feed',
      entries,
      // The total is known only when the whole feed is this one document: the items it lists.
      entry_count: !feed.next && state.d === undefined ? feed.total : undefined,
      next: next && JSON.stringify(next),
    },
  };
}

function readState(raw: string): FeedState {
  let state: unknown;
  try {
    state = JSON.parse(raw);
  } catch {
    state = undefined;
  }
  const s = state as Partial<FeedState> | undefined;
  if (
    !s ||
    !Number.isSafeInteger(s.o) ||
    s.o! < 0 ||
    (s.d !== undefined && (typeof s.d !== 'string' || !URL.canParse(s.d)))
  ) {
    throw new ReelayError('invalid_request', 'The cursor is not valid for this URL; start again without it.');
  }
  return s as FeedState;
}

export const feedDocument: DocumentExtractor = {
  name: 'feed',
  detect,
  extract: (doc) => page(doc, doc.url, { o: 0 }),
  async resume(url: URL, ctx: ExtractContext & { page: { state: string } }): Promise<ResultDraft> {
    const state = readState(ctx.page.state);
    const at = state.d ? new URL(state.d) : url;
    const doc = await fetchDocument(ctx.egress, at, ctx.signal);
    try {
      if (!detect(doc)) throw new ReelayError('upstream_error', `The feed's page at ${at.href} is no longer a feed.`);
      return await page(doc, url, state);
    } finally {
      doc.close();
    }
  },
};
