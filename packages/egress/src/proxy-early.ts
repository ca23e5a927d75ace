// Answers opened before the client asks. A worker job knows which files its ffmpeg will read from
// the first byte (a merge's video and audio), but ffmpeg asks for them only once its process has
// started, and for the second only once it has read the first one's header: against an origin 40 ms
// away that was ~130 ms of process start, a round trip and the 50 ms pace probe before the first
// Range parts went out. Opened when the job starts, by the same code as the client's request
// (openUpstream: egress's guard, the session's request budget, failures recorded, parts started),
// an answer waits for its request and is sent as if the request had opened it. Only a request for
// the same URL from byte 0 with the same headers takes it; any other request for that URL, and the
// session's end, drop it. Its bytes count against the session's limit as they reach the client;
// what it holds before that is the ranged answer's own bound (proxy-ranges.ts), one per file.
import type http from 'node:http';
import { followSession, openUpstream, send, type ForwardContext, type Opened } from './proxy-forward.js';
import type { ProxySession } from './proxy-session.js';

/** Request headers that do not tell two requests for a whole file apart. */
const IGNORED = new Set(['range', 'accept', 'icy-metadata']);

interface Early {
  headers: Record<string, string>;
  abort: AbortController;
  opened: Promise<Opened>;
}

/** One session's answers opened early, by the URL they are for. */
export class EarlyAnswers {
  private readonly answers = new Map<string, Early>();

  constructor(
    private readonly ctx: ForwardContext,
    private readonly session: ProxySession,
  ) {
    session.signal.addEventListener('abort', () => this.clear(), { once: true });
  }

  /**
   * Opens `target` as the client's GET from byte 0 with `incoming` headers would. False when it is
   * not opened (already open, the session over, or its request budget spent).
   */
  open(target: URL, incoming: http.IncomingHttpHeaders): boolean {
    if (this.answers.has(target.href) || this.session.signal.aborted || !this.session.spendRequest()) return false;
    const headers = this.session.forwardHeaders(incoming);
    const abort = followSession(this.session);
    const opened = openUpstream(this.ctx, this.session, target, { method: 'GET', headers, fromMiddle: false }, abort.signal);
    // Read a little now: a file in Range parts starts its parts at once, not when the client comes.
    void opened.then((o) => o?.body?.read(0));
    this.answers.set(target.href, { headers, abort, opened });
    return true;
  }

  /** Sends the answer opened for this request; false when there is none (the request goes upstream). */
  async serve(target: URL, req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> {
    const early = this.answers.get(target.href);
    if (!early) return false;
    this.answers.delete(target.href);
    if (req.method !== 'GET' || !fromStart(req.headers) || !sameHeaders(early.headers, this.session.forwardHeaders(req.headers))) {
      early.abort.abort();
      void early.opened.then((o) => o?.body?.destroy());
      return false;
    }
    res.once('close', () => early.abort.abort());
    await send(this.ctx, this.session, res, target, await early.opened);
    return true;
  }

  private clear(): void {
    for (const early of this.answers.values()) {
      early.abort.abort();
      void early.opened.then((o) => o?.body?.destroy());
    }
    this.answers.clear();
  }
}

/** A request for the whole body: no Range (or one from byte 0 to the end), no If-Range. */
function fromStart(headers: http.IncomingHttpHeaders): boolean {
  return headers['if-range'] === undefined && (headers.range === undefined || /^bytes=0-\s*$/.test(headers.range));
}

function sameHeaders(a: Record<string, string>, b: Record<string, string>): boolean {
  const names = (h: Record<string, string>) => Object.keys(h).filter((n) => !IGNORED.has(n)).sort();
  const an = names(a);
  const bn = names(b);
  return an.length === bn.length && an.every((n, i) => n === bn[i] && a[n] === b[n]);
}
