// A job's progress in Redis: written at most once per interval, in order, without blocking ffmpeg's
// output; and put back to 0 when the job returns to the queue, so a waiting job never shows the
// percent of an attempt that is over.
import type { Job } from 'bullmq';
import type { Logger } from '@reelay/observability';

export class ProgressWriter {
  private lastAt = 0;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly job: Pick<Job, 'updateProgress'>,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  report(percent: number): void {
    const now = Date.now();
    if (percent >= 100 || now - this.lastAt < this.intervalMs) return; // 100 is written once the artifact is stored
    this.lastAt = now;
    this.write(percent);
  }

  /** After the pending writes, so a late percent of the ended attempt cannot overwrite the 0. */
  reset(): Promise<void> {
    this.lastAt = Number.POSITIVE_INFINITY; // no further reports of this attempt
    this.write(0);
    return this.chain;
  }

  settled(): Promise<void> {
    return this.chain;
  }

  private write(percent: number): void {
    this.chain = this.chain
      .then(() => this.job.updateProgress(percent))
      .catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'could not record progress'));
  }
}
