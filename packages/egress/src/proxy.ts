// The guarded forward proxy: the only way to the network for a program reelay runs but cannot make
// use egress itself (ffmpeg in the worker, yt-dlp in the gateway). It listens on 127.0.0.1, and each
// run gets a session with random credentials (so it is no open proxy). An absolute-form request is
// fetched by egress (address checks, TLS, redirects left to the client so each hop is checked) and
// counted against the session's byte limit; its failures (a blocked address, a 404, a 5xx) are kept
// on the session so the run fails with the right code. CONNECT tunnels are opt-in (proxy-tunnel.ts):
// a program that does its own TLS needs them, one with protocol tricks of its own (ffmpeg) must not
// get them.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isReelayError, ReelayError } from '@reelay/contracts';
import { BodyTooLargeError, readAll } from './body.js';
import { toReelayError, type Egress, type EgressResponse } from './egress.js';
import { ProxySession, type SessionInit, type SessionOptions } from './proxy-session.js';
import { openTunnel, refuseTunnel, type TunnelPolicy } from './proxy-tunnel.js';

/** What the proxy needs of egress: open() for requests; connect() and the allowlist for tunnels. */
export type ProxyEgress = Pick<Egress, 'open'> & Partial<Pick<Egress, 'connect' | 'allow'>>;

