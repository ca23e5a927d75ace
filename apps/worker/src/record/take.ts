// What run-recording.ts drives, whatever is recorded: one stream (an HLS playlist, or one DASH
// representation) into one store, or a video and an audio representation of a live DASH manifest
// into two (dash-av.ts). Each answers the Job's `recording`, records until an end, and makes the file.
import type { JobInput, Recording, RecordingEnd } from '@reelay/contracts';
import type { ChildLimits } from '@reelay/media';
import type { Logger } from '@reelay/observability';
import { segmentCodecs } from './codecs.js';
import { DashSource } from './dash-source.js';
import { finalize, type Finalized, type FinalizeOptions } from './finalize.js';
import type { LiveEgress } from './live-fetch.js';
import { record } from './recorder.js';
import { RecordingStore } from './recording-store.js';

export interface TakeRun {
  egress: LiveEgress;
  ffprobe: string;
  limits?: ChildLimits;
  fromStart: boolean;
  /** live.duration, seconds of media. */
  duration?: number;
  maxSeconds: number;
  maxBytes: number;
  stop: AbortSignal;
  signal: AbortSignal;
  log: Logger;
}

export interface Take {
  /** An earlier attempt recorded here. */
  readonly resumed: boolean;
  /** The Job's `recording` now. */
  view(): Recording;
  record(run: TakeRun): Promise<RecordingEnd>;
  /** Closes the open part(s) and saves the state. */
  close(): Promise<void>;
  /** The file of everything recorded (undefined when nothing was). */
  make(opts: Omit<FinalizeOptions, 'dir'>): Promise<Finalized | undefined>;
  /** Removes every part and the folder. */
  remove(): Promise<void>;
}

/** One stream into one store (DATA_DIR/recordings/{id}/). */
export class OneTake implements Take {
  private constructor(
    private readonly store: RecordingStore,
    readonly resumed: boolean,
    private readonly input: JobInput,
  ) {}

  static async open(dataDir: string, id: string, input: JobInput): Promise<OneTake> {
    const { store, resumed } = await RecordingStore.open(dataDir, id);
    return new OneTake(store, resumed, input);
  }

  view(): Recording {
    const { seconds, bytes, gaps } = this.store.state;
    return { seconds, bytes, gaps: gaps.map((g) => ({ ...g })) };
  }

  record(run: TakeRun): Promise<RecordingEnd> {
    const { store, input } = this;
    // A DASH source names its representation; an HLS one is read from the variant an earlier attempt resolved.
    const source =
      input.stream_profile === 'dash'
        ? new DashSource(run.egress, store.state.playlist ?? input.url, {
            representation: input.representation,
            type: input.representation_type,
          })
        : undefined;
    return record({
      egress: run.egress,
      url: input.url,
      source,
      headers: input.headers,
      store,
      resumed: this.resumed,
      fromStart: run.fromStart,
      duration: run.duration,
      maxSeconds: run.maxSeconds,
      maxBytes: run.maxBytes,
      stop: run.stop,
      signal: run.signal,
      codecsOf: (body, init) =>
        segmentCodecs(body, init, { dir: store.dir, ffprobe: run.ffprobe, signal: run.signal, limits: run.limits }),
      onProgress: () => undefined, // the beat writes it
      log: run.log,
    });
  }

  async close(): Promise<void> {
    await this.store.closePart();
    await this.store.save();
  }

  async make(opts: Omit<FinalizeOptions, 'dir'>): Promise<Finalized | undefined> {
    const { parts, bytes, spans } = this.store.state;
    if (parts.length === 0 || bytes === 0) return undefined;
    // DASH parts say how long each is (its span); a gap between them takes no time in the file.
    const durations = spans?.length === parts.length ? spans.map(([start, end]) => end - start) : undefined;
    return finalize({ ...opts, dir: this.store.dir, parts, durations });
  }

  remove(): Promise<void> {
    return this.store.remove();
  }
}
