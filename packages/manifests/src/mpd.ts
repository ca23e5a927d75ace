// A DASH manifest (ISO/IEC 23009-1) read into its XML tree, and the walk's small readers: an
// element's children and attributes, the BaseURL of a level, what a representation holds, and how
// many segments it declares. Under the XML rules of xml.ts, and no SegmentTimeline or SegmentList
// longer than MAX_SEGMENTS: a SegmentTimeline entry r="100000000" stands for 10^8 segments in 20
// bytes, so segments are counted from the declared numbers, never by listing them.
//
// mpd-parser is not used: it resolves segments for playback, and in doing so loses the distinction
// between single-file and segmented representations, and the representation ids URLs are made of.
import { ReelayError } from '@reelay/contracts';
import { splitCodecs, type CodecParts } from './codecs.js';
import { tooManySegments } from './limits.js';
import { positive } from './values.js';
import { xmlTreeReader, type XmlNode } from './xml.js';

export type { XmlNode };

/** Elements that may repeat: always read as lists, even when a manifest has only one. */
const REPEATED = new Set([
  'Period',
  'AdaptationSet',
  'Representation',
  'BaseURL',
  'ContentProtection',
  'SegmentURL',
  'S',
  'EssentialProperty',
]);

const readTree = xmlTreeReader(REPEATED);

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

/** The MPD element of a manifest, once it has passed the checks; `maxSegments` is MAX_SEGMENTS. */
export function readMpd(text: string, maxSegments: number): XmlNode {
  const mpd = readTree(text, 'DASH manifest', () => checkMpdText(text, maxSegments)).MPD;
  if (typeof mpd !== 'object' || mpd === null)
    throw new ReelayError('upstream_error', 'The DASH manifest is invalid: its root element is not MPD.');
  return mpd as XmlNode;
}

export function kids(node: XmlNode | undefined, name: string): XmlNode[] {
  const value = node?.[name];
  const list: unknown[] = Array.isArray(value) ? value : value === undefined ? [] : [value];
  // An element with neither attributes nor children comes back as its text (often '').
  return list.map((v) => (typeof v === 'object' && v !== null ? (v as XmlNode) : { '#text': String(v) }));
}

export function attr(node: XmlNode | undefined, name: string): string | undefined {
  const value = node?.[`@${name}`];
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

/** The base URL of a level: its first BaseURL resolved against the parent's, else the parent's. */
export interface Base {
  url: URL;
  /** Whether a BaseURL was given anywhere on the way: without one a single-file representation has no file. */
  given: boolean;
}

export function baseOf(node: XmlNode, parent: Base): Base {
  const text = kids(node, 'BaseURL').map((b) => (typeof b['#text'] === 'string' ? b['#text'].trim() : ''))[0];
  // A malformed BaseURL is ignored and the parent's base stands, as a player would fall back.
  if (!text || !URL.canParse(text, parent.url.href)) return parent;
  return { url: new URL(text, parent.url), given: true };
}

export type Kind = 'video' | 'audio' | 'text' | 'image';

function kindOf(contentType: string | undefined, mime: string | undefined, codecs: CodecParts): Kind | undefined {
  const declared = contentType?.toLowerCase();
  if (declared === 'video' || declared === 'audio' || declared === 'text' || declared === 'image') return declared;
  const major = mime?.split('/')[0];
  if (major === 'video' || major === 'audio' || major === 'text' || major === 'image') return major;
  if (mime === 'application/ttml+xml') return 'text';
  // application/mp4 carries anything: its codecs tell (avc1 video, mp4a audio, stpp/wvtt text).
  if (codecs.video.length) return 'video';
  if (codecs.audio.length) return 'audio';
  return codecs.other.length ? 'text' : undefined;
}

/** What a representation holds, its own attributes first, then its adaptation set's. */
export function repKind(set: XmlNode, rep: XmlNode): Kind | undefined {
  const pick = (name: string) => attr(rep, name) ?? attr(set, name);
  return kindOf(pick('contentType'), pick('mimeType')?.toLowerCase(), splitCodecs(pick('codecs')));
}

/** The nearest of a child element along the levels (representation first), if any. */
export function nearest(levels: XmlNode[], name: string): XmlNode | undefined {
  for (const node of levels) {
    const found = kids(node, name)[0];
    if (found) return found;
  }
  return undefined;
}

/**
 * How many segments a representation has (`levels`: representation, set, period), counted from what
 * the manifest declares and never by listing them: stops as soon as the count passes `max`.
 * `seconds` is the period's length when known (a live manifest may not say; its open-ended entries
 * count as one).
 */
export function segmentCount(levels: XmlNode[], seconds: number | undefined, max: number): number {
  const list = nearest(levels, 'SegmentList');
  if (list) return kids(list, 'SegmentURL').length;
  const template = nearest(levels, 'SegmentTemplate');
  if (!template) return 1;
  const timescale = positive(attr(template, 'timescale')) ?? 1;
  const end = seconds === undefined ? undefined : seconds * timescale;
  const timeline = kids(template, 'SegmentTimeline')[0];
  if (timeline) {
    let count = 0;
    let t = 0;
    for (const s of kids(timeline, 'S')) {
      t = Number(attr(s, 't') ?? t) || t;
      const d = positive(attr(s, 'd')) ?? 0;
      const r = Number(attr(s, 'r') ?? 0) || 0;
      // r="-1" repeats to the end of the period.
      const repeats = r >= 0 ? r : end !== undefined && d > 0 ? Math.ceil((end - t) / d) - 1 : 0;
      count += 1 + Math.max(0, repeats);
      if (count > max) return count;
      t += d * (1 + Math.max(0, repeats));
    }
    return count;
  }
  const duration = positive(attr(template, 'duration'));
  return duration && end !== undefined ? Math.ceil(end / duration) : 1;
}
