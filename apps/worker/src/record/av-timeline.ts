// How the two tracks of an A/V recording (dash-av.ts) share one timeline in the file. Each part of
// each track covers a stretch of the stream's presentation time (its span, from the MPD), and both
// tracks' spans are on the same timeline. The file keeps the time wherever at least one track has
// media: a stretch that only one track lost is a hole in that track alone (the picture holds, or
// the sound pauses) and the other track goes on in sync. A stretch both lost (a worker that died,
// the window sliding past both) takes no time in the file, as in a one-track recording. Pure, so
// hostile spans are tested without ffmpeg.
import type { RecordingGap } from '@reelay/contracts';

export type Span = [number, number];

export interface TrackLayout {
  parts: readonly string[];
  spans: readonly Span[];
  /** The track store's gaps: `at` counts that track's own media seconds. */
  gaps: readonly { at: number; seconds: number }[];
}

export interface TrackPlan {
  /** Seconds into the file where the track's first part begins, and where its last ends. */
  offset: number;
  end: number;
  /** The parts in order, each but the last with how long it lasts in the file (its media, then any hole). */
  entries: { part: string; duration?: number }[];
}

export interface AvTimeline {
  /** The file's length: the stretches where either track has media, end to end. */
  seconds: number;
  tracks: TrackPlan[];
  /** Both tracks' gaps in the file's time, each naming its track, in order. */
  gaps: RecordingGap[];
}

/** Stretches closer than this are one: video and audio segments never end at exactly the same time. */
const TOUCH = 0.05;
/** A track that starts this much after the file does is missing its beginning (a gap at 0). */
const LEAD = 0.5;
const ms = (s: number) => Math.round(s * 1000) / 1000;

/**
 * A track's spans made safe to place: in order and not overlapping. A timeline that restarted (a
 * span that begins before the previous ended) cannot be placed by its times: it follows on.
 */
function ordered(spans: readonly Span[]): Span[] {
  const out: Span[] = [];
  for (const [start, end] of spans) {
    const length = Math.max(0, end - start);
    const prev = out.at(-1);
    const from = prev && start < prev[1] ? prev[1] : start;
    out.push([from, from + length]);
  }
  return out;
}

export function avTimeline(tracks: readonly (TrackLayout & { name: 'video' | 'audio' })[]): AvTimeline {
  const placed = tracks.map((t) => ({
    ...t,
    spans: ordered(t.spans.slice(0, t.parts.length)),
    parts: t.parts.slice(0, t.spans.length),
  }));
  // The stretches where either track has media, merged.
  const all = placed.flatMap((t) => t.spans).sort((a, b) => a[0] - b[0]);
  const covered: { start: number; end: number; at: number }[] = [];
  let length = 0;
  for (const [start, end] of all) {
    const last = covered.at(-1);
    if (last && start <= last.end + TOUCH) {
      if (end > last.end) {
        length += end - last.end;
        last.end = end;
      }
    } else {
      covered.push({ start, end, at: length });
      length += end - start;
    }
  }
  /** Presentation time → seconds into the file (a time in a stretch no track has maps to where the file skips it). */
  const fileTime = (t: number): number => {
    let c = covered[0];
    for (const s of covered) {
      if (s.start > t) break;
      c = s;
    }
    return c ? c.at + Math.min(Math.max(0, t - c.start), c.end - c.start) : 0;
  };
  const plans = placed.map((t): TrackPlan => {
    const starts = t.spans.map((s) => fileTime(s[0]));
    const entries = t.parts.map((part, i) =>
      i < t.parts.length - 1 ? { part, duration: ms(Math.max(0.001, starts[i + 1] - starts[i])) } : { part },
    );
    const last = t.spans.at(-1);
    return { offset: ms(starts[0] ?? 0), end: ms(last ? fileTime(last[1]) : 0), entries };
  });
  const gaps = placed.flatMap((t) => {
    // A store's gap sits after the parts whose media adds up to its `at` (each gap starts a new part).
    const ends: number[] = [];
    let sum = 0;
    for (const [start, end] of t.spans) ends.push((sum += end - start));
    return t.gaps.map((g) => {
      const before = ends.filter((e) => e <= g.at + TOUCH).length;
      const at = before === 0 ? fileTime(t.spans[0]?.[0] ?? 0) : fileTime(t.spans[before - 1][1]);
      return { at: ms(at), seconds: g.seconds, track: t.name };
    });
  });
  // A track that began well after the other (it listed nothing yet, or only a later attempt recorded
  // it) lost the file's beginning: that is a gap too. The usual offset is a few milliseconds.
  placed.forEach((t, i) => {
    if (t.spans.length > 0 && plans[i].offset > LEAD) gaps.push({ at: 0, seconds: plans[i].offset, track: t.name });
  });
  gaps.sort((a, b) => a.at - b.at);
  return { seconds: ms(length), tracks: plans, gaps: gaps.slice(0, 1000) };
}
