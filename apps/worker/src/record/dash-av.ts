// A live DASH recording of video AND audio: the job names a video and an audio representation of one
// dynamic MPD (the pair the shared chooseSource picks), and each is recorded as a track by the same
// recorder as a one-stream recording, so the fetch, gap, stall, stop, resume and bound rules are the
// same. The tracks go side by side into folders of their own (DATA_DIR/recordings/{id}/video and
// …/audio), share one MPD reader (one fetch and parse serves both when their reads fall together)
// and one byte budget, and one track's end ends the other. The file lines the tracks up on the MPD's
// presentation timeline (av-timeline.ts), so a gap in one track never shifts the other.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { JobInput, Recording, RecordingEnd } from '@reelay/contracts';
import { segmentCodecs } from './codecs.js';
import { avTimeline, type AvTimeline } from './av-timeline.js';
import { DashSource, MpdReader } from './dash-source.js';
import { finalize, finalizeAv, type Finalized, type FinalizeOptions } from './finalize.js';
import { record } from './recorder.js';
import { recordingDir, RecordingStore } from './recording-store.js';
import type { Take, TakeRun } from './take.js';

export type TrackName = 'video' | 'audio';

interface Track {
  name: TrackName;
  input: JobInput;
  store: RecordingStore;
  resumed: boolean;
}

/** A job that records a video and an audio representation of one live DASH manifest: its inputs as [video, audio]. */
export function avInputs(inputs: readonly JobInput[]): [JobInput, JobInput] | undefined {
  const [video, audio] = inputs;
  if (inputs.length !== 2 || video.stream_profile !== 'dash' || audio.stream_profile !== 'dash') return undefined;
  return [video, audio];
}

/** A track that reached live.duration or MAX_RECORD_SECONDS lets the other reach it; any other end ends both. */
const ownEnd = (end: RecordingEnd) => end === 'duration' || end === 'max_duration';

export class AvTake implements Take {
  private constructor(
    private readonly dir: string,
    private readonly tracks: Track[],
  ) {}

  static async open(dataDir: string, id: string, inputs: [JobInput, JobInput]): Promise<AvTake> {
    const names: TrackName[] = ['video', 'audio'];
    const tracks = await Promise.all(
      names.map(async (name, i) => {
        const { store, resumed } = await RecordingStore.open(dataDir, path.join(id, name));
        return { name, input: inputs[i], store, resumed };
      }),
    );
    return new AvTake(recordingDir(dataDir, id), tracks);
  }

  get resumed(): boolean {
    return this.tracks.some((t) => t.resumed);
  }

  private timeline(): AvTimeline {
    return avTimeline(
      this.tracks.map((t) => ({
        name: t.name,
        parts: t.store.state.parts,
        spans: t.store.state.spans ?? [],
        gaps: t.store.state.gaps,
      })),
    );
  }

  /** `seconds` is the file's length (either track has media), `bytes` both tracks', `gaps` each track's, in the file's time. */
  view(): Recording {
    const { seconds, gaps } = this.timeline();
    return { seconds, bytes: this.tracks.reduce((sum, t) => sum + t.store.state.bytes, 0), gaps };
  }

  async record(run: TakeRun): Promise<RecordingEnd> {
    const [video, audio] = this.tracks;
    const mpd = new MpdReader(run.egress, video.store.state.playlist ?? audio.store.state.playlist ?? video.input.url);
    const recorded = this.tracks.some((t) => t.store.state.parts.length > 0);
    const start = { fromStart: run.fromStart };
    const bytes = () => this.tracks.reduce((sum, t) => sum + t.store.state.bytes, 0);
    const halt = new AbortController(); // one track's end stops the other
    const failed = new AbortController(); // one track's failure ends the other at once
    const signal = AbortSignal.any([run.signal, failed.signal]);
    const stop = AbortSignal.any([run.stop, halt.signal]);
    let ended: RecordingEnd | undefined;
    let error: { err: unknown } | undefined;
    await Promise.all(
      this.tracks.map(async (track) => {
        const partner = track === video ? audio : video;
        const log = run.log.child({ track: track.name });
        const source = new DashSource(run.egress, mpd.url, {
          representation: track.input.representation,
          type: track.input.representation_type ?? track.name,
          mpd,
          partner: {
            representation: partner.input.representation,
            type: partner.input.representation_type ?? partner.name,
            recorded,
            start,
          },
          log,
        });
        // live.duration is counted in the file's time, where a stretch one track lost still counts:
        // each track records up to it, so both end together whatever either lost.
        const done = new AbortController();
        const reached = () => {
          const i = this.tracks.indexOf(track);
          if (run.duration !== undefined && this.timeline().tracks[i].end >= run.duration) done.abort();
        };
        try {
          const end = await record({
            egress: run.egress,
            url: track.input.url,
            source,
            headers: track.input.headers,
            store: track.store,
            resumed: track.resumed,
            fromStart: run.fromStart,
            maxSeconds: run.maxSeconds,
            maxBytes: run.maxBytes,
            bytesUsed: bytes,
            stop: AbortSignal.any([stop, done.signal]),
            signal,
            codecsOf: (body, init) =>
              segmentCodecs(body, init, { dir: track.store.dir, ffprobe: run.ffprobe, signal, limits: run.limits }),
            onProgress: reached, // the beat writes the Job's recording
            log,
          }).then((end) => (done.signal.aborted ? 'duration' : end));
          if (!halt.signal.aborted || run.stop.aborted) ended ??= end;
          if (!ownEnd(end)) halt.abort();
        } catch (err) {
          // The first failure is the one to report: the other track then ends on the abort it caused.
          if (!failed.signal.aborted) error = { err };
          failed.abort();
        }
      }),
    );
    if (error) throw error.err;
    return ended ?? 'stopped';
  }

  async close(): Promise<void> {
    for (const t of this.tracks) {
      await t.store.closePart();
      await t.store.save();
    }
  }

  async make(opts: Omit<FinalizeOptions, 'dir'>): Promise<Finalized | undefined> {
    const withMedia = this.tracks.filter((t) => t.store.state.parts.length > 0 && t.store.state.bytes > 0);
    if (withMedia.length === 0) return undefined;
    // A track that recorded nothing (its representation never listed a segment): the file is the other's.
    if (withMedia.length === 1) {
      const { parts, spans } = withMedia[0].store.state;
      return finalize({
        ...opts,
        dir: withMedia[0].store.dir,
        parts,
        durations: spans?.length === parts.length ? spans.map(([start, end]) => end - start) : undefined,
      });
    }
    const { tracks } = this.timeline();
    return finalizeAv({
      ...opts,
      dir: this.dir,
      tracks: this.tracks.map((t, i) => ({ folder: t.name, plan: tracks[i] })),
    });
  }

  async remove(): Promise<void> {
    for (const t of this.tracks) await t.store.remove();
    await fs.rm(this.dir, { recursive: true, force: true });
  }
}
