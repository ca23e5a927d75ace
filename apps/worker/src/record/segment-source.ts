// What the recorder reads a live stream through: a source that, on each refresh, answers the window
// of segments it lists now. The HLS source (a media playlist, a master resolved to its best variant)
// and the DASH source (dash-source.ts, one representation of a dynamic MPD) both fit it, so the
// fetcher, the writer and the gap, stall, stop and resume rules (recorder.ts) are written once.
import { parseLivePlaylist, type LiveSegment } from '@reelay/manifests';
import { fetchPlaylist, type FetchOptions, type LiveEgress } from './live-fetch.js';

export interface SegmentWindow {
  segments: LiveSegment[];
  /** Seconds: the unit of the stall rule (three of them without a new segment) and of refreshes. */
  targetDuration: number;
  /** The broadcast has ended: nothing will be added. */
  ended: boolean;
  /** Segments listed beyond the bound, dropped from the oldest end, and how long they last. */
  dropped: number;
  droppedSeconds: number;
  encrypted: boolean;
  /** What the source declares its stream to be (DASH's mimeType and codecs): a change ends the recording. */
  declared?: string;
  /**
   * Seconds per unit of `seq` when positions are times (DASH timelines: 0.001); absent when a
   * position is a segment count (HLS media sequence, DASH numbers), whose gaps are counted in segments.
   */
  unitSeconds?: number;
}

export interface SegmentSource {
  /** Where the stream is read from now (a master's variant once resolved): saved for a resumed attempt. */
  readonly url: string;
  read(options: FetchOptions): Promise<SegmentWindow>;
  /** The next read fetches the manifest again, whatever its cadence (sources that keep one between reads). */
  refetch?(): void;
}

/** A live HLS playlist; a master is resolved to its best variant on the first read, which is kept. */
export class HlsSource implements SegmentSource {
  constructor(
    private readonly egress: LiveEgress,
    public url: string,
  ) {}

  async read(options: FetchOptions): Promise<SegmentWindow> {
    const got = await fetchPlaylist(this.egress, this.url, options);
    let parsed = parseLivePlaylist(got.text, got.url);
    let url = got.url;
    if (parsed.kind === 'master') {
      const variant = await fetchPlaylist(this.egress, parsed.variant, options);
      parsed = parseLivePlaylist(variant.text, variant.url);
      if (parsed.kind === 'master') throw new Error('a master playlist names another master');
      url = variant.url;
    }
    this.url = url;
    return {
      segments: parsed.segments,
      targetDuration: parsed.targetDuration,
      ended: parsed.ended,
      dropped: parsed.dropped,
      droppedSeconds: parsed.dropped * parsed.targetDuration,
      encrypted: parsed.encrypted,
    };
  }
}
