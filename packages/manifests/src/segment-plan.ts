// The segments a VOD playlist or MPD names, in order: what a job's proxy fetches ahead of ffmpeg
// (@reelay/egress proxy-ahead.ts). Only plain lists: a playlist of byte ranges is read by ffmpeg in
// Range requests, which the window does not serve, so it plans nothing.
import { isReelayError } from '@reelay/contracts';
import { countUriLines, isUriLine, playlistLines } from './hls-text.js';
import { DEFAULT_MAX_SEGMENTS, MAX_MANIFEST_BYTES, overBytes } from './limits.js';
import { attr, baseOf, kids, readMpd, type XmlNode } from './mpd.js';
import { expandTemplate } from './mpd-template.js';
import { isoDuration } from './values.js';

/** Characters of a playlist that are split into lines without counting first (a VOD playlist is far smaller). */
const SPLIT_FREELY = 1024 * 1024;

/** A segment and when it starts, in seconds from the first. */
export interface PlannedSegment {
  url: URL;
  start: number;
}

/** The segments of an HLS media playlist fetched at `url`; empty for a master, byte ranges, or more than `maxSegments`. */
export function hlsSegments(text: string, url: URL, maxSegments = DEFAULT_MAX_SEGMENTS): PlannedSegment[] {
  if (overBytes(text, MAX_MANIFEST_BYTES)) return [];
  // A large text is counted before it is split: a million segments in 13 MB never become lines.
  if (text.length > SPLIT_FREELY && countUriLines(text, maxSegments) > maxSegments) return [];
  const lines = playlistLines(text);
  if (lines.some((l) => l.startsWith('#EXT-X-STREAM-INF') || l.startsWith('#EXT-X-BYTERANGE'))) return [];
  const out: PlannedSegment[] = [];
  let start = 0;
  let duration = 0;
  for (const line of lines) {
    if (line.startsWith('#EXTINF:')) duration = Number.parseFloat(line.slice(8)) || 0;
    if (!isUriLine(line)) continue;
    if (out.length === maxSegments) return [];
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

/**
 * The media segment URLs of each representation of a DASH manifest fetched at `url`, in order:
 * SegmentList, and SegmentTemplate with $Number$ or $Time$ over a timeline or a fixed duration. A
 * representation in another form (one file, an open-ended timeline) or of more than `maxSegments`
 * segments plans nothing, nor does a manifest the reader refuses (the job's checks, ledger.ts, and
 * ffmpeg say why; a plan only fetches ahead).
 */
export function dashSegments(text: string, url: URL, maxSegments = DEFAULT_MAX_SEGMENTS): PlannedSegment[][] {
  let mpd: XmlNode;
  try {
    mpd = readMpd(text, maxSegments);
  } catch (err) {
    if (!isReelayError(err)) throw err;
    return [];
  }
  const total = isoDuration(attr(mpd, 'mediaPresentationDuration'));
  const out: PlannedSegment[][] = [];
  const mpdBase = baseOf(mpd, { url, given: false });
  for (const period of kids(mpd, 'Period')) {
    const periodBase = baseOf(period, mpdBase);
    for (const set of kids(period, 'AdaptationSet')) {
      const setBase = baseOf(set, periodBase);
      for (const rep of kids(set, 'Representation')) {
        const at = baseOf(rep, setBase).url;
        const urls = listed(rep, set, at) ?? templated(rep, set, at, total, maxSegments);
        if (urls && urls.length > 1) out.push(urls);
      }
    }
  }
  return out;
}

function listed(rep: XmlNode, set: XmlNode, at: URL): PlannedSegment[] | undefined {
  const segmentList = kids(rep, 'SegmentList')[0] ?? kids(set, 'SegmentList')[0];
  if (!segmentList) return undefined;
  const duration = Number(attr(segmentList, 'duration') ?? 0) / Number(attr(segmentList, 'timescale') ?? 1) || 0;
  const urls = kids(segmentList, 'SegmentURL')
    .map((s) => attr(s, 'media'))
    .filter((m): m is string => m !== undefined);
  return resolveAll(urls, at).map((url, i) => ({ url, start: i * duration }));
}

function templated(
  rep: XmlNode,
  set: XmlNode,
  at: URL,
  total: number | undefined,
  max: number,
): PlannedSegment[] | undefined {
  const template: XmlNode = { ...kids(set, 'SegmentTemplate')[0], ...kids(rep, 'SegmentTemplate')[0] };
  const media = attr(template, 'media');
  if (!media) return undefined;
  const start = Number(attr(template, 'startNumber') ?? 1);
  const timescale = Number(attr(template, 'timescale') ?? 1);
  const points: { number: number; time: number }[] = [];
  const timeline = kids(kids(template, 'SegmentTimeline')[0], 'S');
  if (timeline.length > 0) {
    let time = 0;
    for (const s of timeline) {
      const d = Number(attr(s, 'd'));
      const r = Number(attr(s, 'r') ?? 0);
      if (!(d > 0) || r < 0) return undefined; // an open-ended repeat: not planned
      if (points.length + r + 1 > max) return undefined; // r="100000000": 10^8 segments in 20 bytes
      if (attr(s, 't') !== undefined) time = Number(attr(s, 't'));
      for (let i = 0; i <= r; i++, time += d) points.push({ number: start + points.length, time });
    }
  } else {
    const duration = Number(attr(template, 'duration'));
    if (!(duration > 0) || !(timescale > 0) || total === undefined) return undefined;
    const count = Math.ceil((total * timescale) / duration);
    if (count > max) return undefined;
    for (let i = 0; i < count; i++) points.push({ number: start + i, time: i * duration });
  }
  const values = { id: attr(rep, 'id') ?? '', bandwidth: attr(rep, 'bandwidth') ?? '' };
  const zero = points[0]?.time ?? 0;
  return resolveAll(
    points.map((p) => expandTemplate(media, { ...values, ...p })),
    at,
  ).map((url, i) => ({
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
