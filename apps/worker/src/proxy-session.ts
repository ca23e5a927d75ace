// One job attempt's view of the egress proxy: its credentials, the request headers it may send, the
// bytes it has fetched against its limit, and what went wrong upstream (so the job fails with the
// right code). The proxy (proxy.ts) creates sessions and feeds them.
import { timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { ReelayError } from '@reelay/contracts';
import { isSettableHeader } from '@reelay/media';

/** What went wrong upstream during a job, as the proxy saw it. */
export interface SessionFailures {
  /** A request named a blocked address or scheme (the first such message). */
  blocked?: string;
  /** The job fetched more than its byte limit and was cut off. */
  tooLarge?: boolean;
  /** The origin answered 404 or 410. */
  notFound?: number;
  /** The origin failed: a 5xx or 429, a reset, a timeout (worth retrying). */
  unavailable?: ReelayError;
  /** The origin refused in another way (401, 403…). */
  refused?: number;
}

export interface SessionOptions {
  /** Request header names the job's inputs carry (forwarded besides the always-safe ones). */
  headerNames?: Iterable<string>;
  maxBytes: number;
  /** Called once when the session is cut off (blocked address or byte limit): stop ffmpeg now. */
  onCutOff?: () => void;
}

// Sent on every request whatever the job: what ffmpeg needs for ranges and ICY streams.
const ALWAYS_FORWARDED = ['range', 'if-range', 'accept', 'icy-metadata'];

export class ProxySession {
  readonly failures: SessionFailures = {};
  bytes = 0;
  private readonly controller = new AbortController();
  private readonly headerNames: ReadonlySet<string>;

  constructor(
    readonly jobId: string,
    readonly user: string,
    private readonly pass: Buffer,
    private readonly proxyPort: number,
    private readonly options: SessionOptions,
  ) {
    this.headerNames = new Set([...(options.headerNames ?? [])].filter(isSettableHeader).map((h) => h.toLowerCase()));
  }

  /** Environment for ffmpeg and ffprobe. Holds the credentials: never log it. */
  get env(): Record<string, string | undefined> {
    // no_proxy is removed, not emptied: ffmpeg matches an empty entry against host names ending in
    // a dot, and would then connect to `http://host./` directly.
    return { http_proxy: `http://${this.user}:${this.pass.toString()}@127.0.0.1:${this.proxyPort}`, no_proxy: undefined, NO_PROXY: undefined };
  }

  /** Aborted when the session ends or is cut off; in-flight upstream requests follow it. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  matches(pass: Buffer): boolean {
    return pass.length === this.pass.length && timingSafeEqual(pass, this.pass);
  }

  forwardHeaders(incoming: http.IncomingHttpHeaders): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of [...ALWAYS_FORWARDED, ...this.headerNames]) {
      const value = incoming[name];
      if (typeof value === 'string') out[name] = value;
      else if (Array.isArray(value)) out[name] = value.join(', ');
    }
    return out;
  }

  recordError(error: ReelayError): void {
    if (error.code === 'url_blocked') {
      this.failures.blocked ??= error.message;
      this.cutOff();
    } else {
      this.failures.unavailable ??= error;
    }
  }

  recordStatus(status: number): void {
    if (status === 404 || status === 410) this.failures.notFound ??= status;
    else if (status >= 500 || status === 429) this.failures.unavailable ??= new ReelayError('upstream_error', `The origin failed with HTTP ${status}.`);
    else if (status >= 400 && status !== 416) this.failures.refused ??= status; // 416: a range past the end, which ffmpeg handles
  }

  /** Adds bytes sent to ffmpeg; false (and the session cut off) once past the limit. */
  count(bytes: number): boolean {
    this.bytes += bytes;
    if (this.bytes <= this.options.maxBytes) return true;
    this.failures.tooLarge = true;
    this.cutOff();
    return false;
  }

  hasFailure(): boolean {
    return Object.values(this.failures).some((v) => v !== undefined);
  }

  end(): void {
    this.controller.abort();
  }

  private cutOff(): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort();
    this.options.onCutOff?.();
  }
}
