// The node:http transport: egress's client before got, kept runnable (EGRESS_CLIENT=http) as the
// baseline `pnpm bench` measures got against. It follows redirects itself, one host slot per hop.
import http from 'node:http';
import https from 'node:https';
import { ReelayError } from '@reelay/contracts';
import { toReelayError } from './errors.js';
import { abortError } from './host-limit.js';
import {
  firstHeader,
  timeoutError,
  type Exchange,
  type FinalResponse,
  type Transport,
  type TransportDeps,
} from './transport.js';

export class HttpTransport implements Transport {
  constructor(private readonly deps: TransportDeps) {}

  async open(start: URL, ex: Exchange): Promise<FinalResponse> {
    let url = start;
    const seen = new Set<string>();
    const started = Date.now();
    for (let hop = 0; ; hop++) {
      this.deps.assertUrlAllowed(url);
      // A client that leaves while queued aborts with its own reason: an error of the contract too.
      const slot = await this.deps.hosts.acquire(url.host, ex.signal).catch((err: unknown) => {
        throw toReelayError(err);
      });
      let response: http.IncomingMessage;
      try {
        // Each hop gets its own cookies: a redirect to another host must not carry the first one's.
        const cookie = await this.deps.cookies?.header(url);
        const hop = cookie ? { ...ex, headers: { ...ex.headers, cookie } } : ex;
        response = await this.exchange(
          url,
          hop,
          ex.deadlineMs !== undefined ? ex.deadlineMs - (Date.now() - started) : undefined,
        );
        // After the response was handed over, errors surface through the reader; keep one listener
        // so an unread error never crashes the process.
        response.on('error', () => {});
      } catch (err) {
        slot.release();
        throw toReelayError(err);
      }
      slot.hold();
      const status = response.statusCode ?? 0;
      const location = firstHeader(response.headers.location);
      if (status >= 300 && status < 400 && status !== 304 && location && ex.followRedirects) {
        response.destroy();
        slot.release();
        if (hop >= this.deps.maxRedirects) {
          throw new ReelayError('upstream_error', `The origin redirected more than ${this.deps.maxRedirects} times.`);
        }
        seen.add(url.href);
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw new ReelayError('upstream_error', 'The origin redirected to an invalid URL.');
        }
        if (seen.has(next.href)) throw new ReelayError('upstream_error', 'The origin redirects in a loop.');
        url = next;
        continue;
      }
      return { url, statusCode: status, headers: response.headers, body: response, slot };
    }
  }

  /**
   * One HTTP exchange up to its response headers. Time limits: connectTimeoutMs to connect,
   * responseTimeoutMs until the headers, idleTimeoutMs of socket silence at any point (body too), and
   * deadlineMs for the whole exchange, body included. A timeout or the caller's abort destroys the
   * response if there is one (its reader sees the error), else the request. The deadline timer and
   * the abort listener are dropped as soon as the response is done with: not AbortSignal.timeout/any,
   * whose timers and bookkeeping outlived every request by the whole deadline (memory, GC time).
   */
  private exchange(url: URL, ex: Exchange, deadlineMs: number | undefined): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const agents = this.deps.proxied(ex.purpose) ?? this.deps.agents;
      const req = (secure ? https : http).request(url, {
        method: ex.method,
        headers: ex.headers,
        agent: secure ? agents.https : agents.http,
      });
      const signal = ex.signal;
      let response: http.IncomingMessage | undefined;
      const fail = (err: Error) => (response ? response.destroy(err) : req.destroy(err));
      const timer = (ms: number, message: string) => {
        const t = setTimeout(() => fail(timeoutError(message)), ms);
        t.unref();
        return t;
      };
      const headersTimer = timer(this.deps.responseTimeoutMs, 'The origin did not answer in time.');
      const deadline =
        deadlineMs !== undefined ? timer(Math.max(1, deadlineMs), 'The origin did not answer in time.') : undefined;
      const onAbort = () => fail(abortError(signal!));
      const done = () => {
        clearTimeout(headersTimer);
        clearTimeout(deadline);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.setTimeout(this.deps.idleTimeoutMs, () => fail(timeoutError('The origin went silent.')));
      req.once('socket', (socket) => {
        if (!socket.connecting) return;
        const connectTimer = timer(this.deps.connectTimeoutMs, 'The origin could not be connected to in time.');
        const clear = () => clearTimeout(connectTimer);
        socket.once('connect', clear);
        socket.once('close', clear);
      });
      req.once('response', (res) => {
        response = res;
        clearTimeout(headersTimer);
        // The deadline and the caller's abort cover the body too, until it is done with.
        res.once('close', done);
        resolve(res);
      });
      req.once('error', (err) => {
        done();
        reject(err);
      });
      if (signal?.aborted) onAbort();
      req.end(ex.body);
    });
  }
}
