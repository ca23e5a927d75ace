// Progress on stderr: a cli-progress bar when stderr is a terminal, otherwise a plain line at every
// tenth of the way (a log or a pipe gets no carriage returns or escape codes).
import cliProgress, { type Options, type Params } from 'cli-progress';

// A CommonJS package: its parts come off the default export.
const { Format, SingleBar } = cliProgress;

export interface Progress {
  /** unit `bytes`: value and total are bytes (total unknown: no bar); `percent`: total is 100. */
  start(label: string, unit: 'bytes' | 'percent', total?: number, value?: number): void;
  update(value: number, status?: string): void;
  stop(): void;
}

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i += 1;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  return stream.isTTY ? new BarProgress(stream) : new LineProgress(stream);
}

class BarProgress implements Progress {
  private bar?: InstanceType<typeof SingleBar>;
  private unit: 'bytes' | 'percent' = 'bytes';
  private label = '';
  private known = true;

  constructor(private readonly stream: NodeJS.WriteStream) {}

  start(label: string, unit: 'bytes' | 'percent', total?: number, value = 0): void {
    this.stop();
    Object.assign(this, { label, unit, known: total !== undefined });
    const format = (options: Options, params: Params, payload: { status?: string }) => {
      const bar = this.known
        ? `${Format.BarFormat(params.progress, options)} ${Math.floor(params.progress * 100)}%`
        : '';
      const amount =
        this.unit === 'bytes'
          ? ` ${formatBytes(params.value)}${this.known ? ` / ${formatBytes(params.total)}` : ''}`
          : '';
      const eta =
        this.known && params.value > 0 && params.eta > 0 && Number.isFinite(params.eta)
          ? ` ETA ${Format.TimeFormat(params.eta, options, 1)}`
          : '';
      return `${this.label}${payload.status ? ` ${payload.status}` : ''} ${bar}${amount}${eta}`.trimEnd();
    };
    this.bar = new SingleBar({
      stream: this.stream,
      format,
      hideCursor: true,
      barsize: 30,
      etaBuffer: 20,
      fps: 10,
      barCompleteChar: '█',
      barIncompleteChar: '░',
    });
    this.bar.start(total ?? 0, value, {});
  }

  update(value: number, status?: string): void {
    this.bar?.update(value, status === undefined ? {} : { status });
  }

  stop(): void {
    this.bar?.stop();
    this.bar = undefined;
  }
}

class LineProgress implements Progress {
  private label = '';
  private total?: number;
  private unit: 'bytes' | 'percent' = 'bytes';
  private lastStep = -1;
  private lastStatus?: string;

  constructor(private readonly stream: NodeJS.WriteStream) {}

  start(label: string, unit: 'bytes' | 'percent', total?: number, value = 0): void {
    // The first update prints the first line (with the job's status, which start does not know).
    Object.assign(this, {
      label,
      unit,
      total,
      lastStep: total ? Math.floor((value / total) * 10) : -1,
      lastStatus: undefined,
    });
  }

  update(value: number, status?: string): void {
    const step = this.total ? Math.floor((value / this.total) * 10) : -1;
    if (step === this.lastStep && status === this.lastStatus) return;
    this.lastStep = step;
    this.lastStatus = status;
    const percent = this.total ? ` ${step * 10}%` : '';
    const amount =
      this.unit === 'bytes' ? ` (${formatBytes(value)}${this.total ? ` of ${formatBytes(this.total)}` : ''})` : '';
    this.stream.write(`${this.label}${status ? ` ${status}` : ''}${percent}${amount}\n`);
  }

  stop(): void {}
}
