// The segments a media playlist names, in order: what the proxy fetches ahead of ffmpeg
// (@reelay/egress proxy-ahead.ts). Only plain lists: a playlist of byte ranges is read by ffmpeg in
// Range requests, which the window does not serve, so it plans nothing.
import { XMLParser } from 'fast-xml-parser';

/** A segment and when it starts, in seconds from the first. */
export interface PlannedSegment {
  url: URL;
  start: number;
}

/** The segments of an HLS media playlist fetched at `url`; empty for a master or byte ranges. */
export function hlsSegments(text: string, url: URL): PlannedSegment[] {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  if (lines.some((l) => l.startsWith('#EXT-X-STREAM-INF') || l.startsWith('#EXT-X-BYTERANGE'))) return [];
  const out: PlannedSegment[] = [];
  let start = 0;
  let duration = 0;
  for (const line of lines) {
    if (line.startsWith('#EXTINF:')) duration = Number.parseFloat(line.slice(8)) || 0;
    if (line === '' || line.startsWith('#')) continue;
    try {
      const segment = new URL(line, url);
      segment.hash = '';
      out.push({ url: segment, start });
    } catch {
      // ffmpeg cannot fetch it either
    }
    start += duration;
  }
  return out;
}

/** The segments from the one that holds `from` seconds on (a clip's start: those before are skipped). */
export function segmentsFrom(segments: PlannedSegment[], from: number | undefined): URL[] {
  const first = from === undefined ? 0 : segments.findIndex((_s, i) => (segments[i + 1]?.start ?? Infinity) > from);
  return first < 0 ? [] : segments.slice(first).map((s) => s.url);
}

type XmlNode = { [key: string]: unknown };

const REPEATED = new Set(['Period', 'AdaptationSet', 'Representation', 'BaseURL', 'SegmentURL', 'S']);
const parser = new XMLParser({
  processEntities: false,
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  isArray: (name, _path, _leaf, isAttribute) => !isAttribute && REPEATED.has(name),
});

/**
 * The media segment URLs of each representation of a DASH manifest fetched at `url`, in order:
 * SegmentList, and SegmentTemplate with $Number$ or $Time$ over a timeline or a fixed duration. A
 * representation in another form (one file, an open-ended timeline) plans nothing. The manifest has
 * been checked (manifest-check.ts) before: its segment count is bounded.
 */
export function dashSegments(text: string, url: URL): PlannedSegment[][] {
  if (/<!(?:DOCTYPE|ENTITY)/i.test(text)) return [];
  let mpd: XmlNode | undefined;
  try {
    mpd = (parser.parse(text) as XmlNode).MPD as XmlNode | undefined;
  } catch {
    return [];
  }
  if (!mpd) return [];
  const total = isoSeconds(attr(mpd, 'mediaPresentationDuration'));
  const out: PlannedSegment[][] = [];
  const mpdBase = base(mpd, url);
  for (const period of list(mpd.Period)) {
    const periodBase = base(period, mpdBase);
    for (const set of list(period.AdaptationSet)) {
      const setBase = base(set, periodBase);
      for (const rep of list(set.Representation)) {
        const repBase = base(rep, setBase);
        const urls = listed(rep, set, repBase) ?? templated(rep, set, repBase, total);
        if (urls && urls.length > 1) out.push(urls);
      }
    }
  }
  return out;
}

function listed(rep: XmlNode, set: XmlNode, at: URL): PlannedSegment[] | undefined {
  const segmentList = (rep.SegmentList ?? set.SegmentList) as XmlNode | undefined;
  if (!segmentList) return undefined;
  const duration = Number(attr(segmentList, 'duration') ?? 0) / Number(attr(segmentList, 'timescale') ?? 1) || 0;
  const urls = list(segmentList.SegmentURL)
    .map((s) => attr(s, 'media'))
    .filter((m): m is string => m !== undefined);
  return resolveAll(urls, at).map((url, i) => ({ url, start: i * duration }));
}

function templated(rep: XmlNode, set: XmlNode, at: URL, total: number | undefined): PlannedSegment[] | undefined {
  const template = { ...(set.SegmentTemplate as XmlNode | undefined), ...(rep.SegmentTemplate as XmlNode | undefined) };
  const media = attr(template, 'media');
  if (!media) return undefined;
  const start = Number(attr(template, 'startNumber') ?? 1);
  const timescale = Number(attr(template, 'timescale') ?? 1);
  const points: { number: number; time: number }[] = [];
  const timeline = (template.SegmentTimeline as XmlNode | undefined)?.S;
  if (timeline !== undefined) {
    let time = 0;
    for (const s of list(timeline)) {
      const d = Number(attr(s, 'd'));
      const r = Number(attr(s, 'r') ?? 0);
      if (!(d > 0) || r < 0) return undefined; // an open-ended repeat: not planned
      if (attr(s, 't') !== undefined) time = Number(attr(s, 't'));
      for (let i = 0; i <= r; i++, time += d) points.push({ number: start + points.length, time });
    }
  } else {
    const duration = Number(attr(template, 'duration'));
    if (!(duration > 0) || !(timescale > 0) || total === undefined) return undefined;
    const count = Math.ceil((total * timescale) / duration);
    for (let i = 0; i < count; i++) points.push({ number: start + i, time: i * duration });
  }
  const id = attr(rep, 'id') ?? '';
  const bandwidth = attr(rep, 'bandwidth') ?? '';
  const expand = (p: { number: number; time: number }) =>
    media.replace(
      /\$(RepresentationID|Bandwidth|Number|Time|)(%0(\d+)d)?\$/g,
      (_w, name: string, _f, width: string | undefined) => {
        const value =
          name === 'RepresentationID'
            ? id
            : name === 'Bandwidth'
              ? bandwidth
              : name === 'Number'
                ? String(p.number)
                : name === 'Time'
                  ? String(p.time)
                  : '$';
        return width && (name === 'Number' || name === 'Time') ? value.padStart(Number(width), '0') : value;
      },
    );
  const zero = points[0]?.time ?? 0;
  return resolveAll(points.map(expand), at).map((url, i) => ({
    url,
    start: (points[i].time - zero) / (timescale || 1),
  }));
}

function resolveAll(refs: string[], at: URL): URL[] {
  const out: URL[] = [];
  for (const ref of refs) {
    try {
      const u = new URL(ref, at);
      u.hash = '';
      out.push(u);
    } catch {
      return [];
    }
  }
  return out;
}

/** The node's first BaseURL resolved against the parent's, or the parent's. */
function base(node: XmlNode, parent: URL): URL {
  const first = list(node.BaseURL)[0] as unknown;
  const text =
    typeof first === 'string'
      ? first
      : typeof first === 'object' && first !== null
        ? (first as XmlNode)['#text']
        : undefined;
  if (typeof text !== 'string' || text.trim() === '') return parent;
  try {
    return new URL(text.trim(), parent);
  } catch {
    return parent;
  }
}

function attr(node: XmlNode, name: string): string | undefined {
  const value = node[`@${name}`];
  return typeof value === 'string' ? value : undefined;
}

function list(value: unknown): XmlNode[] {
  return Array.isArray(value) ? (value as XmlNode[]) : value && typeof value === 'object' ? [value as XmlNode] : [];
}

/** An ISO-8601 duration (`PT1H2M3.5S`) in seconds. */
function isoSeconds(value: string | undefined): number | undefined {
  const m = /^P(?:(\d+)D)?T?(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?$/.exec(value ?? '');
  if (!m) return undefined;
  return Number(m[1] ?? 0) * 86_400 + Number(m[2] ?? 0) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
}
