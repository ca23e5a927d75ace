// The live recorder (Streamlink's shape): a playlist reader that refreshes at the target duration, a
// segment fetcher with retries whose failures become gaps, and a writer that appends whole segments
// to the recording's parts on the shared data dir. It ends on the stream's end, a stall (no new
// segment for three target durations), a stop, live.duration, MAX_RECORD_SECONDS or MAX_MEDIA_BYTES.
import { setTimeout as delay } from 'node:timers/promises';
import type { RecordingEnd } from '@reelay/contracts';
import type { Logger } from '@reelay/observability';
import { UNKNOWN_CODECS } from './codecs.js';
import { fetchPlaylist, fetchSegment, type LiveEgress } from './live-fetch.js';
import { parseLivePlaylist, type LivePlaylist, type LiveSegment } from './live-playlist.js';
import type { RecordingStore } from './recording-store.js';

/** Refresh bounds whatever the playlist claims: never faster than twice a second, never slower than 30 s. */
export const MIN_REFRESH_MS = 500;
export const MAX_REFRESH_MS = 30_000;
/** Refreshes in a row that may fail before the stall rule decides. */
export const STALL_TARGETS = 3;

export interface RecorderOptions {
  egress: LiveEgress;
  url: string;
  headers?: Record<string, string>;
  store: RecordingStore;
  resumed: boolean;
  fromStart: boolean;
  /** live.duration, seconds of media. */
  duration?: number;
  maxSeconds: number;
  maxBytes: number;
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
  const read = async (url: string): Promise<{ url: string; playlist: LivePlaylist }> => {
    const got = await fetchPlaylist(o.egress, url, fetchOpts(10_000));
    const parsed = parseLivePlaylist(got.text, got.url);
    if (parsed.kind === 'master') {
      const variant = await fetchPlaylist(o.egress, parsed.variant, fetchOpts(10_000));
      const inner = parseLivePlaylist(variant.text, variant.url);
      if (inner.kind === 'master') throw new Error('a master playlist names another master');
      return { url: variant.url, playlist: inner };
    }
    return { url: got.url, playlist: parsed };
  };

  let current = await read(store.state.playlist ?? o.url);
  if (current.playlist.encrypted) throw new Error('the live stream is encrypted (EXT-X-KEY), which the recorder does not read');
  store.state.playlist = current.url;
  const inits = new Map<string, Buffer>();
  let checkedResume = false;
  let next: number | undefined;
  let lastAdvance = Date.now();
  if (o.resumed) await store.breakPart();

  for (;;) {
    o.signal.throwIfAborted();
    if (o.stop.aborted) return 'stopped';
    const pl = current.playlist;
    const listed = pl.segments;
    const first = listed[0]?.seq;
    if (next === undefined && listed.length > 0) {
      const last = store.state.lastSeq;
      if (o.resumed && last !== undefined && first !== undefined && last + 1 >= first && last < listed.at(-1)!.seq + 1) {
        next = last + 1; // still listed: an earlier attempt's end is continued without loss
      } else {
        const edge = o.fromStart && !o.resumed ? listed[0] : listed.at(-1)!;
        if (o.resumed && last !== undefined && edge.seq > last + 1) store.addGap((edge.seq - last - 1) * (store.state.lastDuration ?? pl.targetDuration));
        else if (o.resumed) store.addGap(0); // a restart whose loss cannot be measured (sequence reset)
        if (o.fromStart && !o.resumed && pl.dropped > 0) store.addGap(pl.dropped * pl.targetDuration);
        next = edge.seq;
      }
    }
    const fresh = next === undefined ? [] : listed.filter((s) => s.seq >= next!);
    if (fresh.length > 0 && next !== undefined && fresh[0].seq > next) {
      // Segments that left the window before they could be fetched.
      store.addGap((fresh[0].seq - next) * pl.targetDuration);
      await store.breakPart();
    }
    for (const seg of fresh) {
      o.signal.throwIfAborted();
      if (o.stop.aborted) return 'stopped';
      if (store.state.bytes >= o.maxBytes) return 'max_bytes';
      if ((await take(seg, pl)) === 'codec_change') return 'codec_change';
      next = seg.seq + 1;
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
    // Half a target duration between reads (Streamlink waits a whole one after a change): a new
    // segment is seen within half a target duration, which keeps the lag under one (bench/record.mjs).
    const wait = Math.min(MAX_REFRESH_MS, Math.max(MIN_REFRESH_MS, targetMs / 2));
    await delay(wait, undefined, { signal: halt }).catch(() => undefined);
    if (o.stop.aborted) return 'stopped';
    o.signal.throwIfAborted();
    try {
      current = await read(current.url);
    } catch (err) {
      if (halt.aborted) continue;
      o.log.warn({ err: (err as Error).message }, 'live playlist refresh failed; the stall rule ends the recording if it lasts');
    }
  }

  async function take(seg: LiveSegment, pl: LivePlaylist): Promise<'codec_change' | void> {
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
    const body = await fetchSegment(o.egress, seg.url, Math.max(1, o.maxBytes - store.state.bytes), fetchOpts(deadline));
    if (!Buffer.isBuffer(body)) return lost(seg, pl, body.failed);
    // The codecs are read from the first segment and at each discontinuity (or resume): parts of
    // other codecs cannot be joined into one file, so the recording ends before such a segment.
    if (o.codecsOf && (store.state.codecs === undefined || seg.discontinuity || (o.resumed && store.state.parts.length > 0 && !checkedResume))) {
      checkedResume = true;
      const codecs = await o.codecsOf(body, init).catch(() => UNKNOWN_CODECS);
      if (store.state.codecs === undefined || store.state.codecs === UNKNOWN_CODECS) store.state.codecs = codecs;
      else if (codecs !== UNKNOWN_CODECS && codecs !== store.state.codecs) {
        o.log.warn({ was: store.state.codecs, now: codecs, seq: seg.seq }, 'the live stream changed its codecs: the recording ends here');
        return 'codec_change';
      }
    }
    await store.append(seg, body, init);
  }

  async function lost(seg: LiveSegment, pl: LivePlaylist, why: string): Promise<void> {
    if (halt.aborted) return; // a stop or cancel cut it short: not a gap in the stream
    o.log.warn({ seq: seg.seq, why }, 'live segment failed after retries: recorded as a gap');
    store.addGap(seg.duration || pl.targetDuration);
    await store.breakPart();
    await store.save();
  }
}
