// A live DASH manifest (type="dynamic") as a recorder reads it: the segments one representation
// lists now, newest last, each with a position that stays the same from one refresh to the next.
// The MPD is read by mpd.ts under the one set of limits (no DTD entities, at most MAX_SEGMENTS S or
// SegmentURL entries); what an entry declares (r="100000000", or r="-1" up to the live edge) is
// counted, never listed: only the newest `maxListed` segments are built.
//
// Addressing (ISO/IEC 23009-1 5.3.9): a SegmentTemplate with a SegmentTimeline ($Number$ or $Time$
// in `media`), or a SegmentTemplate with a fixed `duration` whose segments come from the clock
// (availabilityStartTime). Positions: with a timeline, the segment's start on the presentation
// timeline in milliseconds (so a window that slides, or a server that renumbers, cannot shift
// them); with a fixed duration, the segment's number.
import { ReelayError } from '@reelay/contracts';
import { DEFAULT_MAX_SEGMENTS, MAX_LISTED } from './limits.js';
import { attr, baseOf, kids, readMpd, repKind, type Base, type XmlNode } from './mpd.js';
import { expandTemplate } from './mpd-template.js';
import { isoDuration, positive } from './values.js';

export interface LiveDashSegment {
  /** Position: milliseconds of presentation time (`unit: 'ms'`) or the segment number (`unit: 'number'`). */
  seq: number;
  /** The position of the segment that follows this one without a gap. */
  next: number;
  url: string;
  /** Seconds. */
  duration: number;
  /**
   * Seconds of presentation time where the segment starts. Every representation of the MPD shares
   * this timeline, so it is how a recording of a video and an audio representation lines them up.
   */
  start: number;
}

export interface LiveDashWindow {
  /** type="dynamic": still live. A static MPD is a finished broadcast. */
  dynamic: boolean;
  /** Seconds; the period at which the MPD may change (absent: it does not say). */
  minimumUpdatePeriod?: number;
  /** The longest segment, seconds: the unit of a recorder's refresh and stall rules. */
  maxSegmentDuration: number;
  unit: 'ms' | 'number';
  segments: LiveDashSegment[];
  /** Segments the manifest declares before the newest `maxListed`, and how long they last. */
  dropped: number;
  droppedSeconds: number;
  /** The initialization segment, absolute. */
  init?: string;
  /** What the representation declares (mimeType and codecs): a change means another stream. */
  codecs: string;
  encrypted: boolean;
  representation: string;
}

export interface LiveDashOptions {
  /** The representation id (a source's `#representation=`); absent: the first video one, else audio. */
  representation?: string;
  type?: 'video' | 'audio';
  /** Now, ms since the epoch: where the live edge is for open-ended entries and fixed durations. */
  now?: number;
  maxListed?: number;
  maxSegments?: number;
}

/** A window of this many segments is kept when a fixed-duration template names no timeShiftBufferDepth. */
const DEFAULT_WINDOW = 10;

const fail = (why: string) => new ReelayError('upstream_error', `The live DASH manifest cannot be recorded: ${why}.`);

interface Found {
  period: XmlNode;
  periodStart: number;
  set: XmlNode;
  rep: XmlNode;
  base: Base;
}

/** The representation in the last period that has it: a live presentation's current period. */
function findRepresentation(mpd: XmlNode, manifest: URL, options: LiveDashOptions): Found {
  const mpdBase = baseOf(mpd, { url: manifest, given: false });
  let found: Found | undefined;
  let start = 0;
  for (const period of kids(mpd, 'Period')) {
    start = isoDuration(attr(period, 'start')) ?? start;
    const periodBase = baseOf(period, mpdBase);
    const candidates: Found[] = [];
    for (const set of kids(period, 'AdaptationSet')) {
      for (const rep of kids(set, 'Representation')) {
        const kind = repKind(set, rep);
        if (kind !== 'video' && kind !== 'audio') continue;
        if (options.representation !== undefined && attr(rep, 'id') !== options.representation) continue;
        if (options.type !== undefined && kind !== options.type) continue;
        candidates.push({ period, periodStart: start, set, rep, base: baseOf(rep, baseOf(set, periodBase)) });
      }
    }
    const pick =
      options.representation !== undefined
        ? candidates[0]
        : (candidates.find((c) => repKind(c.set, c.rep) === 'video') ?? candidates[0]);
    if (pick) found = pick;
    const length = isoDuration(attr(period, 'duration'));
    if (length !== undefined) start += length;
  }
  if (!found)
    throw fail(
      options.representation === undefined
        ? 'it lists no audio or video representation'
        : `it no longer lists representation "${options.representation}"`,
    );
  return found;
}

