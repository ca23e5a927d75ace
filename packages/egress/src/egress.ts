// The one HTTP client for every outbound request reelay makes. It allows http and https only,
// checks every DNS answer and pins the connection to the checked address (the lookup we hand to the
// socket returns only checked addresses, so a second resolution cannot rebind), checks every redirect
// hop again, and bounds time and size. Callers get ReelayErrors (errors.ts).
// The transport is got (client-got.ts: one instance, the guard in its agents, dnsLookup and hooks);
// node:http (client-http.ts) is kept as an alternative, EGRESS_CLIENT=http, for the benchmark's
// baseline. Both share the keep-alive agents whose `lookup` is the guarded one, the per-host lanes
// (host-limit.ts), the decoding and byte caps (body.ts) and the deadline. With outbound proxies
// (upstream-pool.ts) each purpose's requests use its pool's agents instead, behind the same guard.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Readable } from 'node:stream';
import { ReelayError } from '@reelay/contracts';
import { addressBlockReason, isHostAllowlisted, normaliseHost, parseAllowlist, type Allowlist } from './address.js';
import type { CookieFile } from './cookies.js';
import { BodyTooLargeError, readAll } from './body.js';
import { GotTransport } from './client-got.js';
import { HttpTransport } from './client-http.js';
import { decodeBody } from './decode.js';
import { BlockedAddressError, blocked, blockedMessage, statusError, toReelayError } from './errors.js';
import { DEFAULT_HOST_LIMITS, HostLimiter, type HostLimits } from './host-limit.js';
import {
  DEFAULT_PACING,
  isPacingStatus,
  parseRetryAfter,
  pause,
  PlatformPacer,
  rateLimitedError,
  type PacingOptions,
} from './pacing.js';
import {
  pooledAgents,
  proxyPools,
  resolveChecked,
  type ProxyPool,
  type ProxySettings,
  type Purpose,
} from './upstream-pool.js';
import { type EgressClient, type FinalResponse, type Transport, type TransportDeps } from './transport.js';
import type { EgressResponse, TextResponse } from './response.js';

export { rateLimitOf, statusError, toReelayError } from './errors.js';
export type { EgressClient } from './transport.js';
export type { ProxySettings, Purpose } from './upstream-pool.js';
export type { EgressResponse, TextResponse } from './response.js';

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
  /** Per-platform slots and the one retry of a rate-limited platform answer (pacing.ts). */
  pacing?: Partial<PacingOptions>;
  /** The transport: got (default) or node:http, the benchmark's baseline (EGRESS_CLIENT). */
  client?: EgressClient;
  /** Outbound proxies (PROXY_URLS, EXTRACT_PROXY_URLS, MEDIA_PROXY_URLS); none: direct. */
  proxies?: ProxySettings;
  /** Told when a proxy is skipped for 30 s, by its label (scheme, host, port: no credentials). */
  onProxySkip?: (label: string, reason: string) => void;
  /** The purpose of requests that name none: the gateway's are extraction, the worker's media. */
  purpose?: Purpose;
  /** COOKIES_FILE: its cookies go on every request RFC 6265 sends them to (cookies.ts). */
  cookies?: CookieFile;
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
  /**
   * The platform whose API this request asks (pacing.ts): it takes one of the platform's slots, a
   * 429 or 503 with a short Retry-After is retried once, and any other 429 or 503 throws
   * upstream_rate_limited (allowErrorStatus notwithstanding).
   */
  platform?: string;
  /** Which proxy pool carries the request (default: the Egress's `purpose`). */
  purpose?: Purpose;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

export class Egress {
  readonly allow: Allowlist;
  /** Keep-alive agents whose lookup is the guarded one, shared by both transports. */
  readonly agents: { http: http.Agent; https: https.Agent };
  readonly client: EgressClient;
  private readonly transport: Transport;
  private readonly userAgent: string;
  /** Per-host slots: one slow host or slow reader cannot hold the pool other requests need. */
  readonly hosts: HostLimiter;
  readonly streamIdleMs: number;
  readonly pacer: PlatformPacer;
  readonly purpose: Purpose;
  private readonly pools: Partial<Record<Purpose, ProxyPool>>;
  private readonly pooled = new Map<ProxyPool, { http: http.Agent; https: https.Agent }>();
  private readonly connectTimeoutMs: number;