/** A pino-compatible logger (the egress package does not depend on the observability one). */
export interface ProxyLogger {
  debug(fields: Record<string, unknown>, msg: string): void;
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

export interface ProxyHooks {
  onBytes?: (bytes: number) => void;
  onBlocked?: () => void;
}

/** Rewrites some response bodies on their way to the client (the worker's manifests). */
export interface BodyRewriter {
  /** Bytes to look at before deciding. */
  sniffBytes: number;
  /** Largest body buffered to rewrite; a larger one fails the request. */
  maxBytes: number;
  /** What such a body is called in messages ("manifest"). */
  name: string;
  detect(head: Buffer): boolean;
  rewrite(text: string, target: URL): string;
}

export interface ProxyOptions<S extends ProxySession> {
  egress: ProxyEgress;
  /** Whether CONNECT tunnels are served (to checked addresses and ports) or refused with 405. */
  allowConnect: boolean;
  /** Ports a tunnel may reach on a host that is not allow-listed (default: 443). */
  connectPorts?: readonly number[];
  logger?: ProxyLogger;
  hooks?: ProxyHooks;
  /** Builds a session; a client with needs of its own (the worker's ffmpeg environment) subclasses. */
  session?: (init: SessionInit) => S;
  /**
   * The origin URL an absolute-form request target names. Throws TypeError when the target is no
   * proxy request (400) and a ReelayError when it names a scheme that may not be fetched (403).
   * Default: an absolute http or https URL.
   */
  target?: (requestTarget: string) => URL;
  /** Rewrites a response's Location header (default: unchanged). */
  location?: (value: string, target: URL) => string;
  rewriter?: BodyRewriter;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const SILENT: ProxyLogger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

export class GuardedProxy<S extends ProxySession = ProxySession> {
  private readonly sessions = new Map<string, S>();
  private readonly sockets = new Set<Socket>();
  private readonly egress: ProxyEgress;
  private readonly logger: ProxyLogger;
  private readonly hooks: ProxyHooks;
  private readonly tunnels: TunnelPolicy | undefined;

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
    private readonly options: ProxyOptions<S>,
  ) {
    this.egress = options.egress;
    this.logger = options.logger ?? SILENT;
    this.hooks = options.hooks ?? {};
    this.tunnels = options.allowConnect ? { egress: options.egress, ports: new Set(options.connectPorts ?? [443]), logger: this.logger, hooks: this.hooks } : undefined;
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      this.handle(req, res).catch((err: unknown) => {
        this.logger.error({ err }, 'proxy request failed');
        if (!res.headersSent) reply(res, 500);
        else res.destroy();
      });
    });
    server.on('connect', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
      const session = this.authenticate(req.headers['proxy-authorization']);
      if (!session || !this.tunnels) return refuseTunnel(socket, session ? 405 : 407);
      openTunnel(this.tunnels, session, req.url ?? '', socket, head).catch((err: unknown) => {
        this.logger.error({ err }, 'proxy tunnel failed');
        socket.destroy();
      });
    });
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Listens on 127.0.0.1 only, on a free port. */
  static async start<S extends ProxySession = ProxySession>(options: ProxyOptions<S>): Promise<GuardedProxy<S>> {
    if (options.allowConnect && (!options.egress.connect || !options.egress.allow)) {
      throw new TypeError('a proxy that allows CONNECT needs egress.connect and egress.allow');
    }
    const server = http.createServer({ keepAliveTimeout: 5_000 });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    return new GuardedProxy<S>(server, port, options);
  }

  /** A session for one run; close it with closeSession() when the run ends. */
  openSession(id: string, options: SessionOptions): S {
    const init: SessionInit = { id, user: randomBytes(12).toString('hex'), pass: Buffer.from(randomBytes(24).toString('hex')), proxyPort: this.port, options };
    const session = this.options.session ? this.options.session(init) : (new ProxySession(init) as S);
    this.sessions.set(session.user, session);
    return session;
  }

  /** Ends a session for good. A session that was only cut off stays registered, so the client's next
   *  requests get 403 rather than 407, until its owner closes it. */
  closeSession(session: S): void {
    session.end();
    this.sessions.delete(session.user);
  }

  async close(): Promise<void> {
    for (const session of this.sessions.values()) session.end();
    this.sessions.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private authenticate(header: string | undefined): S | undefined {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
    if (!match) return undefined;
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    const session = this.sessions.get(decoded.slice(0, colon));
    return session?.matches(Buffer.from(decoded.slice(colon + 1))) ? session : undefined;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const session = this.authenticate(req.headers['proxy-authorization']);
    if (!session) {
      // ffmpeg sends credentials only after a challenge naming the Basic scheme.
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="reelay"', 'content-length': '0', connection: 'close' }).end();
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405);
    let target: URL;
    try {
      target = (this.options.target ?? absoluteTarget)(req.url ?? '');
    } catch (err) {
      if (!isReelayError(err)) return reply(res, 400); // origin-form or garbage: not a proxy request
      this.blocked(session, err, `a ${(req.url ?? '').split(':')[0]} URL`);
      return reply(res, 403);
    }
    if (session.signal.aborted) return reply(res, 403);
    await this.forward(session, req, res, target);
  }

  private async forward(session: S, req: http.IncomingMessage, res: http.ServerResponse, target: URL): Promise<void> {
    // One controller per request: it follows the session (cut off, ended) and the client (which
    // closes connections when it seeks or has read enough), so no upstream transfer outlives its reader.
    const abort = new AbortController();
    const onSessionAbort = () => abort.abort();
    session.signal.addEventListener('abort', onSessionAbort, { once: true });
    res.once('close', () => {
      abort.abort();
      session.signal.removeEventListener('abort', onSessionAbort);
    });

    let upstream: EgressResponse;
    try {
      upstream = await this.egress.open(target, {
        method: req.method === 'HEAD' ? 'HEAD' : 'GET',
        headers: session.forwardHeaders(req.headers),
        identity: true,
        followRedirects: false, // the client follows them itself, through the proxy, so every hop is checked
        allowErrorStatus: true,
        signal: abort.signal,
      });
    } catch (err) {
      if (abort.signal.aborted) return void res.destroy(); // the client or its run went away first
      const error = toReelayError(err);
      if (error.code === 'url_blocked') {
        this.blocked(session, error, target.host);
        return reply(res, 403);
      }
      session.recordError(error);
      this.logger.info({ ...session.logFields, host: target.host, code: error.code }, 'proxy: upstream failed');
      return reply(res, error.code === 'upstream_timeout' ? 504 : 502);
    }
    session.recordStatus(upstream.status);
    // Errors of the body after the headers: upstream's fault unless we aborted it ourselves.
    upstream.body.once('error', (err: Error) => {
      if (!abort.signal.aborted) session.recordError(toReelayError(err));
    });
    this.logger.debug({ ...session.logFields, host: target.host, status: upstream.status }, 'proxy: response');

    const headers = responseHeaders(upstream.headers, target, this.options.location);
    const rewriter = this.options.rewriter;
    const sniff = rewriter && req.method === 'GET' && upstream.status >= 200 && upstream.status < 300 && !rangeFromMiddle(req);
    const out = sniff ? await this.maybeRewrite(rewriter, session, upstream, target, headers) : { status: upstream.status, headers, body: upstream.body };
    if (out === undefined) {
      if (abort.signal.aborted) return void res.destroy();
      return reply(res, 502);
    }
    res.writeHead(out.status, out.headers);
    const counter = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        if (!session.count(chunk.length)) return done(new Error('byte limit reached'));
        this.hooks.onBytes?.(chunk.length);
        done(null, chunk);
      },
    });
    try {
      await pipeline(out.body, counter, res);
    } catch (err) {
      // Already recorded where it matters (body error, byte limit); a client that left is no failure.
      this.logger.debug({ ...session.logFields, host: target.host, err: (err as Error).message }, 'proxy: transfer ended early');
    }
  }

  /**
   * Peeks at the first bytes. A body the rewriter wants is read whole (bounded), rewritten and sent
   * with fresh length headers; anything else streams on, the peeked bytes first. Undefined when the
   * body failed.
   */
  private async maybeRewrite(rewriter: BodyRewriter, session: S, upstream: EgressResponse, target: URL, headers: http.OutgoingHttpHeaders): Promise<ProxiedResponse | undefined> {
    const iterator = upstream.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    const head: Buffer[] = [];
    let size = 0;
    let ended = false;
    try {
      while (size < rewriter.sniffBytes) {
        const next = await iterator.next();
        if (next.done) {
          ended = true;
          break;
        }
        head.push(next.value);
        size += next.value.length;
      }
    } catch {
      return undefined; // the body's error listener has recorded why
    }
    const first = Buffer.concat(head);
    if (!rewriter.detect(first)) {
      return { status: upstream.status, headers, body: Readable.from(replay(first, ended ? undefined : iterator)) };
    }
    let text = first;
    if (!ended) {
      try {
        text = Buffer.concat([first, await readAll(Readable.from(replay(Buffer.alloc(0), iterator)), rewriter.maxBytes - first.length)]);
      } catch (err) {
        if (err instanceof BodyTooLargeError) session.recordError(new ReelayError('upstream_error', `A ${rewriter.name} is larger than ${rewriter.maxBytes / 1024 / 1024} MB.`));
        return undefined; // otherwise the body's error listener has recorded why
      }
    }
    const rewritten = Buffer.from(rewriter.rewrite(text.toString('utf8'), target));
    const out: http.OutgoingHttpHeaders = { ...headers, 'content-length': String(rewritten.length) };
    // The whole body, at a new length: a 206's range and validators no longer describe it.
    for (const name of ['content-range', 'accept-ranges', 'etag', 'last-modified']) delete out[name];
    return { status: 200, headers: out, body: Readable.from([rewritten]) };
  }

  private blocked(session: S, error: ReelayError, where: string): void {
    session.recordError(error);
    this.hooks.onBlocked?.();
    this.logger.warn({ ...session.logFields, target: where }, 'proxy: blocked a request');
  }
}

