// Reads an HTML page once, with htmlparser2's streaming callbacks (no DOM: pages arrive at hundreds
// per second), into the few things the page methods look at: title, base href, meta tags, JSON-LD
// blocks, media elements with their <source> children, and oEmbed links.
import { Parser } from 'htmlparser2';

export type Attrs = Record<string, string>;

export interface MetaTag {
  /** property, name or itemprop, lower case. */
  key: string;
  value: string;
}

export interface MediaElement {
  /** amp-video and dl8-video count as video, amp-audio as audio. */
  kind: 'video' | 'audio';
  attrs: Attrs;
  sources: Attrs[];
  /** <track> children, when there are any. */
  tracks?: Attrs[];
}

export interface PageInfo {
  title?: string;
  baseHref?: string;
  /** Every meta tag with a key and a value, in document order. */
  meta: MetaTag[];
  /** Values of each meta key, in document order. */
  metaByKey: Map<string, string[]>;
  /** Each parsed application/ld+json block. */
  jsonLd: unknown[];
  /** How many JSON-LD blocks were not valid JSON. */
  jsonLdErrors: number;
  media: MediaElement[];
  /** <link rel="alternate" type="application/json+oembed"> hrefs, as written. */
  oembed: string[];
}

const MEDIA_TAGS: Record<string, MediaElement['kind']> = {
  video: 'video',
  audio: 'audio',
  'amp-video': 'video',
  'amp-audio': 'audio',
  'dl8-video': 'video',
};

/** The elements whose nesting the page reader follows; MEDIA_TAGS too. */
const NESTED = new Set(['title', 'script', 'svg']);
/** Open elements kept at most: real pages nest a few media elements; a deeper one is read as void. */
const MAX_OPEN = 64;

/**
 * htmlparser2 keeps every open element in an array it unshifts and searches at each tag, so a page of
 * 200,000 nested <div>s cost ~14 s of CPU (quadratic in the depth) and held the event loop. This
 * reader follows the nesting of a few elements only, so every other element is read as void (its
 * tags still reach the callbacks), and no more than MAX_OPEN stay open: each tag costs the same
 * whatever the depth.
 */
class ShallowParser extends Parser {
  protected override isVoidElement(name: string): boolean {
    if (!NESTED.has(name) && !MEDIA_TAGS[name]) return true;
    return (this as unknown as { stack: string[] }).stack.length >= MAX_OPEN || super.isVoidElement(name);
  }
}

const MEDIA_ATTRS = [
  'src',
  'data-src',
  'data-video-src',
  'data-source',
  'type',
  'poster',
  'data-poster',
  'width',
  'height',
];
const TRACK_ATTRS = ['src', 'kind', 'srclang', 'label', 'type'];
const SOURCE_ATTRS = [
  'src',
  'data-video-src',
  'data-src',
  'data-source',
  'type',
  'label',
  'title',
  'res',
  'data-res',
  'size',
  'width',
  'height',
];

function pick(attribs: Attrs, names: readonly string[]): Attrs {
  const out: Attrs = {};
  for (const name of names) if (attribs[name] !== undefined) out[name] = attribs[name];
  return out;
}

/** The first value of a meta key. */
export function metaFirst(page: PageInfo, key: string): string | undefined {
  return page.metaByKey.get(key)?.[0];
}

/**
 * Parses JSON-LD leniently where yt-dlp is lenient: HTML comment or CDATA wrappers, and raw control
 * characters inside strings (it parses with strict=False).
 */
export function parseJsonLd(text: string): unknown {
  const body = text
    .trim()
    .replace(/^(?:<!--|\/\/\s*<!\[CDATA\[|<!\[CDATA\[)/, '')
    .replace(/(?:-->|\/\/\s*\]\]>|\]\]>)$/, '')
    .trim();
  try {
    return JSON.parse(body);
  } catch {
    return JSON.parse(body.replace(/[\u0000-\u001f]+/g, ' ')); // throws again when it truly is not JSON
  }
}

export function parsePage(html: string): PageInfo {
  const page: PageInfo = { meta: [], metaByKey: new Map(), jsonLd: [], jsonLdErrors: 0, media: [], oembed: [] };
  // Media elements currently open; <source> belongs to the innermost.
  const openMedia: { tag: string; element: MediaElement }[] = [];
  let svgDepth = 0;
  let titleText: string | undefined;
  let inTitle = false;
  let ldText: string | undefined;

  const parser = new ShallowParser(
    {
      onopentag(name, attribs) {
        switch (name) {
          case 'meta': {
            const key = (attribs.property ?? attribs.name ?? attribs.itemprop)?.trim().toLowerCase();
            const value = attribs.content ?? attribs.value;
            if (!key || value === undefined) return;
            page.meta.push({ key, value });
            const list = page.metaByKey.get(key);
            if (list) list.push(value);
            else page.metaByKey.set(key, [value]);
            return;
          }
          case 'title':
            if (svgDepth === 0 && titleText === undefined) {
              inTitle = true;
              titleText = '';
            }
            return;
          case 'base':
            if (page.baseHref === undefined && attribs.href?.trim()) page.baseHref = attribs.href.trim();
            return;
          case 'script':
            if (/^\s*application\/ld\+json\s*(?:;|$)/i.test(attribs.type ?? '')) ldText = '';
            return;
          case 'link':
            if (
              /(?:^|\s)alternate(?:\s|$)/i.test(attribs.rel ?? '') &&
              /^\s*application\/json\+oembed/i.test(attribs.type ?? '') &&
              attribs.href
            ) {
              page.oembed.push(attribs.href.trim());
            }
            return;
          case 'source': {
            const top = openMedia[openMedia.length - 1];
            if (top) top.element.sources.push(pick(attribs, SOURCE_ATTRS));
            return;
          }
          case 'track': {
            const top = openMedia[openMedia.length - 1];
            if (top) (top.element.tracks ??= []).push(pick(attribs, TRACK_ATTRS));
            return;
          }
          case 'svg':
            svgDepth++;
            return;
          default: {
            const kind = MEDIA_TAGS[name];
            if (!kind) return;
            const element: MediaElement = { kind, attrs: pick(attribs, MEDIA_ATTRS), sources: [] };
            page.media.push(element);
            openMedia.push({ tag: name, element });
          }
        }
      },
      ontext(text) {
        if (inTitle) titleText += text;
        else if (ldText !== undefined) ldText += text;
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        else if (name === 'svg') svgDepth = Math.max(0, svgDepth - 1);
        else if (name === 'script' && ldText !== undefined) {
          try {
            page.jsonLd.push(parseJsonLd(ldText));
          } catch {
            page.jsonLdErrors++; // counted and reported by the caller; one bad block must not hide the rest
          }
          ldText = undefined;
        } else if (MEDIA_TAGS[name] && openMedia[openMedia.length - 1]?.tag === name) openMedia.pop();
      },
    },
    // Self-closing media tags (<video src=… />) occur in the wild; without this their siblings would
    // be read as their children.
    { decodeEntities: true, recognizeSelfClosing: true },
  );
  parser.end(html);
  if (titleText !== undefined) page.title = titleText;
  return page;
}