/** An attribute of the nearest SegmentTemplate that has it (representation, then set, then period). */
function templateAttr(templates: XmlNode[], name: string): string | undefined {
  for (const t of templates) {
    const value = attr(t, name);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** One SegmentTimeline entry with its repeats resolved: `count` segments of `d` from `t`. */
interface Run {
  t: number;
  d: number;
  count: number;
}

/** An MPD read once (bounded as at extract), for the windows of several of its representations. */
export type LiveMpd = { readonly mpd: XmlNode };

export function readLiveMpd(text: string, maxSegments = DEFAULT_MAX_SEGMENTS): LiveMpd {
  return { mpd: readMpd(text, maxSegments) };
}

/** `text`: the MPD, or one read by readLiveMpd (a recording of two representations reads it once). */
export function liveDashWindow(text: string | LiveMpd, url: URL, options: LiveDashOptions = {}): LiveDashWindow {
  const maxListed = options.maxListed ?? MAX_LISTED;
  const now = options.now ?? Date.now();
  const mpd = typeof text === 'string' ? readMpd(text, options.maxSegments ?? DEFAULT_MAX_SEGMENTS) : text.mpd;
  const manifest = new URL(url.href);
  manifest.hash = '';
  const found = findRepresentation(mpd, manifest, options);
  const { period, set, rep } = found;
  const id = attr(rep, 'id') ?? '';
  const bandwidth = attr(rep, 'bandwidth') ?? '';
  const encrypted = kids(set, 'ContentProtection').length > 0 || kids(rep, 'ContentProtection').length > 0;
  const codecs = [
    attr(rep, 'mimeType') ?? attr(set, 'mimeType') ?? '',
    attr(rep, 'codecs') ?? attr(set, 'codecs') ?? '',
  ].join(';');
  const templates = [rep, set, period].flatMap((n) => kids(n, 'SegmentTemplate'));
  const media = templateAttr(templates, 'media');
  if (!media)
    throw fail(
      kids(rep, 'SegmentList').length || kids(set, 'SegmentList').length
        ? 'it lists segments (SegmentList) instead of a SegmentTemplate'
        : 'its representation has no SegmentTemplate',
    );
  const timescale = positive(templateAttr(templates, 'timescale')) ?? 1;
  const startNumber = Number(templateAttr(templates, 'startNumber') ?? 1);
  const pto = Number(templateAttr(templates, 'presentationTimeOffset') ?? 0) || 0;
  const initTemplate = templateAttr(templates, 'initialization');
  const init = initTemplate ? new URL(expandTemplate(initTemplate, { id, bandwidth }), found.base.url).href : undefined;
  const dynamic = attr(mpd, 'type') === 'dynamic';
  const ast = Date.parse(attr(mpd, 'availabilityStartTime') ?? '');
  // Where the live edge is on the period's timeline, in timescale units (undefined: no clock given).
  const edge = Number.isFinite(ast) ? ((now - ast) / 1000 - found.periodStart) * timescale + pto : undefined;
  const resolve = (values: { number: number; time: number }) =>
    new URL(expandTemplate(media, { id, bandwidth, ...values }), found.base.url).href;
  const common = {
    dynamic,
    minimumUpdatePeriod: isoDuration(attr(mpd, 'minimumUpdatePeriod')),
    init,
    codecs,
    encrypted,
    representation: id,
  };
  if (!Number.isFinite(startNumber)) throw fail('its startNumber is not a number');

  const timeline = templates.map((t) => kids(t, 'SegmentTimeline')[0]).find((t) => t !== undefined);
  if (timeline) {
    const entries = kids(timeline, 'S');
    const runs: Run[] = [];
    let t = 0;
    entries.forEach((s, i) => {
      const d = positive(attr(s, 'd'));
      if (d === undefined) throw fail('a SegmentTimeline entry has no duration');
      const start = attr(s, 't');
      if (start !== undefined) t = Number(start);
      if (!Number.isFinite(t)) throw fail('a SegmentTimeline entry has a time that is not a number');
      const r = Number(attr(s, 'r') ?? 0);
      let count: number;
      if (r >= 0) count = Number.isFinite(r) ? r + 1 : 1;
      else {
        // r="-1": repeats until the next entry's time, or (the last entry) up to the live edge.
        const nextT = entries[i + 1] ? Number(attr(entries[i + 1], 't')) : NaN;
        const until = Number.isFinite(nextT) ? nextT : dynamic ? edge : undefined;
        count = until === undefined ? 1 : Math.max(0, Math.floor((until - t) / d));
      }
      runs.push({ t, d, count });
      t += d * count;
    });
    const total = runs.reduce((sum, r) => sum + r.count, 0);
    const kept = Math.min(total, maxListed);
    // The newest `kept` segments, built from the end: a run of 10^8 repeats costs nothing.
    const segments: LiveDashSegment[] = [];
    const ms = (time: number) => Math.round((found.periodStart + (time - pto) / timescale) * 1000);
    let index = total; // one past the last segment's index over the whole timeline
    for (let k = runs.length - 1; k >= 0 && segments.length < kept; k--) {
      const run = runs[k];
      for (let j = run.count - 1; j >= 0 && segments.length < kept; j--) {
        const time = run.t + j * run.d;
        segments.push({
          seq: ms(time),
          next: ms(time + run.d),
          url: resolve({ number: startNumber + index - (run.count - j), time }),
          duration: run.d / timescale,
          start: found.periodStart + (time - pto) / timescale,
        });
      }
      index -= run.count;
    }
    segments.reverse();
    let droppedSeconds = 0;
    let left = total - kept;
    for (const run of runs) {
      if (left <= 0) break;
      const n = Math.min(left, run.count);
      droppedSeconds += (n * run.d) / timescale;
      left -= n;
    }
    const maxSegmentDuration =
      isoDuration(attr(mpd, 'maxSegmentDuration')) ?? Math.max(0, ...runs.map((r) => r.d / timescale));
    return {
      ...common,
      maxSegmentDuration: maxSegmentDuration > 0 ? maxSegmentDuration : 1,
      unit: 'ms',
      segments,
      dropped: total - kept,
      droppedSeconds,
    };
  }

  const duration = positive(templateAttr(templates, 'duration'));
  if (duration === undefined) throw fail('its SegmentTemplate has neither a SegmentTimeline nor a duration');
  const seconds = duration / timescale;
  const total = isoDuration(attr(period, 'duration')) ?? isoDuration(attr(mpd, 'mediaPresentationDuration'));
  let available: number;
  if (!dynamic && total !== undefined)
    available = Math.ceil(Math.max(0, total - (attr(period, 'duration') ? 0 : found.periodStart)) / seconds - 1e-9);
  else if (edge !== undefined)
    available = Math.max(0, Math.floor((edge - pto) / duration)); // those whose end has passed
  else throw fail('it names no availabilityStartTime, so the live edge is unknown');
  // The window is timeShiftBufferDepth long (a finished presentation lists all of itself).
  const depth = isoDuration(attr(mpd, 'timeShiftBufferDepth'));
  const listed = !dynamic
    ? available
    : Math.min(available, depth !== undefined ? Math.max(1, Math.floor(depth / seconds)) : DEFAULT_WINDOW);
  const kept = Math.min(listed, maxListed);
  const segments: LiveDashSegment[] = [];
  for (let i = available - kept; i < available; i++) {
    const number = startNumber + i;
    segments.push({
      seq: number,
      next: number + 1,
      url: resolve({ number, time: pto + i * duration }),
      duration: seconds,
      start: found.periodStart + i * seconds,
    });
  }
  return {
    ...common,
    maxSegmentDuration: seconds,
    unit: 'number',
    segments,
    dropped: listed - kept,
    droppedSeconds: (listed - kept) * seconds,
  };
}