interface ProxiedResponse {
  status: number;
  headers: http.OutgoingHttpHeaders;
  body: Readable;
}

/** The default request target: an absolute http or https URL, without its fragment. */
export function absoluteTarget(requestTarget: string): URL {
  let url: URL;
  try {
    url = new URL(requestTarget);
  } catch {
    throw new TypeError('a proxy request must name an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ReelayError('url_blocked', `Only http and https may be fetched, not ${url.protocol.replace(/:$/, '')}.`);
  }
  url.hash = '';
  return url;
}

async function* replay(first: Buffer, rest: AsyncIterator<Buffer> | undefined): AsyncGenerator<Buffer> {
  if (first.length > 0) yield first;
  if (!rest) return;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}

/** Whether a request asks for a range that does not start at 0 (no sniffing then). */
function rangeFromMiddle(req: http.IncomingMessage): boolean {
  const match = /^bytes=(\d+)-/.exec(req.headers.range ?? '');
  return match !== null && Number(match[1]) > 0;
}

function responseHeaders(upstream: http.IncomingHttpHeaders, target: URL, location: ProxyOptions<ProxySession>['location']): http.OutgoingHttpHeaders {
  const listed = new Set(String(upstream.connection ?? '').toLowerCase().split(',').map((s) => s.trim()));
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name)) continue;
    out[name] = name === 'location' && typeof value === 'string' && location ? location(value, target) : value;
  }
  return out;
}

function reply(res: http.ServerResponse, status: number): void {
  res.writeHead(status, { 'content-length': '0', connection: 'close' }).end();
}
