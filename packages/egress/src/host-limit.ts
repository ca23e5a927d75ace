// Fair shares of one origin host. Every exchange with a host takes a slot in its "fresh" lane, which
// is small and queued (with a deadline that answers upstream_timeout); once the exchange has its
// response headers, or has waited longer than `stallAfterMs` for them, it moves to the host's "held"
// lane. So requests a host stalls, and streams whose clients read slowly, are bounded (fresh + held
// per host) without making a new request to the same host wait behind them: it only waits for the
// fresh lane, which holds young exchanges and the overflow of a full held lane.
import { ReelayError } from '@reelay/contracts';

export interface HostLimits {
  /** Exchanges per host that are new (no headers yet, younger than stallAfterMs). */
  fresh: number;
  /** Exchanges per host that have headers (streaming a body) or that the host has stalled. */
  held: number;
  /** How long a new exchange may wait for a fresh slot before it fails with upstream_timeout. */
  queueTimeoutMs: number;
  /** After this long without response headers an exchange counts as stalled and moves to held. */
  stallAfterMs: number;
}

export const DEFAULT_HOST_LIMITS: HostLimits = { fresh: 64, held: 256, queueTimeoutMs: 5_000, stallAfterMs: 1_000 };

interface Waiter {
  grant: (slot: HostSlot) => void;
  fail: (err: Error) => void;
}

interface HostState {
  fresh: number;
  held: number;
  queue: Waiter[];
  /** Fresh slots that asked to move to the held lane while it was full, oldest first. */
  toHold: HostSlot[];
}

/** One exchange's place in its host's lanes. */
export class HostSlot {
  private lane: 'fresh' | 'held' | 'done' = 'fresh';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly limiter: HostLimiter,
    private readonly state: HostState,
    private readonly host: string,
  ) {
    this.timer = setTimeout(() => this.hold(), limiter.limits.stallAfterMs);
    this.timer.unref();
  }

  /** Leaves the fresh lane for the held one (headers arrived, or stalled) if the held lane has room. */
  hold(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.lane !== 'fresh') return;
    if (this.state.held >= this.limiter.limits.held) {
      // It moves when a held slot comes free (release), or the fresh lane would stay full meanwhile.
      if (!this.state.toHold.includes(this)) this.state.toHold.push(this);
      return;
    }
    this.leaveToHold();
    this.lane = 'held';
    this.state.fresh--;
    this.state.held++;
    this.limiter.next(this.host, this.state);
  }

  /** Gives the slot back; safe to call more than once. */
  release(): void {
    if (this.lane === 'done') return;
    clearTimeout(this.timer);
    const was = this.lane;
    this.state[was]--;
    this.lane = 'done';
    this.leaveToHold();
    if (was === 'held') this.state.toHold.shift()?.hold();
    this.limiter.next(this.host, this.state);
  }

  private leaveToHold(): void {
    const at = this.state.toHold.indexOf(this);
    if (at >= 0) this.state.toHold.splice(at, 1);
  }
}

export class HostLimiter {
  private readonly hosts = new Map<string, HostState>();

  constructor(readonly limits: HostLimits = DEFAULT_HOST_LIMITS) {}

  /** A slot for one exchange with `host`, at once or after queueing; upstream_timeout if it waits too long. */
  acquire(host: string, signal?: AbortSignal): Promise<HostSlot> {
    let state = this.hosts.get(host);
    if (!state) {
      state = { fresh: 0, held: 0, queue: [], toHold: [] };
      this.hosts.set(host, state);
    }
    if (state.fresh < this.limits.fresh && state.queue.length === 0) {
      state.fresh++;
      return Promise.resolve(new HostSlot(this, state, host));
    }
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const queued = state;
    return new Promise<HostSlot>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const at = queued.queue.indexOf(waiter);
        if (at >= 0) queued.queue.splice(at, 1);
      };
      const waiter: Waiter = {
        grant: (slot) => {
          leave();
          resolve(slot);
        },
        fail: (err) => {
          leave();
          reject(err);
        },
      };
      const onAbort = () => waiter.fail(abortError(signal!));
      const timer = setTimeout(() => {
        waiter.fail(
          new ReelayError(
            'upstream_timeout',
            `Too many requests to ${host} are in progress; the origin did not take this one in time.`,
          ),
        );
        this.forget(host, queued);
      }, this.limits.queueTimeoutMs);
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      queued.queue.push(waiter);
    });
  }

  /** What a host holds now (for metrics and tests). */
  usage(host: string): { fresh: number; held: number; queued: number } {
    const state = this.hosts.get(host);
    return { fresh: state?.fresh ?? 0, held: state?.held ?? 0, queued: state?.queue.length ?? 0 };
  }

  /** Called when a fresh slot may have come free: hands it to the first in the queue. */
  next(host: string, state: HostState): void {
    while (state.fresh < this.limits.fresh && state.queue.length > 0) {
      const waiter = state.queue[0];
      state.fresh++;
      waiter.grant(new HostSlot(this, state, host)); // grant() removes the waiter from the queue
    }
    this.forget(host, state);
  }

  /** Drops an idle host's entry, so the map does not grow with every host ever contacted. */
  private forget(host: string, state: HostState): void {
    if (state.fresh === 0 && state.held === 0 && state.queue.length === 0 && this.hosts.get(host) === state)
      this.hosts.delete(host);
  }
}

/** The error an aborted signal stands for: its reason when that is an Error, else an AbortError. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error
    ? reason
    : Object.assign(new Error('The request was cancelled.'), { name: 'AbortError' });
}
