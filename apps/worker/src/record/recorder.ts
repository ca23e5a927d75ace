// The live recorder (Streamlink's shape): a reader that refreshes the source's window (an HLS playlist
// or a DASH manifest, segment-source.ts), a segment fetcher with retries whose failures become gaps,
// and a writer that appends whole segments to the recording's parts on the shared data dir. It ends
// on the stream's end, a stall (no new segment for three target durations), a stop, live.duration,
// MAX_RECORD_SECONDS, MAX_MEDIA_BYTES, or a stream that changes its codecs.
import { setTimeout as delay } from 'node:timers/promises';
import type { RecordingEnd } from '@reelay/contracts';
import type { LiveSegment } from '@reelay/manifests';
import type { Logger } from '@reelay/observability';
import { UNKNOWN_CODECS } from './codecs.js';
import { fetchSegment, type LiveEgress } from './live-fetch.js';
import type { RecordingStore } from './recording-store.js';
import { RefreshCadence } from './refresh.js';
import { HlsSource, type SegmentSource, type SegmentWindow } from './segment-source.js';

/** How much of the first part is read to learn the recording's codecs (its init section and first segments). */
export const PROBE_HEAD_BYTES = 2 * 1024 * 1024;
/** Refreshes in a row that may fail before the stall rule decides. */
export const STALL_TARGETS = 3;

export interface RecorderOptions {
  egress: LiveEgress;
  url: string;
  /** Where segments are listed; absent: the HLS playlist at `url` (or the variant an earlier attempt resolved). */
  source?: SegmentSource;
  headers?: Record<string, string>;
  store: RecordingStore;
  resumed: boolean;
  fromStart: boolean;
  /** live.duration, seconds of media. */
  duration?: number;
  maxSeconds: number;
  maxBytes: number;
  /** The bytes that count against maxBytes (default: this store's): the two tracks of an A/V recording share one budget. */
  bytesUsed?: () => number;
  /** Stop: end gracefully with what was recorded. */
  stop: AbortSignal;
  /** Cancel or shutdown: end now (throws). */
  signal: AbortSignal;
  onProgress: () => void;
  /** The codecs of a segment (ffprobe), to catch a stream that changes them at a discontinuity. */
  codecsOf?: (body: Buffer, init?: Buffer) => Promise<string>;
  log: Logger;
}

