// Running jobs, so shutdown can stop their ffmpeg and hand them back to the queue once its grace
// period is over. Runs are kept apart even for one job id: after a lock lapsed, the queue may give
// the job to this worker again while the old run is still stopping.
interface Run {
  controller: AbortController;
  handedBack: boolean;
  lost: boolean;
}

export interface RunControl {
  signal: AbortSignal;
  handedBack: () => boolean;
  lost: () => boolean;
  /** This run is over: forget it (and only it). */
  finish: () => void;
}

export class ActiveJobs {
  private readonly runs = new Map<string, Run[]>();

  start(id: string): RunControl {
    const run: Run = { controller: new AbortController(), handedBack: false, lost: false };
    this.runs.set(id, [...(this.runs.get(id) ?? []), run]);
    return {
      signal: run.controller.signal,
      handedBack: () => run.handedBack,
      lost: () => run.lost,
      finish: () => {
        const left = (this.runs.get(id) ?? []).filter((r) => r !== run);
        if (left.length > 0) this.runs.set(id, left);
        else this.runs.delete(id);
      },
    };
  }

  /** How many runs are in progress. */
  get size(): number {
    let n = 0;
    for (const runs of this.runs.values()) n += runs.length;
    return n;
  }

  /** Stops every running job's ffmpeg and marks the job to go back to the queue; returns how many. */
  handBackAll(): number {
    for (const runs of this.runs.values()) {
      for (const run of runs) {
        run.handedBack = true;
        run.controller.abort();
      }
    }
    return this.size;
  }

  /**
   * Stops jobs whose lock could not be renewed (e.g. Redis was away longer than the lock): BullMQ
   * will give them to a worker again, so finishing this run would only do the work twice. Of two
   * runs of one id, the older one is the run that lost its lock.
   */
  lose(ids: string[]): number {
    let n = 0;
    for (const id of ids) {
      const run = this.runs.get(id)?.find((r) => !r.lost);
      if (!run) continue;
      run.lost = true;
      run.controller.abort();
      n++;
    }
    return n;
  }
}
