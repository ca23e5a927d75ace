// One representation of a live DASH manifest (type="dynamic") as a segment source: the MPD is
// fetched again at each refresh (bounded like a playlist) and read by @reelay/manifests' live DASH
// reader (mpd-live.ts), which lists the newest MAX_LISTED segments of a SegmentTemplate with a timeline
// ($Number$ or $Time$) or a fixed duration on the clock. The MPD turning static ends the recording.
// Reads come at the recorder's cadence (record/refresh.ts: about once per segment, like HLS).
//
// A recording of video AND audio (dash-av.ts) reads two representations of one MPD: their sources
// share one MpdReader, so a fetch (and its parse) made for one track serves the other's read that
// follows closely, and each read checks the partner's timeline against its own on the same MPD.
import { ReelayError } from '@reelay/contracts';
import { liveDashWindow, MAX_LISTED, readLiveMpd, type LiveDashWindow, type LiveMpd } from '@reelay/manifests';
import type { Logger } from '@reelay/observability';
import type { FetchOptions, LiveEgress } from './live-fetch.js';
import { fetchPlaylist } from './live-fetch.js';
import type { SegmentSource, SegmentWindow } from './segment-source.js';

/** A fixed-duration MPD is fetched again at least this often, whatever its minimumUpdatePeriod. */
export const MAX_REFETCH_MS = 30_000;
/**
 * A timeline MPD fetched this recently serves another read: the other track's of an A/V recording.
 * One track reads at most every 500 ms (MIN_REFRESH_MS), so a one-track recording never reuses one.
 */
export const SHARE_MS = 250;
/**
 * Video and audio whose newest segments end further apart than this (or three of their longest
 * segments, if more) are not on one timeline: they are not recorded together (see DashSource.read).
 */
export const MAX_APART_SECONDS = 10;

/** The MPD as last fetched and parsed, shared by the sources of one recording. */
export class MpdReader {
  private last?: { url: string; mpd: LiveMpd; at: number; maxAgeMs: number };
  private pending?: Promise<{ url: string; mpd: LiveMpd; at: number }>;

  constructor(
    private readonly egress: LiveEgress,
    public url: string,
    private readonly maxSegments?: number,
  ) {}

  /** The next read fetches the MPD again, whatever its cadence. */
  expire(): void {
    if (this.last) this.last.maxAgeMs = 0;
  }

  /** How long the MPD fetched at `at` may serve reads (set once its window says what it is). */
  keep(at: number, maxAgeMs: number): void {
    if (this.last?.at === at) this.last.maxAgeMs = maxAgeMs;
  }

  async get(options: FetchOptions): Promise<{ url: string; mpd: LiveMpd; at: number }> {
    if (this.last && Date.now() - this.last.at < this.last.maxAgeMs) return this.last;
    // Two tracks reading at once make one request.
    this.pending ??= this.fetch(options).finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async fetch(options: FetchOptions) {
    const at = Date.now();
    const got = await fetchPlaylist(this.egress, this.url, options);
    const mpd = readLiveMpd(got.text, this.maxSegments);
    this.url = got.url;
    this.last = { url: got.url, mpd, at, maxAgeMs: SHARE_MS };
    return this.last;
  }
}

export interface DashSourceOptions {
  representation?: string;
  type?: 'video' | 'audio';
  /** MAX_SEGMENTS: most S entries the MPD may hold (the extract's bound). */
  maxSegments?: number;
  /** The reader the other track of an A/V recording shares (default: one of this source's own). */
  mpd?: MpdReader;
  /** The other representation of an A/V recording: its timeline must agree with this one's. */
  partner?: {
    representation?: string;
    type?: 'video' | 'audio';
    /** An earlier attempt recorded something: timelines that disagree wait instead of failing the job. */
    recorded: boolean;
    /** Shared by both tracks: where a new recording starts, set by the first read that lists both. */
    start: { fromStart: boolean; at?: number };
  };
  log?: Logger;
}

const newestEnd = (w: LiveDashWindow) => {
  const last = w.segments.at(-1);
  return last && last.start + last.duration;
};

export class DashSource implements SegmentSource {
  private readonly mpd: MpdReader;
  private listed = false;
  private apart = false;

