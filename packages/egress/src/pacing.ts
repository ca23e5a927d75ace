// Platform pacing: the requests an extractor makes to its platform's API (RequestOptions.platform)
// take one of that platform's few slots, so a burst of extracts reaches a platform with at most
// `concurrency` requests at a time, the rest waiting their turn. A platform that answers 429 or 503
// with a Retry-After of at most 10 s is asked once more after it (GET and HEAD only: the rest are
// not safe to repeat); otherwise the answer is 503 upstream_rate_limited, passing on the
// platform's Retry-After when it gave one. Every paced request ends in one outcome for the metrics.
import { ReelayError } from '@reelay/contracts';
import { abortError } from './host-limit.js';

export type PlatformOutcome = 'ok' | 'retried' | 'rate_limited' | 'error';

export interface PacingOptions {
  /** Requests in flight per platform (PACING_CONCURRENCY_PER_PLATFORM). */
  concurrency: number;
  /** The longest Retry-After that is waited for and retried once. */
  maxRetryAfterMs: number;
  /** How long a request may wait for its platform's slot before it fails with upstream_timeout. */
  queueTimeoutMs: number;
  onOutcome?: (platform: string, outcome: PlatformOutcome) => void;
}

export const DEFAULT_PACING: PacingOptions = { concurrency: 8, maxRetryAfterMs: 10_000, queueTimeoutMs: 30_000 };

interface Gate {
  running: number;
  queue: (() => void)[];
}

export class PlatformPacer {
  private readonly gates = new Map<string, Gate>();

  constructor(readonly options: PacingOptions = DEFAULT_PACING) {}

  /** What a platform has in flight and waiting (for tests and metrics). */
  usage(platform: string): { running: number; queued: number } {
    const gate = this.gates.get(platform);
    return { running: gate?.running ?? 0, queued: gate?.queue.length ?? 0 };
  }

  /** A slot of the platform's share; call the returned function once the exchange is done with. */
  acquire(platform: string, signal?: AbortSignal): Promise<() => void> {
    let gate = this.gates.get(platform);
    if (!gate) this.gates.set(platform, (gate = { running: 0, queue: [] }));
    const g = gate;
    // A new release function per grant: each can give its slot back once.
    const slot = () => {
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const next = g.queue.shift();
        if (next) return next(); // the slot passes straight to the next in line
        g.running--;
        if (g.running === 0 && this.gates.get(platform) === g) this.gates.delete(platform);
      };
    };
    if (g.running < this.options.concurrency) {
      g.running++;
      return Promise.resolve(slot());
    }
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const at = g.queue.indexOf(grant);
        if (at >= 0) g.queue.splice(at, 1);
      };
      const grant = () => {
        leave();
        resolve(slot());
      };
      const onAbort = () => {
        leave();
        reject(abortError(signal!));
      };
      const timer = setTimeout(() => {
        leave();
        reject(
          new ReelayError(
            'upstream_timeout',
            `Too many requests to ${platform} are in progress; this one did not get its turn in time.`,
          ),
        );
      }, this.options.queueTimeoutMs);
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      g.queue.push(grant);
    });
  }

  /** Milliseconds to wait before the one retry, or undefined when this answer is not retried. */
  retryDelay(status: number, retryAfter: number | undefined, attempt: number, method: string): number | undefined {
    if (!isPacingStatus(status) || attempt > 0 || retryAfter === undefined) return undefined;
    if (method !== 'GET' && method !== 'HEAD') return undefined;
    const ms = retryAfter * 1000;
    return ms <= this.options.maxRetryAfterMs ? ms : undefined;
  }

  record(platform: string, outcome: PlatformOutcome): void {
    this.options.onOutcome?.(platform, outcome);
  }
}

export function isPacingStatus(status: number): boolean {
  return status === 429 || status === 503;
}

/** The longest Retry-After passed on: an origin asking for more (a day, a year) is answered with this. */
export const MAX_RETRY_AFTER_SECONDS = 3600;

/**
 * The 503 a rate limit becomes (a platform's, or any origin's: `who` names it), with its Retry-After
 * (seconds, at most MAX_RETRY_AFTER_SECONDS) when it gave one.
 */
export function rateLimitedError(who: string, status: number, retryAfter: number | undefined): ReelayError {
  const seconds = retryAfter === undefined ? undefined : Math.min(retryAfter, MAX_RETRY_AFTER_SECONDS);
  const when = seconds !== undefined ? ` for ${seconds} s` : '';
  return new ReelayError(
    'upstream_rate_limited',
    `${who} is rate limiting requests (${status})${when}; try again later.`,
    {
      headers: seconds !== undefined ? { 'Retry-After': String(seconds) } : {},
    },
  );
}

/**
 * Retry-After as whole seconds from now: delta-seconds or an HTTP-date (RFC 9110 10.2.3); undefined
 * when absent or unreadable. A date in the past is 0.
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw);
  // An HTTP-date starts with the day's name; Date.parse alone would take "-5" for a year.
  const at = /^[a-z]{3},? /i.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** Waits ms, or rejects when the caller gives up first. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
