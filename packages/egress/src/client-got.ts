// The got transport: every outbound request goes through one got instance, made once per Egress with
// got.extend (requests pass only their own options: no per-request extend, which would rebuild and
// merge the whole option set each time). The guard sits in it as the agents' and got's `dnsLookup`
// (checked and pinned on every connection) and a `beforeRedirect` hook (scheme, literal address and
// port of every hop, and loops); a `beforeRequest` hook takes the hop's per-host slot. Timeouts are
// got's phases (lookup, connect, TLS, response headers, socket idle); egress.ts adds the whole-exchange
// deadline. Bodies stay encoded (decompress off): egress.ts decodes them and counts decoded bytes.
// A proxy pool's agents (upstream-pool.ts) are a per-request option; cookies come from a read-only
// cookieJar (cookies.ts), which got asks again on every hop.
import { ReelayError } from '@reelay/contracts';
import got, { type Got, type NormalizedOptions, type OptionsInit, type PlainResponse } from 'got';
import { toReelayError } from './errors.js';
import { abortError, type HostSlot } from './host-limit.js';
import { timeoutError, type Exchange, type FinalResponse, type Transport, type TransportDeps } from './transport.js';

/** One request's state, shared by its hooks through got's `context` (copied shallowly per hop). */
interface Lane {
  slot?: HostSlot;
  /** Every URL of the chain so far: a redirect back to one is a loop. */
  seen: Set<string>;
  signal?: AbortSignal;
  /** Set once the request failed or finished: a slot granted late is given straight back. */
  closed: boolean;
}

const laneOf = (options: NormalizedOptions): Lane => (options.context as { lane: Lane }).lane;

export class GotTransport implements Transport {
  /** The one got instance of this Egress. */
  readonly got: Got;

  constructor(private readonly deps: TransportDeps) {
    const connect = deps.connectTimeoutMs;
    this.got = got.extend({
      agent: deps.agents,
      cookieJar: deps.cookies?.gotJar,
      dnsLookup: deps.lookup as never,
      decompress: false,
      throwHttpErrors: false,
      // got retries a stream only by handing the caller a new one; the one retry reelay makes (a
      // platform's short Retry-After, pacing.ts) happens around open() instead.
      retry: { limit: 0 },
      followRedirect: true,
      maxRedirects: deps.maxRedirects,
      timeout: {
        lookup: connect,
        connect,
        secureConnect: connect,
        response: deps.responseTimeoutMs,
        socket: deps.idleTimeoutMs,
      },
      hooks: {
        beforeRequest: [(options) => this.takeSlot(options)],
        beforeRedirect: [(options) => this.checkRedirect(options)],
      },
    });
  }

  open(url: URL, ex: Exchange): Promise<FinalResponse> {
    const lane: Lane = { seen: new Set([url.href]), signal: ex.signal, closed: false };
    // Only what differs from the instance's defaults: got merges every key it is given.
    const options: OptionsInit & { isStream?: true } = { headers: ex.headers, context: { lane } };
    if (ex.method !== 'GET') options.method = ex.method;
    if (ex.body !== undefined) options.body = ex.body;
    if (!ex.followRedirects) options.followRedirect = false;
    const agents = this.deps.proxied(ex.purpose);
    if (agents) options.agent = agents;
    const stream = this.got.stream(url, options);
    return new Promise((resolve, reject) => {
      let answered = false;
      const fail = (err: Error) => stream.destroy(err);
      const deadline =
        ex.deadlineMs !== undefined
          ? setTimeout(() => fail(timeoutError('The origin did not answer in time.')), Math.max(1, ex.deadlineMs))
          : undefined;
      deadline?.unref();
      const signal = ex.signal;
      const onAbort = () => fail(abortError(signal!));
      // The deadline and the caller's abort cover the body too, until it is done with; then their
      // timer and listener go (not AbortSignal.timeout/any, whose bookkeeping outlives the request).
      const done = () => {
        lane.closed = true;
        clearTimeout(deadline);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
      stream.once('response', (res: PlainResponse) => {
        answered = true;
        const slot = lane.slot!;
        slot.hold();
        stream.once('end', done);
        stream.once('close', done);
        resolve({ url: new URL(res.url), statusCode: res.statusCode, headers: res.headers, body: stream, slot });
      });
      // Kept for the whole life of the stream: an error nobody reads never crashes the process.
      stream.on('error', (err: Error) => {
        done();
        if (answered) return; // the body's reader sees it; the slot goes with the body
        lane.slot?.release();
        reject(this.mapError(err));
      });
    });
  }

  private async takeSlot(options: NormalizedOptions): Promise<void> {
    const lane = laneOf(options);
    const url = options.url as URL;
    const slot = await this.deps.hosts.acquire(url.host, lane.signal);
    if (lane.closed) {
      slot.release();
      throw new ReelayError('upstream_error', 'The request was cancelled.');
    }
    lane.slot = slot;
  }

  /** Each hop is checked like the first before it is requested; its predecessor's slot goes back. */
  private checkRedirect(options: NormalizedOptions): void {
    const lane = laneOf(options);
    lane.slot?.release();
    lane.slot = undefined;
    const next = options.url as URL;
    this.deps.assertUrlAllowed(next);
    if (lane.seen.has(next.href)) throw new ReelayError('upstream_error', 'The origin redirects in a loop.');
    lane.seen.add(next.href);
  }

  private mapError(err: Error): ReelayError {
    const code = (err as { code?: string }).code ?? (err.cause as { code?: string } | undefined)?.code;
    if (code === 'ERR_TOO_MANY_REDIRECTS')
      return new ReelayError('upstream_error', `The origin redirected more than ${this.deps.maxRedirects} times.`);
    if (code === 'ERR_UNSUPPORTED_PROTOCOL')
      return new ReelayError('url_blocked', 'Only http and https may be fetched.');
    if (code === 'ERR_INVALID_URL')
      return new ReelayError('upstream_error', 'The origin redirected to an invalid URL.');
    return toReelayError(err);
  }
}
