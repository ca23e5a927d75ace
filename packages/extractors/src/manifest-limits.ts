// What an extract accepts in a manifest before it parses it (DESIGN.md, "Safe in public"): one level
// of nesting and at most MAX_SEGMENTS segments a playlist or representation. Counted on the text or
// from the declared numbers, never by building the list: a 2 MB playlist of a million one-letter URI
// lines would cost hls-parser hundreds of MB of segment objects, and a SegmentTimeline entry
// r="100000000" stands for 10^8 segments in 20 bytes.
import { ReelayError } from '@reelay/contracts';

/** The config default of MAX_SEGMENTS, for callers (tests, tools) that do not pass one. */
export const DEFAULT_MAX_SEGMENTS = 20_000;

export function tooManySegments(what: string, max: number): ReelayError {
  return new ReelayError(
    'upstream_error',
    `The ${what} names more than ${max} segments, the most this service accepts.`,
  );
}

/**
 * The checks an HLS text must pass before hls-parser sees it: not a master and a media playlist at
 * once, and no more than `max` URI lines (segments, or a master's variants).
 */
export function checkHlsText(text: string, max: number): void {
  const master = /^[ \t]*#EXT-X-(?:I-FRAME-)?STREAM-INF:/m.test(text);
  if (master && /^[ \t]*#EXTINF:/m.test(text)) {
    throw new ReelayError(
      'upstream_error',
      'The HLS playlist is invalid: it is a master playlist and a media playlist at once (variants beside segments).',
    );
  }
  let uris = 0;
  for (let start = 0; start < text.length;) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    // A URI line is any line that is neither blank nor a tag or comment.
    let i = start;
    while (i < end && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9 || text.charCodeAt(i) === 13)) i++;
    if (i < end && text.charCodeAt(i) !== 35 /* # */ && ++uris > max) {
      if (master) throw new ReelayError('upstream_error', `The HLS master playlist lists more than ${max} variants.`);
      throw tooManySegments('HLS playlist', max);
    }
    start = end + 1;
  }
}

/** A URL without its fragment, for comparing what a playlist names with where it came from. */
export function sameResource(a: URL, b: URL): boolean {
  return a.href.split('#')[0] === b.href.split('#')[0];
}

/** Five predefined XML entities are all a manifest needs; a DTD's own entities can expand without bound. */
export function checkXmlText(text: string): void {
  if (/<!ENTITY/i.test(text)) {
    throw new ReelayError(
      'upstream_error',
      'The DASH manifest declares XML entities in a DOCTYPE, which this service does not expand.',
    );
  }
}

/**
 * Before the XML is parsed: no SegmentTimeline with more than `max` S entries and no SegmentList
 * with more than `max` SegmentURLs (each entry is at least one segment of the representations it
 * applies to), so the parser never builds more than that many objects for one of them.
 */
export function checkMpdText(text: string, max: number): void {
  const tags = /<(\/?)(?:[\w.-]+:)?(SegmentTimeline|SegmentList|SegmentURL|S)(?=[\s/>])/g;
  let count = 0;
  for (let m = tags.exec(text); m; m = tags.exec(text)) {
    const [, close, name] = m;
    if (name === 'SegmentTimeline' || name === 'SegmentList') count = 0;
    else if (!close && ++count > max) throw tooManySegments('DASH manifest', max);
  }
}