  constructor(options: EgressOptions = {}) {
    this.allow = parseAllowlist(options.allowlist ?? []);
    this.hosts = new HostLimiter({ ...DEFAULT_HOST_LIMITS, ...options.hostLimits });
    this.streamIdleMs = options.streamIdleMs ?? 10_000;
    this.pacer = new PlatformPacer({ ...DEFAULT_PACING, ...options.pacing });
    const lookup = this.guardedLookup.bind(this);
    this.userAgent = options.userAgent ?? 'Mozilla/5.0 (compatible; reelay/0.1)';
    // No connection cap of their own: the host limiter bounds connections per host (fresh + held),
    // so the pool never queues a request where no deadline sees it. Idle sockets close after 4 s,
    // before the common 5 s server keep-alive timeout can race a reuse.
    const agentOptions = { keepAlive: true, timeout: 4_000, lookup: lookup as never, scheduling: 'lifo' as const };
    this.agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
    this.purpose = options.purpose ?? 'extract';
    this.connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
    this.pools = proxyPools(options.proxies ?? {}, { onSkip: options.onProxySkip });
    for (const pool of new Set(Object.values(this.pools))) {
      this.pooled.set(
        pool,
        pooledAgents({ pool, lookup: lookup as never, connectTimeoutMs: this.connectTimeoutMs, agentOptions }),
      );
    }
    const deps: TransportDeps = {
      agents: this.agents,
      proxied: (purpose) => this.proxiedAgents(purpose),
      cookies: options.cookies,
      lookup: lookup as never,
      hosts: this.hosts,
      assertUrlAllowed: (url) => this.assertUrlAllowed(url),
      connectTimeoutMs: this.connectTimeoutMs,
      responseTimeoutMs: options.responseTimeoutMs ?? 15_000,
      idleTimeoutMs: options.idleTimeoutMs ?? 15_000,
      maxRedirects: options.maxRedirects ?? MAX_REDIRECTS,
    };
    this.client = options.client ?? 'got';
    this.transport = this.client === 'http' ? new HttpTransport(deps) : new GotTransport(deps);
  }

