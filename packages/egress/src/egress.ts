// The one HTTP client for every outbound request reelay makes. It allows http and https only,
// checks every DNS answer and pins the connection to the checked address (the lookup we hand to the
// socket returns only checked addresses, so a second resolution cannot rebind), follows redirects
// itself so that each hop is checked again, and bounds time and size. Callers get ReelayErrors.
// Built on node:http/https with keep-alive agents whose `lookup` is the guarded one. Measured in the
// extract benchmark's bare baselines: node:http does 0.95-0.98× undici's requests/s for a page fetch
// and got 0.4-0.5×; for a 512 MiB stream undici took 1.2-1.4× node:http's CPU (its parser copies
// each body chunk out of wasm memory), which put direct streams and the jobs' media proxy above
// the Node floor. So node:http serves all egress: one client, the fastest for both shapes.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { ReelayError } from '@reelay/contracts';
import { addressBlockReason, isHostAllowlisted, normaliseHost, parseAllowlist, type Allowlist } from './address.js';
import { BodyTooLargeError, readAll } from './body.js';
import { abortError, DEFAULT_HOST_LIMITS, HostLimiter, type HostLimits, type HostSlot } from './host-limit.js';

export const MAX_REDIRECTS = 5;
export const MAX_PAGE_BYTES = 5 * 1024 * 1024;

export interface EgressOptions {
  allowlist?: readonly string[];
  userAgent?: string;
  /** Milliseconds allowed for DNS, TCP and TLS set-up together. */
  connectTimeoutMs?: number;
  /** Milliseconds until the response headers arrive. */
  responseTimeoutMs?: number;
  /** Milliseconds a socket may stay silent. */
  idleTimeoutMs?: number;
  maxRedirects?: number;
  /**
   * Milliseconds a media stream may move no bytes before the gateway cuts it (a client that does not
   * read holds an upstream connection and a host slot). Default 10 s.
   */
  streamIdleMs?: number;
  /** Fair shares per origin host (host-limit.ts); defaults: DEFAULT_HOST_LIMITS. */
  hostLimits?: Partial<HostLimits>;
}

export interface RequestOptions {
  method?: 'GET' | 'HEAD' | 'POST';
  headers?: Record<string, string | undefined>;
  body?: string;
  signal?: AbortSignal;
  /** Return error statuses instead of throwing (platform APIs that explain errors in the body). */
  allowErrorStatus?: boolean;
  /** Whole-exchange deadline, body included (pages and API calls; not media streams). */
  deadlineMs?: number;
  /** Ask for an uncompressed body (media, sniffing). Default: gzip/br accepted and decoded. */
  identity?: boolean;
  /** Return 3xx responses instead of following them (a proxy whose client follows them itself). */
  followRedirects?: boolean;
}

export interface EgressResponse {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body; the caller must consume or destroy it. */
  body: Readable;
}

export interface TextResponse {
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const BLOCKED_CODE = 'ERR_REELAY_BLOCKED';

class BlockedAddressError extends Error {
  readonly code = BLOCKED_CODE;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

export class Egress {
  readonly allow: Allowlist;
  private readonly agents: { http: http.Agent; https: https.Agent };
  private readonly connectTimeoutMs: number;
  private readonly responseTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly userAgent: string;
  private readonly maxRedirects: number;
  /** Per-host slots: one slow host or slow reader cannot hold the pool other requests need. */
  readonly hosts: HostLimiter;
  readonly streamIdleMs: number;

  constructor(options: EgressOptions = {}) {
    this.allow = parseAllowlist(options.allowlist ?? []);
    this.hosts = new HostLimiter({ ...DEFAULT_HOST_LIMITS, ...options.hostLimits });
    this.streamIdleMs = options.streamIdleMs ?? 10_000;
    this.maxRedirects = options.maxRedirects ?? MAX_REDIRECTS;
    const lookup = this.guardedLookup.bind(this);
    this.userAgent = options.userAgent ?? 'Mozilla/5.0 (compatible; reelay/0.1)';
    this.connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
    this.responseTimeoutMs = options.responseTimeoutMs ?? 15_000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 15_000;
    // No connection cap of their own: the host limiter bounds connections per host (fresh + held),
    // so the pool never queues a request where no deadline sees it. Idle sockets close after 4 s,
    // before the common 5 s server keep-alive timeout can race a reuse.
    const agentOptions = { keepAlive: true, timeout: 4_000, lookup: lookup as never, scheduling: 'lifo' as const };
    this.agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
  }

  /** Throws url_blocked unless the URL's scheme and literal host (if any) may be contacted. */
  assertUrlAllowed(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ReelayError('url_blocked', `Only http and https may be fetched, not ${url.protocol.replace(':', '')}.`);
    }
    const host = normaliseHost(url.hostname);
    if (net.isIP(host) !== 0 && !isHostAllowlisted(host, this.allow)) {
      const reason = addressBlockReason(host, this.allow);
      if (reason) throw blocked(host, reason);
    }
  }

