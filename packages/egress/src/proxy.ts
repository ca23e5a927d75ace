// The guarded forward proxy: the only way to the network for a program reelay runs but cannot make
// use egress itself (ffmpeg in the worker, yt-dlp in the gateway). It listens on 127.0.0.1, and each
// run gets a session with random credentials (so it is no open proxy). An absolute-form request is
// fetched by egress (address checks, TLS, redirects left to the client so each hop is checked) and
// counted against the session's byte limit; its failures (a blocked address, a 404, a 5xx) are kept
// on the session so the run fails with the right code. CONNECT tunnels are opt-in (proxy-tunnel.ts):
// a program that does its own TLS needs them, one with protocol tricks of its own (ffmpeg) must not
// get them.
// This module holds the server, its sessions and authentication; forwarding is proxy-forward.ts, the
// body rewrite proxy-rewrite.ts, the shared types proxy-types.ts (and what it is given, proxy-deps.ts).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { isReelayError, ReelayError } from '@reelay/contracts';
import { AheadWindow } from './proxy-ahead.js';
import { forward, reply, type ForwardContext } from './proxy-forward.js';
import { HEADER_READ_SUFFIX, ProxySession, type SessionInit, type SessionOptions } from './proxy-session.js';
import { openTunnel, refuseTunnel, type TunnelPolicy } from './proxy-tunnel.js';
import { SILENT_LOGGER, type ProxyEgress, type ProxyHooks, type ProxyLogger } from './proxy-deps.js';
import type { ProxyOptions } from './proxy-types.js';

// The proxy's types keep their old home for callers.
export type { ProxyEgress, ProxyHooks, ProxyLogger } from './proxy-deps.js';
export type { BodyRewriter, ProxyOptions } from './proxy-types.js';

export class GuardedProxy<S extends ProxySession = ProxySession> {
  private readonly sessions = new Map<string, S>();
  private readonly sockets = new Set<Socket>();
  private readonly egress: ProxyEgress;
  private readonly logger: ProxyLogger;
  private readonly hooks: ProxyHooks;
  private readonly tunnels: TunnelPolicy | undefined;
  private readonly forwarding: ForwardContext;

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
    private readonly options: ProxyOptions<S>,
  ) {
    this.egress = options.egress;
    this.logger = options.logger ?? SILENT_LOGGER;
    this.hooks = options.hooks ?? {};
    this.forwarding = {
      egress: this.egress,
      logger: this.logger,
      hooks: this.hooks,
      location: options.location,
      rewriter: options.rewriter,
      concurrency: options.fetchConcurrency ?? 1,
      blocked: (session, error, where) => this.blocked(session as S, error, where),
    };
    this.tunnels = options.allowConnect
      ? {
          egress: options.egress,
          ports: new Set(options.connectPorts ?? [443]),
          logger: this.logger,
          hooks: this.hooks,
        }
      : undefined;
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
    const init: SessionInit = {
      id,
      user: randomBytes(12).toString('hex'),
      pass: Buffer.from(randomBytes(24).toString('hex')),
      proxyPort: this.port,
      options,
    };
    const session = this.options.session ? this.options.session(init) : (new ProxySession(init) as S);
    const concurrency = this.options.fetchConcurrency ?? 1;
    if (concurrency > 1)
      session.ahead = new AheadWindow({ egress: this.egress, session, concurrency, hooks: this.hooks });
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
    return this.credentials(header)?.session;
  }

  /** The session the Basic credentials name, and whether its client reads only a file's start. */
  private credentials(header: string | undefined): { session: S; headerRead: boolean } | undefined {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
    if (!match) return undefined;
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    let user = decoded.slice(0, colon);
    const headerRead = user.endsWith(HEADER_READ_SUFFIX);
    if (headerRead) user = user.slice(0, -HEADER_READ_SUFFIX.length);
    const session = this.sessions.get(user);
    return session?.matches(Buffer.from(decoded.slice(colon + 1))) ? { session, headerRead } : undefined;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { session, headerRead } = this.credentials(req.headers['proxy-authorization']) ?? {};
    if (!session) {
      // ffmpeg sends credentials only after a challenge naming the Basic scheme.
      res
        .writeHead(407, { 'proxy-authenticate': 'Basic realm="reelay"', 'content-length': '0', connection: 'close' })
        .end();
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
    // A segment fetched ahead was counted against the budget when it was fetched.
    if (session.ahead && (await session.ahead.serve(target, req, res))) return;
    if (!session.spendRequest()) return reply(res, 403);
    await forward(this.forwarding, session, req, res, target, { parts: !headerRead });
  }

  private blocked(session: S, error: ReelayError, where: string): void {
    session.recordError(error);
    this.hooks.onBlocked?.();
    this.logger.warn({ ...session.logFields, target: where }, 'proxy: blocked a request');
  }
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