  /** Throws url_blocked unless the URL's scheme and literal host (if any) may be contacted. */
  assertUrlAllowed(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ReelayError('url_blocked', `Only http and https may be fetched, not ${url.protocol.replace(':', '')}.`);
    }
    // Node's http client takes port 0 as "no port" and connects to 80 or 443: a redirect (or a caller
    // that skipped parseContentUrl) must not reach another port than the one it names.
    if (url.port === '0') throw new ReelayError('url_blocked', 'Port 0 cannot be contacted.');
    const host = normaliseHost(url.hostname);
    if (net.isIP(host) !== 0 && !isHostAllowlisted(host, this.allow)) {
      const reason = addressBlockReason(host, this.allow);
      if (reason) throw blocked(host, reason);
    }
  }

  /**
   * The guard without a request (a webhook URL when it is given): the scheme, a literal address, and
   * every address the name resolves to now. Throws url_blocked; a name that does not resolve now is
   * left to the request, which checks again.
   */
  async checkUrl(url: URL): Promise<void> {
    this.assertUrlAllowed(url);
    const host = normaliseHost(url.hostname);
    if (net.isIP(host) !== 0) return;
    await new Promise<void>((resolve, reject) => {
      this.guardedLookup(host, { all: true }, (err) =>
        err instanceof BlockedAddressError ? reject(toReelayError(err)) : resolve(),
      );
    });
  }

  /** Opens a request and returns once the final (non-redirect) response's headers have arrived. */
  async open(input: string | URL, options: RequestOptions = {}): Promise<EgressResponse> {
    const url = typeof input === 'string' ? parseOrThrow(input) : input;
    this.assertUrlAllowed(url);
    return options.platform ? this.openPaced(url, options.platform, options) : this.openOnce(url, options);
  }

  /** open() for a platform's API: its slot, the one retry after a short Retry-After, the outcome. */
  private async openPaced(url: URL, platform: string, options: RequestOptions): Promise<EgressResponse> {
    const release = await this.pacer.acquire(platform, options.signal).catch((err: unknown) => {
      throw toReelayError(err);
    });
    try {
      for (let attempt = 0; ; attempt++) {
        let res: EgressResponse;
        try {
          res = await this.openOnce(url, { ...options, allowErrorStatus: true });
        } catch (err) {
          this.pacer.record(platform, 'error');
          throw err;
        }
        if (isPacingStatus(res.status)) {
          res.body.destroy();
          const retryAfter = parseRetryAfter(res.headers['retry-after']);
          const delay = this.pacer.retryDelay(res.status, retryAfter, attempt, options.method ?? 'GET');
          if (delay !== undefined) {
            await pause(delay, options.signal).catch((err: unknown) => {
              throw toReelayError(err);
            });
            continue;
          }
          this.pacer.record(platform, 'rate_limited');
          throw rateLimitedError(platform, res.status, retryAfter);
        }
        this.pacer.record(platform, res.status >= 400 ? 'error' : attempt > 0 ? 'retried' : 'ok');
        if (!options.allowErrorStatus && res.status >= 400) {
          res.body.destroy();
          throw statusError(res.status, res.headers);
        }
        releaseWith(res.body, release);
        return res;
      }
    } catch (err) {
      release();
      throw err;
    }
  }

  private async openOnce(url: URL, options: RequestOptions): Promise<EgressResponse> {
    const response = await this.transport.open(url, {
      method: options.method ?? 'GET',
      headers: this.headersFor(options),
      body: options.body,
      signal: options.signal,
      deadlineMs: options.deadlineMs || undefined,
      followRedirects: options.followRedirects !== false,
      purpose: options.purpose ?? this.purpose,
    });
    const status = response.statusCode;
    if (!options.allowErrorStatus && status >= 400) {
      response.body.destroy();
      response.slot.release();
      throw statusError(status, response.headers);
    }
    const body = decoded(response, options);
    releaseWith(body, () => response.slot.release());
    return { url: response.url.href, status, headers: response.headers, body };
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
  async connect(host: string, port: number, timeoutMs = 10_000, purpose: Purpose = this.purpose): Promise<net.Socket> {
    const name = normaliseHost(host);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ReelayError('url_blocked', 'Invalid port.');
    if (net.isIP(name) !== 0 && !isHostAllowlisted(name, this.allow)) {
      const reason = addressBlockReason(name, this.allow);
      if (reason) throw blocked(name, reason);
    }
    const pool = this.pools[purpose];
    if (pool) {
      // Checked here, so the proxy is only ever asked for an address the guard allowed.
      try {
        const ip = await resolveChecked(this.guardedLookup.bind(this) as never, name);
        return await pool.tunnel(ip, port, timeoutMs);
      } catch (err) {
        throw toReelayError(err);
      }
    }
    return new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect({
        host: name,
        port,
        lookup: this.guardedLookup.bind(this) as never,
        timeout: timeoutMs,
      });
      socket.once('connect', () => {
        socket.setTimeout(0);
        resolve(socket);
      });
      socket.once('timeout', () => socket.destroy(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' })));
      socket.once('error', (err) => reject(toReelayError(err)));
    });
  }

  /** The agents of a purpose's proxy pool; undefined when that traffic goes direct. */
  proxiedAgents(purpose: Purpose): { http: http.Agent; https: https.Agent } | undefined {
    const pool = this.pools[purpose];
    return pool && this.pooled.get(pool);
  }

  private headersFor(options: RequestOptions): Record<string, string> {
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
    return headers;
  }

  private guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
    const wantsAll = options?.all === true;
    dns.lookup(hostname, { all: true, family: options?.family ?? 0, hints: options?.hints }, (err, answers) => {
      if (err) return callback(err, wantsAll ? [] : '');
      if (answers.length === 0)
        return callback(
          Object.assign(new Error(`No address for ${hostname}`), { code: 'ENOTFOUND' }),
          wantsAll ? [] : '',
        );
      if (!isHostAllowlisted(hostname, this.allow)) {
        for (const answer of answers) {
          const reason = addressBlockReason(answer.address, this.allow);
          if (reason)
            return callback(
              new BlockedAddressError(blockedMessage(hostname, answer.address, reason)),
              wantsAll ? [] : '',
            );
        }
      }
      if (wantsAll) callback(null, answers);
      else callback(null, answers[0].address, answers[0].family);
    });
  }
}

/** The body as the caller wants it: decoded (gzip, deflate, br) unless it asked for identity. */
function decoded(response: FinalResponse, options: RequestOptions): Readable {
  if (options.identity || options.method === 'HEAD' || response.statusCode === 204 || response.statusCode === 304)
    return response.body;
  return decodeBody(response.body, response.headers);
}

/** Gives a slot (host or platform) back when the body is done with, however that happens. */
function releaseWith(body: Readable, release: () => void): void {
  if (body.destroyed || body.readableEnded) return release();
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

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / 1024 / 1024)} MB` : `${Math.round(n / 1024)} KB`;
}
