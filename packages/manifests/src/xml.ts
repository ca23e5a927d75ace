// XML as every reader takes it, MPDs and feeds alike: no DTD (so no entity beyond the five
// predefined ones and character references is ever expanded), no deeper than MAX_XML_DEPTH, no
// larger than MAX_MANIFEST_BYTES, and only local names (manifests and feeds prefix elements
// inconsistently: <MPD>, <mpd:MPD>, itunes:duration). Two parsers, each configured here and nowhere
// else: fast-xml-parser builds an MPD's tree (its walk goes up and down periods, sets and
// representations), htmlparser2 streams a feed (read up to the page asked for and stopped: building a
// 5 MB feed whole took seconds of CPU).
import { ReelayError } from '@reelay/contracts';
import { XMLParser } from 'fast-xml-parser';
import { Parser } from 'htmlparser2';
import { checkSize, MAX_XML_DEPTH } from './limits.js';

/** An element of a tree: attributes under `@name`, children under their local names, text under `#text`. */
export type XmlNode = { [key: string]: unknown };

/**
 * A DOCTYPE with an internal subset can declare entities that expand without bound (a billion
 * laughs) or name files (an external entity): refused on the text, before any parser sees it. A
 * bare `<!DOCTYPE MPD>` declares nothing and passes.
 */
export function refuseDtd(text: string, what: string): void {
  if (/<!ENTITY/i.test(text) || /<!DOCTYPE[^>]*\[/i.test(text)) {
    throw new ReelayError(
      'upstream_error',
      `The ${what} declares XML entities in a DOCTYPE, which this service does not expand.`,
    );
  }
}

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** A character reference's code point as a string; U+FFFD for one that names no character (as htmlparser2 does). */
function character(code: number): string {
  const valid = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
  return valid ? String.fromCodePoint(code) : '\uFFFD';
}

/**
 * The tree reader's entity decoding, written out so it is the streamed reader's (htmlparser2 in
 * XML mode): the five predefined entities and character references, nothing else. Entities a
 * DOCTYPE declares are never taken (refuseDtd refuses such a document first in any case).
 */
const XML_ENTITIES = {
  setExternalEntities: () => undefined,
  addInputEntities: () => undefined,
  reset: () => undefined,
  setXmlVersion: () => undefined,
  decode: (text: string) =>
    text.includes('&')
      ? text.replace(/&(?:(amp|lt|gt|quot|apos)|#(\d{1,8})|#x([\da-fA-F]{1,8}));/g, (_whole, name, dec, hex) =>
          name ? PREDEFINED[name] : character(dec ? Number(dec) : Number.parseInt(hex, 16)),
        )
      : text,
};

function tooDeep(what: string): ReelayError {
  return new ReelayError('upstream_error', `The ${what} is nested deeper than ${MAX_XML_DEPTH} elements.`);
}

/**
 * A reader of whole documents into trees; `repeated` names the elements that are always lists,
 * even when a document has one. The parser is made once, here. A reader's own `check` of the text
 * runs after the shared ones and before anything is built.
 */
export function xmlTreeReader(
  repeated: ReadonlySet<string>,
): (text: string, what: string, check?: (text: string) => void) => XmlNode {
  const parser = new XMLParser({
    processEntities: true,
    entityDecoder: XML_ENTITIES,
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    removeNSPrefix: true,
    parseTagValue: false,
    parseAttributeValue: false,
    // It refuses an element opened with more than this many open above it: the root counts as none.
    maxNestedTags: MAX_XML_DEPTH - 1,
    isArray: (name, _path, _leaf, isAttribute) => !isAttribute && repeated.has(name),
  });
  return (text, what, check) => {
    checkSize(text, what);
    refuseDtd(text, what);
    check?.(text);
    try {
      return parser.parse(text.trimStart(), true) as XmlNode;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (/nested tags/i.test(message)) throw tooDeep(what);
      throw new ReelayError('upstream_error', `The ${what} is not valid XML (${message}).`, { cause: err });
    }
  };
}

/** What a streamed document tells its reader; `open` answers 'stop' when it has read enough. */
export interface XmlEvents {
  /** An element opens; `path` holds the local names of the open elements, this one last. */
  open(name: string, attrs: Record<string, string>, path: readonly string[]): 'stop' | void;
  text(data: string): void;
  /** An element closes; `path` still holds it, last. */
  close(path: readonly string[]): void;
}

/** Stops the parser from inside its callbacks. */
class Stop extends Error {}

const localName = (name: string): string => name.slice(name.indexOf(':') + 1);

/**
 * Streams `text` to `events`, under the same rules as a tree (and the reader's own `check` of the
 * text, before the first event); a refusal is thrown as upstream_error.
 */
export function streamXml(text: string, what: string, events: XmlEvents, check?: (text: string) => void): void {
  checkSize(text, what);
  refuseDtd(text, what);
  check?.(text);
  const path: string[] = [];
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        path.push(localName(name));
        if (path.length > MAX_XML_DEPTH) throw tooDeep(what);
        if (events.open(path[path.length - 1], attrs, path) === 'stop') throw new Stop();
      },
      ontext(data) {
        events.text(data);
      },
      onclosetag() {
        events.close(path);
        path.pop();
      },
    },
    { xmlMode: true, decodeEntities: true, recognizeCDATA: true },
  );
  try {
    parser.write(text.replace(/^\uFEFF/, ''));
    parser.end();
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
  }
}