/** Records until one of the ends; the store holds everything written. */
export async function record(o: RecorderOptions): Promise<RecordingEnd> {
  const { store } = o;
  const started = Date.now();
  const halt = AbortSignal.any([o.signal, o.stop]);
  const fetchOpts = (deadlineMs: number) => ({ headers: o.headers, signal: halt, deadlineMs });
  const source: SegmentSource = o.source ?? new HlsSource(o.egress, store.state.playlist ?? o.url);
  const used = o.bytesUsed ?? (() => store.state.bytes);
  /** Seconds between two positions of the window (a gap): times convert, counts are segments of `each`. */
  const span = (from: number, to: number, w: SegmentWindow, each = w.targetDuration) =>
    w.unitSeconds !== undefined ? (to - from) * w.unitSeconds : (to - from) * each;

  const cadence = new RefreshCadence();
  let readAt = Date.now();
  let current = await source.read(fetchOpts(10_000));
  if (current.encrypted)
    throw new Error('the live stream is encrypted (EXT-X-KEY or ContentProtection), which the recorder does not read');
  store.state.playlist = source.url;
  const inits = new Map<string, Buffer>();
  let checkedResume = false;
  let next: number | undefined;
  let lastAdvance = Date.now();
  if (o.resumed) await store.breakPart();

  for (;;) {
    o.signal.throwIfAborted();
    if (o.stop.aborted) return 'stopped';
    const pl = current;
    // A source that declares another stream than the one recorded (a DASH representation whose
    // codecs change) cannot be joined on: the recording ends with what came before.
    if (pl.declared !== undefined) {
      if (store.state.declared === undefined) store.state.declared = pl.declared;
      else if (pl.declared !== store.state.declared) {
        o.log.warn(
          { was: store.state.declared, now: pl.declared },
          'the live stream declares other codecs: the recording ends here',
        );
        return 'codec_change';
      }
    }
    const listed = pl.segments;
    const first = listed[0]?.seq;
    if (next === undefined && listed.length > 0) {
      const last = store.state.lastSeq;
      const resumeAt = store.state.nextSeq ?? (last === undefined ? undefined : last + 1);
      const newest = listed.at(-1)!;
      if (
        o.resumed &&
        resumeAt !== undefined &&
        first !== undefined &&
        resumeAt >= first &&
        resumeAt <= (newest.next ?? newest.seq + 1)
      ) {
        next = resumeAt; // still listed: an earlier attempt's end is continued without loss
      } else {
        const edge = o.fromStart && !o.resumed ? listed[0] : newest;
        if (o.resumed && resumeAt !== undefined && edge.seq > resumeAt)
          store.addGap(span(resumeAt, edge.seq, pl, store.state.lastDuration ?? pl.targetDuration));
        else if (o.resumed) store.addGap(0); // a restart whose loss cannot be measured (sequence reset)
        if (o.fromStart && !o.resumed && pl.dropped > 0) store.addGap(pl.droppedSeconds);
        next = edge.seq;
      }
    }
    const fresh = next === undefined ? [] : listed.filter((s) => s.seq >= next!);
    if (fresh.length > 0 && next !== undefined && fresh[0].seq > next) {
      // Segments that left the window before they could be fetched.
      store.addGap(span(next, fresh[0].seq, pl));
      await store.breakPart();
    }
    for (const seg of fresh) {
      o.signal.throwIfAborted();
      if (o.stop.aborted) return 'stopped';
      if (used() >= o.maxBytes) return 'max_bytes';
      const outcome = await take(seg, pl);
      if (outcome === 'codec_change') return 'codec_change';
      if (outcome === 'ended') return 'stream_end';
      next = seg.next ?? seg.seq + 1;
      o.onProgress();
      if (o.duration !== undefined && store.state.seconds >= o.duration) return 'duration';
      if (store.state.seconds >= o.maxSeconds) return 'max_duration';
    }
    if (fresh.length > 0) lastAdvance = Date.now();
    if (pl.ended) return 'stream_end';
    const targetMs = pl.targetDuration * 1000;
    if (Date.now() - lastAdvance > STALL_TARGETS * targetMs) return 'stalled';
    if (Date.now() - started > o.maxSeconds * 1000) return 'max_duration';
    o.onProgress();
    // About one read per segment, timed from the start of the last one (refresh.ts).
    const newest = listed.at(-1)?.duration ?? 0;
    const segmentMs = newest > 0 ? Math.min(newest * 1000, targetMs) : targetMs;
    const wait = readAt + cadence.next(fresh.length, segmentMs) - Date.now();
    if (wait > 0) await delay(wait, undefined, { signal: halt }).catch(() => undefined);
    if (o.stop.aborted) return 'stopped';
    o.signal.throwIfAborted();
    try {
      readAt = Date.now();
      current = await source.read(fetchOpts(10_000));
    } catch (err) {
      if (halt.aborted) continue;
      o.log.warn(
        { err: (err as Error).message },
        'live playlist refresh failed; the stall rule ends the recording if it lasts',
      );
    }
  }

  async function take(seg: LiveSegment, pl: SegmentWindow): Promise<'codec_change' | 'ended' | void> {
    if (seg.discontinuity) await store.breakPart();
    const deadline = Math.max(10_000, 3 * pl.targetDuration * 1000);
    let init: Buffer | undefined;
    if (seg.init) {
      const cached = inits.get(seg.init);
      const got = cached ?? (await fetchSegment(o.egress, seg.init, 16 * 1024 * 1024, fetchOpts(deadline)));
      if (Buffer.isBuffer(got)) {
        if (!cached) inits.clear(); // one init kept: a stream that changes it often holds no more
        inits.set(seg.init, got);
        init = got;
      } else return lost(seg, pl, got.failed);
    }
    const body = await fetchSegment(o.egress, seg.url, Math.max(1, o.maxBytes - used()), fetchOpts(deadline));
    if (!Buffer.isBuffer(body)) return lost(seg, pl, body.failed);
    // Parts of other codecs cannot be joined into one file: at a discontinuity (or a resume) the
    // segment's codecs are compared with the recording's, and a change ends it before that segment.
    // The recording's own are read then, from its first part on disk, not from every first segment:
    // most streams never have a discontinuity, and each ffprobe costs more CPU than a minute of
    // segments (bench/record.mjs).
    if (o.codecsOf && store.state.parts.length > 0 && (seg.discontinuity || (o.resumed && !checkedResume))) {
      checkedResume = true;
      if (store.state.codecs === undefined || store.state.codecs === UNKNOWN_CODECS) {
        store.state.codecs = await o.codecsOf(await store.head(PROBE_HEAD_BYTES)).catch(() => UNKNOWN_CODECS);
      }
      const codecs = await o.codecsOf(body, init).catch(() => UNKNOWN_CODECS);
      if (codecs !== UNKNOWN_CODECS && store.state.codecs !== UNKNOWN_CODECS && codecs !== store.state.codecs) {
        o.log.warn(
          { was: store.state.codecs, now: codecs, seq: seg.seq },
          'the live stream changed its codecs: the recording ends here',
        );
        return 'codec_change';
      }
    }
    await store.append(seg, body, init);
  }

  async function lost(seg: LiveSegment, pl: SegmentWindow, why: string): Promise<'ended' | void> {
    if (halt.aborted) return; // a stop or cancel cut it short: not a gap in the stream
    // A segment the clock promised (DASH with a fixed duration) fails when the broadcast has just
    // ended: a source read again now that has ended without it says so, and it is no gap.
    if (source.refetch) {
      source.refetch();
      const now = await source.read(fetchOpts(10_000)).catch(() => undefined);
      if (now?.ended && !now.segments.some((s) => s.seq === seg.seq)) {
        current = now;
        return 'ended';
      }
    }
    o.log.warn({ seq: seg.seq, why }, 'live segment failed after retries: recorded as a gap');
    store.addGap(seg.duration || pl.targetDuration);
    await store.breakPart();
    await store.save();
  }
}
