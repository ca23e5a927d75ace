// HTML5 media elements (yt-dlp's _parse_html5_media_entries): each <video>/<audio> (and the AMP
// variants) is one media item; its own src and each <source> child are renditions of it. Players
// put the rendition's quality in non-standard attributes (label="720p", res="480", size="1080",
// title="1500k"), which we read like yt-dlp does.
import type { Candidate, FoundSource } from './candidate.js';
import { addSource, findSource } from './candidate.js';
import { parseBitrate, parseResolution, type Resolution, toNumber } from './labels.js';
import { subtitleFormat } from './subtitles.js';
import type { SubtitleDraft } from './types.js';
import { positiveInt } from './values.js';
import type { Attrs, MediaElement } from './page.js';

// Lazy-loading players move the URL into data-* attributes, on the element and on its <source>s
// alike (yt-dlp reads the same four on both); the first usable one wins.
const ELEMENT_SRC = ['src', 'data-video-src', 'data-src', 'data-source'] as const;
const SOURCE_SRC = ELEMENT_SRC;

function firstSource(
  attrs: Attrs,
  names: readonly string[],
  make: (raw: string) => FoundSource | undefined,
): FoundSource | undefined {
  for (const name of names) {
    const found = attrs[name] ? make(attrs[name]) : undefined;
    if (found) return found;
  }
  return undefined;
}

/** Resolution from explicit attributes first, then from the label or title text. */
function sourceResolution(attrs: Attrs): Resolution {
  const width = positiveInt(toNumber(attrs.width));
  const height =
    positiveInt(toNumber(attrs.height)) ??
    positiveInt(toNumber(attrs.res)) ??
    positiveInt(toNumber(attrs['data-res'])) ??
    positiveInt(toNumber(attrs.size));
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

  // The element's own type attribute (not valid HTML, but written by players and CMSs) is what
  // tells an extensionless src="/playlist?id=42" is an HLS or DASH manifest.
  const own = firstSource(element.attrs, ELEMENT_SRC, (raw) =>
    findSource(raw, base, { declared, type: element.attrs.type }),
  );
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
  const subtitles = trackSubtitles(element.tracks ?? [], base);
  return subtitles.length
    ? { method: 'html5', type: declared, sources, thumbnail, subtitles }
    : { method: 'html5', type: declared, sources, thumbnail };
}

/**
 * <track kind="subtitles|captions"> children (a missing kind means subtitles); chapters, descriptions
 * and metadata tracks are not subtitles. Browsers play only WebVTT here, so a track of unknown type is vtt.
 */
function trackSubtitles(tracks: readonly Attrs[], base: URL): SubtitleDraft[] {
  const out: SubtitleDraft[] = [];
  for (const t of tracks) {
    const kind = (t.kind ?? 'subtitles').trim().toLowerCase();
    if (kind !== 'subtitles' && kind !== 'captions') continue;
    const src = t.src?.trim();
    if (!src || !URL.canParse(src, base.href)) continue;
    const url = new URL(src, base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    const format = subtitleFormat(url.href, t.type) ?? 'vtt';
    if (format === 'hls' || format === 'dash') continue;
    out.push({
      language: t.srclang?.trim() || 'und',
      ...(t.label?.trim() ? { label: t.label.trim() } : {}),
      url: url.href,
      format,
    });
  }
  return out;
}

export function html5Candidates(media: readonly MediaElement[], base: URL): Candidate[] {
  const items: Candidate[] = [];
  for (const element of media) {
    const item = elementCandidate(element, base);
    if (item) items.push(item);
  }
  return items;
}
