// Parsing of ffmpeg's `-progress` output and the clamped, throttled percentage reported from it.

/** One `-progress` block: the key=value lines up to and including `progress=continue|end`. */
export type ProgressBlock = Record<string, string>;

/** Splits `-progress` output (arriving in arbitrary chunks) into blocks. */
export class ProgressParser {
  private partial = '';
  private block: ProgressBlock = {};

  constructor(private readonly onBlock: (block: ProgressBlock) => void) {}

  push(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    for (const raw of lines) {
      const line = raw.trim();
      const eq = line.indexOf('=');
      if (eq <= 0) continue; // not a key=value line (ffmpeg writes nothing else here)
      const key = line.slice(0, eq);
      this.block[key] = line.slice(eq + 1);
      if (key === 'progress') {
        const done = this.block;
        this.block = {};
        this.onBlock(done);
      }
    }
  }
}

/**
 * Seconds of output written so far. `out_time_us` is microseconds; `out_time_ms` is, despite its name,
 * also microseconds in ffmpeg (a long-standing quirk kept for compatibility). Early blocks say `N/A`.
 */
export function outTimeSeconds(block: ProgressBlock): number | undefined {
  for (const key of ['out_time_us', 'out_time_ms']) {
    const value = block[key];
    if (value === undefined) continue;
    const micros = Number(value);
    if (Number.isFinite(micros)) return micros / 1e6;
  }
  return undefined;
}

/**
 * Whole percent while running, clamped to [0, 99]: 100 is kept for a run that has finished and
 * succeeded, since ffmpeg may still be writing the trailer (or moving moov for faststart) when the
 * output time reaches the duration.
 */
export function runningPercent(outSeconds: number, durationSeconds: number): number {
  if (!(durationSeconds > 0)) return 0;
  return Math.min(99, Math.max(0, Math.floor((outSeconds / durationSeconds) * 100)));
}

/**
 * Throttle: a callback only when the whole percent rises. This bounds a run to at most 101 calls
 * whatever its length or ffmpeg's block rate, needs no timers, and never reports a value going back.
 */
export class ProgressThrottle {
  private last = -1;

  constructor(private readonly report: (percent: number) => void) {}

  update(percent: number): void {
    if (percent <= this.last) return;
    this.last = percent;
    this.report(percent);
  }

  finish(): void {
    this.update(100);
  }
}
