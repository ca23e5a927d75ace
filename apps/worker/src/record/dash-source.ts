// One representation of a live DASH manifest (type="dynamic") as a segment source: the MPD is
// fetched again at each refresh (bounded like a playlist) and read by the extractors' DASH parser
// (dash-live.ts), which lists the newest MAX_LISTED segments of a SegmentTemplate with a timeline
// ($Number$ or $Time$) or a fixed duration on the clock. The MPD turning static ends the recording.
// Reads come at the recorder's cadence (half a segment duration, like HLS).
import type { FetchOptions, LiveEgress } from './live-fetch.js';
import { fetchPlaylist } from './live-fetch.js';
import { MAX_LISTED } from './live-playlist.js';
import type { SegmentSource, SegmentWindow } from './segment-source.js';

/** A fixed-duration MPD is fetched again at least this often, whatever its minimumUpdatePeriod. */
export const MAX_REFETCH_MS = 30_000;

export interface DashSourceOptions {
  representation?: string;
  type?: 'video' | 'audio';
  /** MAX_SEGMENTS: most S entries the MPD may hold (the extract's bound). */
  maxSegments?: number;
}

export class DashSource implements SegmentSource {
  private mpd?: { text: string; at: number; refetchMs: number };

  constructor(
    private readonly egress: LiveEgress,
    public url: string,
    private readonly options: DashSourceOptions,
  ) {}

  refetch(): void {
    if (this.mpd) this.mpd.refetchMs = 0;
  }

  async read(options: FetchOptions): Promise<SegmentWindow> {
    const now = Date.now();
    // A timeline lists a new segment only in a new MPD, so it is fetched at every read; segments of a
    // fixed duration come from the clock, so the MPD is fetched again only every minimumUpdatePeriod
    // (ffmpeg names 500 s there; at most MAX_REFETCH_MS) to see it change, or when a segment the clock
    // promised fails (refetch): the broadcast may have ended.
    if (!this.mpd || now - this.mpd.at >= this.mpd.refetchMs) {
      const got = await fetchPlaylist(this.egress, this.url, options);
      this.url = got.url;
      this.mpd = { text: got.text, at: now, refetchMs: 0 };
    }
    // Loaded when a DASH recording first needs it: the extractors package is not part of a worker's start.
    const { liveDashWindow } = await import('@reelay/extractors');
    const w = liveDashWindow(this.mpd.text, new URL(this.url), { ...this.options, maxListed: MAX_LISTED, maxSegments: this.options.maxSegments, now });
    if (this.mpd.at === now) this.mpd.refetchMs = w.unit === 'number' && w.dynamic ? Math.min(MAX_REFETCH_MS, (w.minimumUpdatePeriod ?? 0) * 1000) : 0;
    return {
      segments: w.segments.map((s) => ({ seq: s.seq, next: s.next, url: s.url, duration: s.duration, init: w.init, discontinuity: false })),
      targetDuration: w.maxSegmentDuration,
      ended: !w.dynamic,
      dropped: w.dropped,
      droppedSeconds: w.droppedSeconds,
      encrypted: w.encrypted,
      declared: w.codecs,
      unitSeconds: w.unit === 'ms' ? 0.001 : undefined,
    };
  }
}
