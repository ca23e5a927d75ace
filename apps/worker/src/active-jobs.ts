// Running jobs, so shutdown can stop their ffmpeg and hand them back to the queue once its grace
// period is over.
export class ActiveJobs {
  private readonly jobs = new Map<string, { controller: AbortController; handedBack: boolean; lost: boolean }>();

  start(id: string): { signal: AbortSignal; handedBack: () => boolean; lost: () => boolean } {
    const entry = { controller: new AbortController(), handedBack: false, lost: false };
    this.jobs.set(id, entry);
    return { signal: entry.controller.signal, handedBack: () => entry.handedBack, lost: () => entry.lost };
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

  /**
   * Stops jobs whose lock could not be renewed (e.g. Redis was away longer than the lock): BullMQ
   * will give them to a worker again, so finishing this run would only do the work twice.
   */
  lose(ids: string[]): number {
    let n = 0;
    for (const id of ids) {
      const entry = this.jobs.get(id);
      if (!entry) continue;
      entry.lost = true;
      entry.controller.abort();
      n++;
    }
    return n;
  }
}
