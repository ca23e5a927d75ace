// A recording's parts and state on the shared DATA_DIR (DATA_DIR/recordings/{job id}/), so a worker
// that dies mid-recording loses nothing already written: the next worker to take the job reads the
// state, starts a new part and appends. Each part is a run of contiguous segments (raw TS, or an
// fMP4 init section followed by its fragments); a gap or discontinuity starts the next part.
import { createWriteStream, type WriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Recording } from '@reelay/contracts';

export interface RecordingState extends Recording {
  /** Part files in order (names inside the folder). */
  parts: string[];
  /** The last media sequence written, and the segment duration then (to size a gap on resume). */
  lastSeq?: number;
  lastDuration?: number;
  /** The position of the segment after the last one written (absent in older states: lastSeq + 1). */
  nextSeq?: number;
  /** What the source declared its stream to be when the recording began (DASH mimeType;codecs). */
  declared?: string;
  /** The recording's codecs (`video:h264,audio:aac`), read at the first discontinuity or resume: a part with others ends the recording. */
  codecs?: string;
  /** The variant playlist being recorded (a master is resolved once). */
  playlist?: string;
  /**
   * Each part's stretch of presentation time, [start, end) in seconds, when its segments say where
   * they are (DASH): how the tracks of an A/V recording are lined up when the file is made.
   */
  spans?: [number, number][];
  /** Bytes of the last part that hold whole segments (a dead attempt may have written more). */
  partBytes: number;
  updatedAt: number;
}

export const recordingDir = (dataDir: string, id: string): string => path.join(dataDir, 'recordings', id);

export class RecordingStore {
  state: RecordingState = { seconds: 0, bytes: 0, gaps: [], parts: [], partBytes: 0, updatedAt: Date.now() };
  private out?: WriteStream;
  private outInit?: string;

  private constructor(readonly dir: string) {}

  /** Opens the job's folder; `resumed` says an earlier attempt recorded there. */
  static async open(dataDir: string, id: string): Promise<{ store: RecordingStore; resumed: boolean }> {
    const store = new RecordingStore(recordingDir(dataDir, id));
    await fs.mkdir(store.dir, { recursive: true });
    try {
      store.state = JSON.parse(await fs.readFile(path.join(store.dir, 'state.json'), 'utf8')) as RecordingState;
      // A part an attempt was writing when it died may end mid-segment: the state says how far it was whole.
      const last = store.state.parts.at(-1);
      if (last) await fs.truncate(path.join(store.dir, last), store.state.partBytes).catch(() => undefined);
      return { store, resumed: store.state.parts.length > 0 };
    } catch {
      return { store, resumed: false };
    }
  }

  /** The next segment goes into a new part (after a gap, a discontinuity, or a resume). */
  async breakPart(): Promise<void> {
    await this.closePart();
  }

  /** Appends one whole segment and saves the state, so the state never names bytes not on disk. */
  async append(
    segment: { seq: number; next?: number; duration: number; init?: string; at?: number },
    body: Buffer,
    initBody?: Buffer,
  ): Promise<void> {
    if (this.out && segment.init !== this.outInit) await this.closePart();
    const opened = !this.out;
    if (!this.out) {
      const name = `part-${String(this.state.parts.length).padStart(4, '0')}.${segment.init ? 'mp4' : 'ts'}`;
      this.out = createWriteStream(path.join(this.dir, name), { flags: 'w' });
      this.outInit = segment.init;
      this.state.parts.push(name);
      this.state.partBytes = 0;
      if (initBody) await this.write(initBody);
    }
    if (segment.at !== undefined) {
      const end = Math.round((segment.at + segment.duration) * 1000) / 1000;
      const spans = (this.state.spans ??= []);
      if (opened) spans.push([Math.round(segment.at * 1000) / 1000, end]);
      else if (spans.length > 0) spans[spans.length - 1][1] = end;
    }
    await this.write(body);
    this.state.seconds = Math.round((this.state.seconds + segment.duration) * 1000) / 1000;
    this.state.bytes += body.length;
    this.state.lastSeq = segment.seq;
    this.state.nextSeq = segment.next ?? segment.seq + 1;
    this.state.lastDuration = segment.duration;
    await this.save();
  }

  /** The first bytes of the first part (what ffprobe needs to tell its codecs). */
  async head(maxBytes: number): Promise<Buffer> {
    const first = this.state.parts[0];
    if (!first) return Buffer.alloc(0);
    const file = await fs.open(path.join(this.dir, first), 'r');
    try {
      const buf = Buffer.alloc(Math.min(maxBytes, first === this.state.parts.at(-1) ? this.state.partBytes : maxBytes));
      const { bytesRead } = await file.read(buf, 0, buf.length, 0);
      return buf.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  }

  addGap(seconds: number): void {
    const at = this.state.seconds;
    const last = this.state.gaps.at(-1);
    // Consecutive lost segments are one gap; the list is bounded (the Job shows at most 1000).
    if (last && last.at === at) last.seconds = Math.round((last.seconds + seconds) * 1000) / 1000;
    else if (this.state.gaps.length < 1000) this.state.gaps.push({ at, seconds: Math.round(seconds * 1000) / 1000 });
  }

  async save(): Promise<void> {
    this.state.updatedAt = Date.now();
    const file = path.join(this.dir, 'state.json');
    await fs.writeFile(`${file}.tmp`, JSON.stringify(this.state));
    await fs.rename(`${file}.tmp`, file);
  }

  private write(buf: Buffer): Promise<void> {
    const out = this.out!;
    this.state.partBytes += buf.length;
    return new Promise((resolve, reject) => out.write(buf, (err) => (err ? reject(err) : resolve())));
  }

  async closePart(): Promise<void> {
    const out = this.out;
    this.out = undefined;
    this.outInit = undefined;
    if (out)
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }

  async remove(): Promise<void> {
    await this.closePart().catch(() => undefined);
    await fs.rm(this.dir, { recursive: true, force: true });
  }
}
