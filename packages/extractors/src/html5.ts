// HTML5 media elements (yt-dlp's _parse_html5_media_entries): each <video>/<audio> (and the AMP
// variants) is one media item; its own src and each <source> child are renditions of it. Players
// put the rendition's quality in non-standard attributes (label="720p", res="480", size="1080",
// title="1500k"), which we read like yt-dlp does.
import type { Candidate, FoundSource } from './candidate.js';
import { addSource, findSource } from './candidate.js';
import { parseBitrate, parseResolution, type Resolution, toNumber } from './labels.js';
import { positiveInt } from './values.js';
import type { Attrs, MediaElement } from './page.js';

// Lazy-loading players move the URL into data-* attributes; the first usable one wins.
const ELEMENT_SRC = ['src', 'data-video-src', 'data-src', 'data-source'] as const;
const SOURCE_SRC = ['src', 'data-src'] as const;

function firstSource(attrs: Attrs, names: readonly string[], make: (raw: string) => FoundSource | undefined): FoundSource | undefined {
  for (const name of names) {
    const found = attrs[name] ? make(attrs[name]) : undefined;
    if (found) return found;
  }
  return undefined;
}

/** Resolution from explicit attributes first, then from the label or title text. */
function sourceResolution(attrs: Attrs): Resolution {
  const width = positiveInt(toNumber(attrs.width));
  const height = positiveInt(toNumber(attrs.height)) ?? positiveInt(toNumber(attrs.res)) ?? positiveInt(toNumber(attrs['data-res'])) ?? positiveInt(toNumber(attrs.size));
  if (width || height) return { width, height };
  const fromLabel = parseResolution(attrs.label);
  return fromLabel.height ? fromLabel : parseResolution(attrs.title);
}

function elementCandidate(element: MediaElement, base: URL): Candidate | undefined {
  const declared = element.kind;
  // width/height on the element are its display size: a fallback for renditions that say nothing.
  const width = positiveInt(toNumber(element.attrs.width));
  const height = positiveInt(toNumber(element.attrs.height));
  const withShown = (s: FoundSource): FoundSource => {
    if (s.kind !== 'video' || s.manifest || s.width || s.height) return s;
    return { ...s, ...(width && { width }), ...(height && { height }) };
  };
  const sources: FoundSource[] = [];

  const own = firstSource(element.attrs, ELEMENT_SRC, (raw) => findSource(raw, base, { declared }));
  if (own) addSource(sources, withShown(own));
  for (const attrs of element.sources) {
    const label = attrs.label ?? attrs.title;
    const res = sourceResolution(attrs);
    const hints = { declared, type: attrs.type, width: res.width, height: res.height, bitrate: parseBitrate(label) };
    const found = firstSource(attrs, SOURCE_SRC, (raw) => findSource(raw, base, hints));
    if (found) addSource(sources, withShown(found));
  }
  if (!sources.length) return undefined;
  const poster = element.attrs.poster || element.attrs['data-poster'];
  const thumbnail = poster ? findSource(poster, base, { declared: 'image' })?.url : undefined;
  return { method: 'html5', type: declared, sources, thumbnail };
}

export function html5Candidates(media: readonly MediaElement[], base: URL): Candidate[] {
  const items: Candidate[] = [];
  for (const element of media) {
    const item = elementCandidate(element, base);
    if (item) items.push(item);
  }
  return items;
}