  constructor(
    egress: LiveEgress,
    url: string,
    private readonly options: DashSourceOptions,
  ) {
    this.mpd = options.mpd ?? new MpdReader(egress, url, options.maxSegments);
  }

  get url(): string {
    return this.mpd.url;
  }

  refetch(): void {
    this.mpd.expire();
  }

  async read(options: FetchOptions): Promise<SegmentWindow> {
    // A timeline lists a new segment only in a new MPD, so it is fetched at every read; segments of a
    // fixed duration come from the clock, so the MPD is fetched again only every minimumUpdatePeriod
    // (ffmpeg names 500 s there; at most MAX_REFETCH_MS) to see it change, or when a segment the clock
    // promised fails (refetch): the broadcast may have ended.
    const got = await this.mpd.get(options);
    const now = Date.now();
    const base = new URL(got.url);
    const { representation, type } = this.options;
    const w = liveDashWindow(got.mpd, base, { representation, type, maxListed: MAX_LISTED, now });
    this.mpd.keep(
      got.at,
      w.unit === 'number' && w.dynamic ? Math.min(MAX_REFETCH_MS, (w.minimumUpdatePeriod ?? 0) * 1000) : SHARE_MS,
    );
    const segments = this.options.partner
      ? this.lineUp(w, liveDashWindow(got.mpd, base, { ...this.options.partner, maxListed: MAX_LISTED, now }))
      : w.segments;
    if (segments.length > 0) this.listed = true;
    return {
      segments: segments.map((s) => ({
        seq: s.seq,
        next: s.next,
        url: s.url,
        duration: s.duration,
        init: w.init,
        discontinuity: false,
        at: s.start,
      })),
      targetDuration: w.maxSegmentDuration,
      ended: !w.dynamic,
      dropped: w.dropped,
      droppedSeconds: w.droppedSeconds,
      encrypted: w.encrypted,
      declared: w.codecs,
      unitSeconds: w.unit === 'ms' ? 0.001 : undefined,
    };
  }

  /**
   * This track's segments that the partner's timeline agrees with. Both tracks of one MPD share its
   * presentation timeline, so their newest segments end within about a segment of each other. If
   * they end further apart than MAX_APART_SECONDS (or three segments), the two cannot be joined in
   * sync: before anything was recorded the job fails saying so; later no segment is listed until
   * they agree again (the stall rule ends the recording if they never do), so the file holds only
   * what was recorded in step. A new recording starts both tracks at one time, the later of their
   * newest (or, from the start, oldest) segments' starts, chosen once: until this track lists
   * anything, its segments that end by then are left out.
   */
  private lineUp(own: LiveDashWindow, partner: LiveDashWindow): LiveDashWindow['segments'] {
    const pairing = this.options.partner!;
    const [a, b] = [newestEnd(own), newestEnd(partner)];
    if (a === undefined || b === undefined) return this.listed || pairing.recorded ? own.segments : [];
    const apart = Math.abs(a - b);
    const limit = Math.max(MAX_APART_SECONDS, 3 * Math.max(own.maxSegmentDuration, partner.maxSegmentDuration));
    if (apart > limit) {
      const why = `its ${own.representation} and ${partner.representation} representations' timelines are ${Math.round(apart)} s apart (more than ${limit} s)`;
      if (!this.listed && !pairing.recorded) {
        throw new ReelayError(
          'upstream_error',
          `The live DASH manifest's video and audio cannot be recorded in sync: ${why}. Download one representation alone (its url from the extract).`,
        );
      }
      if (!this.apart)
        this.options.log?.warn(
          { apart, limit },
          'live DASH: video and audio timelines disagree; no segment is taken until they agree (the stall rule ends the recording if they never do)',
        );
      this.apart = true;
      return [];
    }
    this.apart = false;
    if (this.listed || pairing.recorded) return own.segments;
    const pick = (w: LiveDashWindow) => (pairing.start.fromStart ? w.segments[0] : w.segments.at(-1)!).start;
    const at = (pairing.start.at ??= Math.max(pick(own), pick(partner)));
    return own.segments.filter((s) => s.start + s.duration > at + 0.001);
  }
}
