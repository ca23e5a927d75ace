// Bounds how many runs of an expensive subprocess (yt-dlp) happen at once in this process. Callers
// beyond the limit wait their turn in a bounded list; past that they are refused at once with 503,
// because a queue without bound would only turn a burst into time-outs for everyone.
import { ReelayError } from '@reelay/contracts';

export class RunLimiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly concurrency: number,
    readonly maxWaiting: number,
    /** What the 503's message says is busy. */
    private readonly what: string,
  ) {
    if (!(concurrency >= 1)) throw new RangeError('concurrency must be at least 1');
  }

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Runs fn when a slot is free; a caller that gives up (signal) leaves the wait list. */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(cancelled());
    if (this.running < this.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.maxWaiting) {
      return Promise.reject(
        new ReelayError('service_unavailable', `Too many ${this.what} are running; try again in a few seconds.`, {
          headers: { 'Retry-After': '5' },
        }),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = this.waiting.indexOf(entry);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(cancelled());
      };
      const entry = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    // The slot passes straight to the next caller, so `running` stays as it is.
    if (next) next();
    else this.running--;
  }
}

function cancelled(): ReelayError {
  return new ReelayError('upstream_error', 'The extraction was cancelled.');
}
