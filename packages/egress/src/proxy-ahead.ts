// The proxy serving ahead: a client that reads a playlist's segments one by one (ffmpeg's HLS
// demuxer) waits a round trip and one connection's throughput per segment. Once the client asks for
// a segment of a planned playlist, the session's window fetches the next ones, `concurrency` at a
// time, through egress (the same guard, the session's request budget and byte limit), and answers the
// client's later GETs from memory, in the order it asks (only once it reads in order: what a seek
// skips is not fetched). Bounded: at most `concurrency` × `segmentCap` bytes are buffered per
// session; a larger segment, or one the window has no room for, is simply not served ahead (the
// client's own request fetches it). A failed segment is retried; one that keeps failing is left to
// the client's own request, which records the failure.
import type http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeResponse } from './decode.js';
import type { ProxyEgress, ProxyHooks } from './proxy-deps.js';

/** Largest segment served ahead. */
export const SEGMENT_CAP_BYTES = 8 * 1024 * 1024;
/** Retries of a segment whose fetch failed (a reset, a 5xx, a 429) before it is left to the client. */
const RETRIES = 2;
const RETRY_PAUSE_MS = 200;

interface Entry {
  state: 'loading' | 'ready' | 'failed';
  chunks: Buffer[];
  bytes: number;
  headers: http.OutgoingHttpHeaders;
  done: Promise<void>;
  abort: AbortController;
}

interface Plan {
  urls: string[];
  /** The next segment the client is expected to ask for. */
  cursor: number;
  /** The segment the client asked for last. */
  last: number | undefined;
  /**
   * Whether the client reads it in order (asked for two segments in a row): only then is it fetched
   * ahead, so a clip that seeks past segments (ffmpeg's -ss on a playlist) does not fetch them.
   */
  active: boolean;
  entries: Map<number, Entry>;
}

/**
 * What the window needs of the session it serves (proxy-session.ts's ProxySession, which holds the
 * window: named here by shape, so the session depends on the window and not the other way round).
 */
export interface AheadSession {
  /** Aborted when the session ends or is cut off: the window empties. */
  readonly signal: AbortSignal;
  /** The client's request headers that may go upstream. */
  forwardHeaders(incoming: http.IncomingHttpHeaders): Record<string, string>;
  /** Counts one request against the session's budget; false once past it. */
  spendRequest(): boolean;
  /** Counts bytes against the session's limit; false once past it. */
  count(bytes: number): boolean;
}

export interface AheadOptions {
  egress: ProxyEgress;
  session: AheadSession;
  concurrency: number;
  hooks: ProxyHooks;
  segmentCap?: number;
}

export class AheadWindow {
  /** Bytes buffered now, and the most ever buffered at once (never above limitBytes). */
  bytes = 0;
  peakBytes = 0;
  /** Upstream fetches made for the window. */
  fetches = 0;
  readonly limitBytes: number;
  private readonly segmentCap: number;
  private readonly plans = new Map<string, Plan>();
  private headers: Record<string, string> = {};
  private loading = 0;

  constructor(private readonly options: AheadOptions) {
    this.segmentCap = options.segmentCap ?? SEGMENT_CAP_BYTES;
    this.limitBytes = options.concurrency * this.segmentCap;
    options.session.signal.addEventListener('abort', () => this.clear(), { once: true });
  }

  /** The segments of one media playlist, in order (the first plan naming a URL keeps it). */
  plan(urls: readonly URL[]): void {
    if (urls.length < 2) return;
    const plan: Plan = { urls: urls.map((u) => u.href), cursor: 0, last: undefined, active: false, entries: new Map() };
    for (const url of plan.urls) if (!this.plans.has(url)) this.plans.set(url, plan);
  }

