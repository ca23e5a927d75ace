// The one set of limits every reader of a manifest or a feed applies (DESIGN.md, "Safe in public":
// Manifests, Bodies), so the extract, a job's proxy and the recorder accept the same documents:
// - entities: nothing beyond the five predefined ones and character references (xml.ts);
// - depth: MAX_XML_DEPTH elements;
// - size: MAX_MANIFEST_BYTES decoded bytes (callers fetch with smaller caps where they need less);
// - segment counts: MAX_SEGMENTS per playlist or representation, counted on the text or from the
//   declared numbers, never by building the list;
// - nesting: one level, a master names media playlists and a media playlist names segments
//   (hls-check.ts at extract, ledger.ts in a job).
import { ReelayError } from '@reelay/contracts';

/** The config default of MAX_SEGMENTS, for callers (tests, tools) that do not pass one. */
export const DEFAULT_MAX_SEGMENTS = 20_000;
/** The largest manifest or feed any reader takes, in decoded bytes: what a job's proxy buffers. */
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;
/**
 * A live playlist or MPD, read again at every refresh, and the variant an extract reads to judge
 * whether its master is live: thousands of segments fit in far less.
 */
export const MAX_LIVE_MANIFEST_BYTES = 1024 * 1024;
/** Deepest element nesting of an MPD or a feed (an MPD's <S> is at 7, a podcast item's media:group at 6). */
export const MAX_XML_DEPTH = 32;
/** Most items one feed document may hold (a real feed this long is far over the 5 MB page limit). */
export const MAX_FEED_ITEMS = 10_000;
/** Segments a live window keeps per refresh: the oldest beyond it go (a from_start recording records a gap for them). */
export const MAX_LISTED = 2_000;

export function tooManySegments(what: string, max: number): ReelayError {
  return new ReelayError(
    'upstream_error',
    `The ${what} names more than ${max} segments, the most this service accepts.`,
  );
}

/** Whether `text` is over `max` bytes as UTF-8 (the byte count is taken only when the length cannot tell). */
export function overBytes(text: string, max: number): boolean {
  if (text.length > max) return true;
  return text.length * 3 > max && Buffer.byteLength(text, 'utf8') > max;
}

/** Refuses a document over `max` decoded bytes before anything reads it. */
export function checkSize(text: string, what: string, max = MAX_MANIFEST_BYTES): void {
  if (overBytes(text, max))
    throw new ReelayError(
      'upstream_error',
      `The ${what} is larger than ${max / 1024 / 1024} MB, the most this service reads.`,
    );
}
