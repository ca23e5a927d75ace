// One client's view of the guarded proxy (a worker job's ffmpeg, one yt-dlp run): its credentials,
// the request headers it may send, the bytes it has moved against its limit, and what went wrong
// upstream, so that the caller fails with the right code. The proxy (proxy.ts) creates and feeds it.
import { timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { ReelayError } from '@reelay/contracts';
import { rateLimitOf } from './errors.js';
import type { AheadWindow } from './proxy-ahead.js';

/** Appended to a session's user name by a client that reads only a file's start (headerReadProxyUrl). */
export const HEADER_READ_SUFFIX = '+head';

/** What went wrong upstream during a session, as the proxy saw it. */
export interface SessionFailures {
  /** A request or tunnel named a blocked address, scheme or port (the first such message). */
  blocked?: string;
  /** The session moved more than its byte limit and was cut off. */
  tooLarge?: boolean;
  /** The origin answered 404 or 410. */
  notFound?: number;
  /** The origin failed: a 5xx or 429, a reset, a timeout (worth retrying). */
  unavailable?: ReelayError;
  /** The origin refused in another way (401, 403…). */
  refused?: number;
  /**
   * The proxy refused to go on (a manifest built to loop or grow, more requests than the client's
   * manifests declare, an encoding it cannot count): why, as a sentence. Retrying would repeat it.
   */
  limit?: string;
}

export interface SessionOptions {
  /** Request header names the client may send upstream, besides the always-safe ones. */
  headerNames?: Iterable<string>;
  /** Bytes the session may move (proxied bodies, and tunnel traffic both ways). */
  maxBytes: number;
  /** Requests the session may make before allowRequests() raises it; unbounded when undefined. */
  maxRequests?: number;
  /** Called once when the session is cut off (blocked address or byte limit): stop the client now. */
  onCutOff?: () => void;
}

/** What the proxy hands a session's constructor (subclasses add what their client needs). */
export interface SessionInit {
  id: string;
  user: string;
  pass: Buffer;
  proxyPort: number;
  options: SessionOptions;
}

// Sent on every proxied request whatever the client: what ranges and ICY streams need.
const ALWAYS_FORWARDED = ['range', 'if-range', 'accept', 'icy-metadata'];
// Never forwarded even when listed: they describe the hop to the proxy, not the request.
const NEVER_FORWARDED = /^(?:proxy-.*|host|connection|keep-alive|te|trailer|transfer-encoding|upgrade|content-length)$/;

export class ProxySession {
  readonly failures: SessionFailures = {};
  readonly id: string;
  readonly user: string;
  bytes = 0;
  /** Requests made so far. */
  requests = 0;
  /** Range parts fetched for large files (proxy-ranges.ts), beside the client's requests. */
  rangeParts = 0;
  /** The most bytes Range parts held at once ahead of the one the client read next (proxy-ranges.ts). */
  rangeHeldPeak = 0;
  /** When (Date.now()) the first and the last byte reached the client: the job's log says where its time went. */
  firstByteAt: number | undefined;
  lastByteAt: number | undefined;
  /** Segments served ahead, when the proxy fetches in parallel (proxy-ahead.ts). */
  ahead: AheadWindow | undefined;
  /**
   * Files (or tails) at least this large may come in parallel parts (proxy-ranges.ts; default its
   * RANGE_THRESHOLD_BYTES). A client that reads a whole file once, in order, lowers it: for it parts
   * cost no seeks, only their requests.
   */
  rangeThresholdBytes: number | undefined;
  private requestBudget: number | undefined;
  private readonly pass: Buffer;
  private readonly proxyPort: number;
  private readonly options: SessionOptions;
  private readonly controller = new AbortController();
  private readonly headerNames: readonly string[];

  constructor(init: SessionInit) {
    this.id = init.id;
    this.user = init.user;
    this.pass = init.pass;
    this.proxyPort = init.proxyPort;
    this.options = init.options;
    this.requestBudget = init.options.maxRequests;
    const listed = [...(init.options.headerNames ?? [])]
      .map((h) => h.toLowerCase())
      .filter((h) => !NEVER_FORWARDED.test(h));
    this.headerNames = [...new Set([...ALWAYS_FORWARDED, ...listed])];
  }

  /** `http://user:pass@127.0.0.1:port`. Holds the credentials: never log it. */
  get proxyUrl(): string {
    return `http://${this.user}:${this.pass.toString()}@127.0.0.1:${this.proxyPort}`;
  }

  /**
   * The same session for a client that reads only a file's start (ffprobe finding a duration): its
   * requests are never split into Range parts, which would fetch megabytes ahead that it closes
   * unread. The user name carries the mark (HEADER_READ_SUFFIX); the password is the session's.
   */
  get headerReadProxyUrl(): string {
    return `http://${this.user}${HEADER_READ_SUFFIX}:${this.pass.toString()}@127.0.0.1:${this.proxyPort}`;
  }

  /** How the proxy's log lines name this session. */
  get logFields(): Record<string, unknown> {
    return { session: this.id };
  }

  /** Aborted when the session ends or is cut off; in-flight requests and tunnels follow it. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  matches(pass: Buffer): boolean {
    return pass.length === this.pass.length && timingSafeEqual(pass, this.pass);
  }

  forwardHeaders(incoming: http.IncomingHttpHeaders): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of this.headerNames) {
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

  /** An origin's error status; its headers tell a rate limit (429, 503 with Retry-After) from an outage. */
  recordStatus(status: number, headers?: Record<string, string | string[] | undefined>): void {
    if (status === 404 || status === 410) this.failures.notFound ??= status;
    else if (status >= 500 || status === 429)
      this.failures.unavailable ??=
        rateLimitOf(status, headers) ?? new ReelayError('upstream_error', `The origin failed with HTTP ${status}.`);
    else if (status >= 400 && status !== 416) this.failures.refused ??= status; // 416: a range past the end, which clients handle
  }

  /** Adds bytes moved; false (and the session cut off) once past the limit. */
  count(bytes: number): boolean {
    this.bytes += bytes;
    if (bytes > 0) {
      this.lastByteAt = Date.now();
      this.firstByteAt ??= this.lastByteAt;
    }
    if (this.bytes <= this.options.maxBytes) return true;
    this.failures.tooLarge = true;
    this.cutOff();
    return false;
  }

  /** Raises the request budget (by what a manifest the client fetched declares). */
  allowRequests(count: number): void {
    if (this.requestBudget !== undefined) this.requestBudget += count;
  }

  get maxRequests(): number | undefined {
    return this.requestBudget;
  }

  /** Counts one request; false (and the session cut off) once past the budget. */
  spendRequest(): boolean {
    this.requests += 1;
    if (this.requestBudget === undefined || this.requests <= this.requestBudget) return true;
    this.refuse(`The run made more than ${this.requestBudget} requests, more than the manifests it fetched declare.`);
    return false;
  }

  /** The proxy will not go on for this client: recorded (the first reason), and the session cut off. */
  refuse(message: string): void {
    this.failures.limit ??= message;
    this.cutOff();
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