  /** Opens a request and returns once the final (non-redirect) response's headers have arrived. */
  async open(input: string | URL, options: RequestOptions = {}): Promise<EgressResponse> {
    let url = typeof input === 'string' ? parseOrThrow(input) : input;
    const seen = new Set<string>();
    const started = Date.now();
    for (let hop = 0; ; hop++) {
      this.assertUrlAllowed(url);
      // A client that leaves while queued aborts with its own reason: an error of the contract too.
      const slot = await this.hosts.acquire(url.host, options.signal).catch((err: unknown) => {
        throw toReelayError(err);
      });
      let response: RawResponse;
      try {
        response = await this.once(url, options, options.deadlineMs ? options.deadlineMs - (Date.now() - started) : undefined);
      } catch (err) {
        slot.release();
        throw err;
      }
      slot.hold();
      const status = response.statusCode;
      const location = header(response.headers.location);
      if (status >= 300 && status < 400 && status !== 304 && location && options.followRedirects !== false) {
        response.body.destroy();
        slot.release();
        if (hop >= this.maxRedirects) {
          throw new ReelayError('upstream_error', `The origin redirected more than ${this.maxRedirects} times.`);
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
      if (!options.allowErrorStatus && status >= 400) {
        response.body.destroy();
        slot.release();
        throw statusError(status);
      }
      const body = decoded(response, options);
      releaseWith(body, slot);
      return { url: url.href, status, headers: response.headers, body };
    }
  }

  /** Fetches a page, manifest or API answer as text, at most maxBytes (default 5 MB) decoded. */
  async fetchText(input: string | URL, options: RequestOptions & { maxBytes?: number } = {}): Promise<TextResponse> {
    const deadlineMs = options.deadlineMs ?? 20_000;
    const res = await this.open(input, { ...options, deadlineMs });
    const buf = await this.read(res.body, options.maxBytes ?? MAX_PAGE_BYTES);
    return { url: res.url, status: res.status, headers: res.headers, text: buf.toString('utf8') };
  }

  /** Reads a body that open() returned, mapping failures to ReelayErrors. open()'s deadline still applies. */
  async read(body: Readable, maxBytes: number): Promise<Buffer> {
    try {
      return await readAll(body, maxBytes);
    } catch (err) {
      if (err instanceof BodyTooLargeError) {
        throw new ReelayError('upstream_error', `The origin's response is larger than ${formatBytes(maxBytes)}.`);
      }
      throw toReelayError(err);
    }
  }

  /**
   * Opens a TCP connection for a CONNECT tunnel: the host is resolved and checked like any request
   * and the socket connects to the checked address. Throws url_blocked before connecting.
   */
  async connect(host: string, port: number, timeoutMs = 10_000): Promise<net.Socket> {
    const name = normaliseHost(host);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ReelayError('url_blocked', 'Invalid port.');
    if (net.isIP(name) !== 0 && !isHostAllowlisted(name, this.allow)) {
      const reason = addressBlockReason(name, this.allow);
      if (reason) throw blocked(name, reason);
    }
    return new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect({ host: name, port, lookup: this.guardedLookup.bind(this) as never, timeout: timeoutMs });
      socket.once('connect', () => {
        socket.setTimeout(0);
        resolve(socket);
      });
      socket.once('timeout', () => socket.destroy(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' })));
      socket.once('error', (err) => reject(toReelayError(err)));
    });
  }

  private async once(url: URL, options: RequestOptions, deadlineMs: number | undefined): Promise<RawResponse> {
    const headers: Record<string, string> = {
      'user-agent': this.userAgent,
      accept: '*/*',
      'accept-encoding': options.identity ? 'identity' : 'gzip, deflate, br',
    };
    for (const key in options.headers) {
      const value = options.headers[key];
      if (value !== undefined) headers[key.toLowerCase()] = value;
    }
    if (options.identity) headers['accept-encoding'] = 'identity';
    try {
      const response = await this.exchange(url, options, headers, deadlineMs);
      // After the response was handed over, errors surface through the reader; keep one listener so
      // an unread error never crashes the process.
      response.on('error', () => {});
      return { statusCode: response.statusCode ?? 0, headers: response.headers, body: response };
    } catch (err) {
      throw toReelayError(err);
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
  private exchange(url: URL, options: RequestOptions, headers: Record<string, string>, deadlineMs: number | undefined): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const req = (secure ? https : http).request(url, { method: options.method ?? 'GET', headers, agent: secure ? this.agents.https : this.agents.http });
      const signal = options.signal;
      let response: http.IncomingMessage | undefined;
      const fail = (err: Error) => (response ? response.destroy(err) : req.destroy(err));
      const timer = (ms: number, message: string) => {
        const t = setTimeout(() => fail(timeoutError(message)), ms);
        t.unref();
        return t;
      };
      const headersTimer = timer(this.responseTimeoutMs, 'The origin did not answer in time.');
      const deadline = deadlineMs !== undefined ? timer(Math.max(1, deadlineMs), 'The origin did not answer in time.') : undefined;
      const onAbort = () => fail(abortError(signal!));
      const done = () => {
        clearTimeout(headersTimer);
        clearTimeout(deadline);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.setTimeout(this.idleTimeoutMs, () => fail(timeoutError('The origin went silent.')));
      req.once('socket', (socket) => {
        if (!socket.connecting) return;
        const connectTimer = timer(this.connectTimeoutMs, 'The origin could not be connected to in time.');
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
      req.end(options.body);
    });
  }

  private guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
    const wantsAll = options?.all === true;
    dns.lookup(hostname, { all: true, family: options?.family ?? 0, hints: options?.hints }, (err, answers) => {
      if (err) return callback(err, wantsAll ? [] : '');
      if (answers.length === 0) return callback(Object.assign(new Error(`No address for ${hostname}`), { code: 'ENOTFOUND' }), wantsAll ? [] : '');
      if (!isHostAllowlisted(hostname, this.allow)) {
        for (const answer of answers) {
          const reason = addressBlockReason(answer.address, this.allow);
          if (reason) return callback(new BlockedAddressError(blockedMessage(hostname, answer.address, reason)), wantsAll ? [] : '');
        }
      }
      if (wantsAll) callback(null, answers);
      else callback(null, answers[0].address, answers[0].family);
    });
  }
}

interface RawResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

function timeoutError(message: string): Error {
  return Object.assign(new Error(message), { code: 'ETIMEDOUT' });
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The body as the caller wants it: decoded (gzip, deflate, br) unless it asked for identity. */
function decoded(response: RawResponse, options: RequestOptions): Readable {
  const encoding = header(response.headers['content-encoding'])?.trim().toLowerCase();
  if (options.identity || !encoding || options.method === 'HEAD' || response.statusCode === 204 || response.statusCode === 304) return response.body;
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip' ? zlib.createGunzip()
    : encoding === 'deflate' ? zlib.createInflate()
    : encoding === 'br' ? zlib.createBrotliDecompress()
    : undefined;
  if (!decoder) return response.body;
  // pipeline destroys each side when the other fails or is destroyed, so a reader that gives up
  // still releases the connection.
  pipeline(response.body, decoder, () => {});
  decoder.on('error', () => {});
  return decoder;
}

/** Gives the host slot back when the body is done with, however that happens. */
function releaseWith(body: Readable, slot: HostSlot): void {
  if (body.destroyed || body.readableEnded) return slot.release();
  const release = () => slot.release();
  body.once('end', release);
  body.once('close', release);
  body.once('error', release);
}

function parseOrThrow(raw: string): URL {
  try {
    return new URL(raw);
  } catch {
    throw new ReelayError('invalid_url', 'The URL is not an absolute http(s) URL.');
  }
}

function blockedMessage(host: string, address: string, reason: string): string {
  const shown = host === address ? address : `${host} (${address})`;
  return `Fetching ${shown} is not allowed: it is a ${reason} address.`;
}

function blocked(host: string, reason: string): ReelayError {
  return new ReelayError('url_blocked', blockedMessage(host, host, reason));
}

export function statusError(status: number): ReelayError {
  if (status === 404 || status === 410) return new ReelayError('content_not_found', `The origin answered ${status}: the content does not exist.`);
  if (status === 429) return new ReelayError('upstream_error', 'The origin is rate limiting requests (429).');
  if (status === 401 || status === 403) return new ReelayError('upstream_error', `The origin refused access (${status}).`);
  return new ReelayError('upstream_error', `The origin failed with HTTP ${status}.`);
}

const TIMEOUT_CODES = new Set(['ETIMEDOUT']);
const CLOSED_CODES = new Set(['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE']);

/** Maps HTTP, socket and DNS failures to the codes of DESIGN.md. */
export function toReelayError(err: unknown): ReelayError {
  if (err instanceof ReelayError) return err;
  const e = err as { code?: string; name?: string; message?: string; cause?: unknown };
  const cause = e.cause as { code?: string; message?: string } | undefined;
  const code = e.code ?? cause?.code;
  if (code === BLOCKED_CODE) return new ReelayError('url_blocked', cause?.message ?? e.message ?? 'The address is not allowed.');
  if ((code && TIMEOUT_CODES.has(code)) || e.name === 'TimeoutError') return new ReelayError('upstream_timeout', 'The origin did not answer in time.', { cause: err });
  if (e.name === 'AbortError' || code === 'ABORT_ERR') return new ReelayError('upstream_error', 'The request was cancelled.', { cause: err });
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NODATA') return new ReelayError('upstream_error', 'The origin host name could not be resolved.', { cause: err });
  if (code === 'ECONNREFUSED') return new ReelayError('upstream_error', 'The origin refused the connection.', { cause: err });
  if (code && CLOSED_CODES.has(code)) return new ReelayError('upstream_error', 'The origin closed the connection.', { cause: err });
  if (code?.startsWith('HPE_')) return new ReelayError('upstream_error', 'The origin sent a malformed HTTP response.', { cause: err });
  if (code?.startsWith('ERR_TLS') || (code && /CERT|UNABLE_TO_VERIFY|SELF_SIGNED/.test(code))) return new ReelayError('upstream_error', 'The origin\'s TLS certificate could not be verified.', { cause: err });
  return new ReelayError('upstream_error', 'The origin could not be reached.', { cause: err });
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / 1024 / 1024)} MB` : `${Math.round(n / 1024)} KB`;
}
