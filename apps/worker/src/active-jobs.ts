// Running jobs, so shutdown can stop their ffmpeg and hand them back to the queue once its grace
// period is over.
export class ActiveJobs {
  private readonly jobs = new Map<string, { controller: AbortController; handedBack: boolean }>();

  start(id: string): { signal: AbortSignal; handedBack: () => boolean } {
    const entry = { controller: new AbortController(), handedBack: false };
    this.jobs.set(id, entry);
    return { signal: entry.controller.signal, handedBack: () => entry.handedBack };
  }

  finish(id: string): void {
    this.jobs.delete(id);
  }

  get size(): number {
    return this.jobs.size;
  }

  /** Stops every running job's ffmpeg and marks the job to go back to the queue; returns how many. */
  handBackAll(): number {
    for (const entry of this.jobs.values()) {
      entry.handedBack = true;
      entry.controller.abort();
    }
    return this.jobs.size;
  }
}
