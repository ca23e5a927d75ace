// The one HTTP client for every outbound request reelay makes. It allows http and https only,
// checks every DNS answer and pins the connection to the checked address (the lookup we hand to the
// socket returns only checked addresses, so a second resolution cannot rebind), follows redirects
// itself so that each hop is checked again, and bounds time and size. Callers get ReelayErrors.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Readable } from 'node:stream';
import got, { type Got, type Response as GotResponse } from 'got';
import { ReelayError } from '@reelay/contracts';
import { addressBlockReason, isHostAllowlisted, normaliseHost, parseAllowlist, type Allowlist } from './address.js';
import { BodyTooLargeError, readAll } from './body.js';

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
  private readonly client: Got;
  private readonly maxRedirects: number;

  constructor(options: EgressOptions = {}) {
    this.allow = parseAllowlist(options.allowlist ?? []);
    this.maxRedirects = options.maxRedirects ?? MAX_REDIRECTS;
    const lookup = this.guardedLookup.bind(this);
    const agentOptions = { keepAlive: true, maxSockets: 256, maxFreeSockets: 64, scheduling: 'lifo' as const };
    const connect = options.connectTimeoutMs ?? 5_000;
    this.client = got.extend({
      followRedirect: false,
      throwHttpErrors: false,
      retry: { limit: 0 },
      http2: false,
      dnsLookup: lookup as never,
      agent: { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) },
      timeout: {
        lookup: connect,
        connect,
        secureConnect: connect,
        response: options.responseTimeoutMs ?? 15_000,
        socket: options.idleTimeoutMs ?? 15_000,
      },
      headers: {
        'user-agent': options.userAgent ?? 'Mozilla/5.0 (compatible; reelay/0.1)',
        accept: '*/*',
      },
    });
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
      const response = await this.once(url, options, options.deadlineMs ? options.deadlineMs - (Date.now() - started) : undefined);
      const status = response.statusCode;
      const location = response.headers.location;
      if (status >= 300 && status < 400 && status !== 304 && location && options.followRedirects !== false) {
        response.destroy();
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
        response.destroy();
        throw statusError(status);
      }
      return { url: url.href, status, headers: response.headers, body: response };
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

  private once(url: URL, options: RequestOptions, deadlineMs: number | undefined): Promise<GotResponse> {
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(options.headers ?? {})) if (value !== undefined) headers[key.toLowerCase()] = value;
    if (options.identity) headers['accept-encoding'] = 'identity';
    return new Promise<GotResponse>((resolve, reject) => {
      const stream = this.client.stream(url, {
        method: options.method ?? 'GET',
        headers,
        body: options.body,
        signal: options.signal,
        decompress: !options.identity,
        timeout: deadlineMs !== undefined ? { request: Math.max(1, deadlineMs) } : undefined,
      } as never);
      let settled = false;
      stream.once('response', (response: GotResponse) => {
        settled = true;
        // got streams re-emit the body; hand back the stream (not the raw response) so decoding,
        // timeouts and abort still apply while the caller reads.
        Object.assign(stream, { statusCode: response.statusCode, headers: response.headers });
        resolve(stream as unknown as GotResponse);
      });
      stream.once('error', (err: Error) => {
        if (!settled) reject(toReelayError(err));
      });
      // After the response was handed over, errors surface through the reader; keep one listener so
      // an unread error never crashes the process.
      stream.on('error', () => {});
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

/** Maps got, socket and DNS failures to the codes of DESIGN.md. */
export function toReelayError(err: unknown): ReelayError {
  if (err instanceof ReelayError) return err;
  const e = err as { code?: string; name?: string; message?: string; cause?: unknown };
  const cause = e.cause as { code?: string; message?: string } | undefined;
  const code = e.code ?? cause?.code;
  if (code === BLOCKED_CODE) return new ReelayError('url_blocked', cause?.message ?? e.message ?? 'The address is not allowed.');
  if (code === 'ETIMEDOUT' || e.name === 'TimeoutError') return new ReelayError('upstream_timeout', 'The origin did not answer in time.', { cause: err });
  if (e.name === 'AbortError' || code === 'ABORT_ERR') return new ReelayError('upstream_error', 'The request was cancelled.', { cause: err });
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NODATA') return new ReelayError('upstream_error', 'The origin host name could not be resolved.', { cause: err });
  if (code === 'ECONNREFUSED') return new ReelayError('upstream_error', 'The origin refused the connection.', { cause: err });
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE') return new ReelayError('upstream_error', 'The origin closed the connection.', { cause: err });
  if (code?.startsWith('ERR_TLS') || code?.includes('CERT')) return new ReelayError('upstream_error', 'The origin\'s TLS certificate could not be verified.', { cause: err });
  return new ReelayError('upstream_error', 'The origin could not be reached.', { cause: err });
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / 1024 / 1024)} MB` : `${Math.round(n / 1024)} KB`;
}