  /** Answers the request from the window; false when it is not the window's to answer. */
  async serve(target: URL, req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> {
    if (req.method !== 'GET' || !wholeBody(req.headers.range)) return false;
    const plan = this.plans.get(target.href);
    if (!plan) return false;
    const index = plan.urls.indexOf(target.href);
    const inOrder = plan.last !== undefined && index === plan.last + 1;
    plan.last = index;
    if (!inOrder && !plan.entries.has(index)) {
      // A first request or a seek: answered as asked; reading ahead resumes once it reads in order.
      plan.active = false;
      for (const [i, entry] of plan.entries) this.drop(plan, i, entry);
      return false;
    }
    const { range: _range, 'if-range': _ifRange, ...headers } = this.options.session.forwardHeaders(req.headers);
    this.headers = headers;
    plan.cursor = index;
    plan.active = true;
    for (const [i, entry] of plan.entries)
      if (i < index || i >= index + this.options.concurrency) this.drop(plan, i, entry);
    if (!plan.entries.has(index)) this.start(plan, index);
    this.pump();
    const entry = plan.entries.get(index)!;
    await entry.done;
    this.drop(plan, index, entry);
    if (plan.cursor === index) plan.cursor = index + 1;
    this.pump();
    if (res.destroyed) return true; // the client left while it waited: nothing to answer
    if (entry.state !== 'ready') return false;
    res.writeHead(200, { ...entry.headers, 'content-length': String(entry.bytes) });
    res.end(Buffer.concat(entry.chunks, entry.bytes));
    return true;
  }

  /** Starts fetches ahead of each plan's cursor, nearest first, while fewer than `concurrency` load. */
  private pump(): void {
    const active = new Set(this.plans.values());
    for (let d = 0; d < this.options.concurrency; d++) {
      for (const plan of active) {
        if (this.loading >= this.options.concurrency || this.options.session.signal.aborted) return;
        const i = plan.cursor + d;
        if (i < plan.urls.length && !plan.entries.has(i) && plan.active) this.start(plan, i);
      }
    }
  }

  private start(plan: Plan, index: number): void {
    const abort = new AbortController();
    const entry: Entry = { state: 'loading', chunks: [], bytes: 0, headers: {}, abort, done: Promise.resolve() };
    plan.entries.set(index, entry);
    this.loading += 1;
    entry.done = this.load(entry, new URL(plan.urls[index])).finally(() => {
      this.loading -= 1;
      this.pump();
    });
  }

  private async load(entry: Entry, url: URL): Promise<void> {
    const { egress, session, hooks } = this.options;
    for (let attempt = 0; attempt <= RETRIES; attempt++) {
      if (attempt > 0) await sleep(RETRY_PAUSE_MS * attempt).catch(() => {});
      if (entry.abort.signal.aborted || session.signal.aborted || !session.spendRequest()) break;
      this.fetches += 1;
      try {
        const res = await egress.open(url, {
          method: 'GET',
          headers: this.headers,
          identity: true,
          followRedirects: false,
          allowErrorStatus: true,
          signal: AbortSignal.any([entry.abort.signal, session.signal]),
        });
        if (res.status !== 200) {
          res.body.destroy();
          if (res.status >= 500 || res.status === 429) continue;
          break; // a redirect or a refusal: the client's own request meets it and records it
        }
        const decoded = decodeResponse(res, 'GET');
        if (typeof decoded === 'string') {
          res.body.destroy();
          break;
        }
        for await (const chunk of decoded.body as AsyncIterable<Buffer>) {
          if (entry.bytes + chunk.length > this.segmentCap || this.bytes + chunk.length > this.limitBytes) {
            decoded.body.destroy();
            return this.fail(entry); // no room: the client's own request streams it
          }
          if (!session.count(chunk.length)) return this.fail(entry);
          hooks.onBytes?.(chunk.length);
          entry.chunks.push(chunk);
          entry.bytes += chunk.length;
          this.bytes += chunk.length;
          this.peakBytes = Math.max(this.peakBytes, this.bytes);
        }
        entry.headers = pick(decoded.headers, ['content-type', 'last-modified', 'etag']);
        entry.state = 'ready';
        return;
      } catch {
        this.release(entry);
      }
    }
    this.fail(entry);
  }

  private fail(entry: Entry): void {
    this.release(entry);
    entry.state = 'failed';
  }

  private release(entry: Entry): void {
    this.bytes -= entry.bytes;
    entry.bytes = 0;
    entry.chunks = [];
  }

  private drop(plan: Plan, index: number, entry: Entry): void {
    plan.entries.delete(index);
    entry.abort.abort();
    if (entry.state !== 'loading') this.bytes -= entry.bytes;
    else this.release(entry);
  }

  private clear(): void {
    for (const plan of new Set(this.plans.values())) for (const [i, entry] of plan.entries) this.drop(plan, i, entry);
  }
}

/** A request for a whole body: no Range, or one from byte 0 to the end. */
function wholeBody(range: string | undefined): boolean {
  return range === undefined || /^bytes=0-\s*$/.test(range);
}

function pick(headers: Record<string, string | string[] | undefined>, names: string[]): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const name of names) if (headers[name] !== undefined) out[name] = headers[name];
  return out;
}
