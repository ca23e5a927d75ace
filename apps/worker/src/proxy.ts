// The guarded forward proxy that is ffmpeg's only way to the network (its `http_proxy`), on 127.0.0.1
// inside the worker process. Each job gets a session with random credentials (so it is no open
// proxy); every request is fetched by egress (address checks, TLS, redirects left to ffmpeg), counted
// against the job's byte limit, and its failures (a blocked address, a 404, a 5xx) are kept so the
// job fails with the right code instead of ffmpeg's generic one.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isReelayError, ReelayError } from '@reelay/contracts';
import { BodyTooLargeError, readAll, toReelayError, type Egress, type EgressResponse } from '@reelay/egress';
import type { Logger } from '@reelay/observability';
import { fromProxyUrl, toProxyUrl } from './https-names.js';
import { rewriteManifest, sniffManifest, SNIFF_BYTES } from './manifest.js';
import { ProxySession, type SessionOptions } from './proxy-session.js';

export type ProxyEgress = Pick<Egress, 'open'>;

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
/** Largest manifest the proxy buffers to rewrite. */
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

export interface ProxyHooks {
  onBytes?: (bytes: number) => void;
  onBlocked?: () => void;
}

export class EgressProxy {
  private readonly sessions = new Map<string, ProxySession>();
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
    private readonly egress: ProxyEgress,
    private readonly logger: Logger,
    private readonly hooks: ProxyHooks,
  ) {
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      this.handle(req, res).catch((err: unknown) => {
        logger.error({ err }, 'proxy request failed');
        if (!res.headersSent) reply(res, 500);
        else res.destroy();
      });
    });
    server.on('connect', (req: http.IncomingMessage, socket: Socket) => this.refuseTunnel(req, socket));
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Listens on 127.0.0.1 only, on a free port. */
  static async start(options: { egress: ProxyEgress; logger: Logger; hooks?: ProxyHooks }): Promise<EgressProxy> {
    const server = http.createServer({ keepAliveTimeout: 5_000 });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    return new EgressProxy(server, port, options.egress, options.logger, options.hooks ?? {});
  }

  /** A session for one job attempt; end() it when the attempt ends. */
  openSession(jobId: string, options: SessionOptions): ProxySession {
    const user = randomBytes(12).toString('hex');
    const session = new ProxySession(jobId, user, Buffer.from(randomBytes(24).toString('hex')), this.port, options);
    this.sessions.set(user, session);
    return session;
  }

  /** Ends a session for good. A session that was only cut off stays registered, so ffmpeg's next
   *  requests get 403 rather than 407, until the processor closes it. */
  closeSession(session: ProxySession): void {
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

  private authenticate(header: string | undefined): ProxySession | undefined {
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
      target = fromProxyUrl(req.url ?? '');
    } catch (err) {
      if (!isReelayError(err)) return reply(res, 400); // origin-form or garbage: not a proxy request
      this.blocked(session, err, `a ${(req.url ?? '').split(':')[0]} URL`);
      return reply(res, 403);
    }
    if (session.signal.aborted) return reply(res, 403);
    await this.forward(session, req, res, target);
  }

  private async forward(session: ProxySession, req: http.IncomingMessage, res: http.ServerResponse, target: URL): Promise<void> {
    // One controller per request: it follows the session (cut off, ended) and the client (ffmpeg
    // closes connections when it seeks), so no upstream transfer outlives its reader.
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
        followRedirects: false, // ffmpeg follows them itself, through the proxy, so every hop is checked
        allowErrorStatus: true,
        signal: abort.signal,
      });
    } catch (err) {
      if (abort.signal.aborted) return void res.destroy(); // ffmpeg or the job went away first
      const error = toReelayError(err);
      if (error.code === 'url_blocked') {
        this.blocked(session, error, target.host);
        return reply(res, 403);
      }
      session.recordError(error);
      this.logger.info({ jobId: session.jobId, host: target.host, code: error.code }, 'proxy: upstream failed');
      return reply(res, error.code === 'upstream_timeout' ? 504 : 502);
    }
    session.recordStatus(upstream.status);
    // Errors of the body after the headers: upstream's fault unless we aborted it ourselves.
    upstream.body.once('error', (err: Error) => {
      if (!abort.signal.aborted) session.recordError(toReelayError(err));
    });
    this.logger.debug({ jobId: session.jobId, host: target.host, status: upstream.status }, 'proxy: response');

    const headers = responseHeaders(upstream.headers, target);
    const sniff = req.method === 'GET' && upstream.status >= 200 && upstream.status < 300 && !rangeFromMiddle(req);
    const out = sniff ? await this.maybeManifest(session, upstream, target, headers) : { status: upstream.status, headers, body: upstream.body };
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
      this.logger.debug({ jobId: session.jobId, host: target.host, err: (err as Error).message }, 'proxy: transfer ended early');
    }
  }

  /**
   * Peeks at the first bytes. A manifest is read whole (bounded), rewritten and sent with fresh
   * length headers; anything else streams on, the peeked bytes first. Undefined when the body failed.
   */
  private async maybeManifest(session: ProxySession, upstream: EgressResponse, target: URL, headers: http.OutgoingHttpHeaders): Promise<ProxiedResponse | undefined> {
    const iterator = upstream.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    const head: Buffer[] = [];
    let size = 0;
    let ended = false;
    try {
      while (size < SNIFF_BYTES) {
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
    if (sniffManifest(first) === undefined) {
      return { status: upstream.status, headers, body: Readable.from(replay(first, ended ? undefined : iterator)) };
    }
    let text = first;
    if (!ended) {
      try {
        text = Buffer.concat([first, await readAll(Readable.from(replay(Buffer.alloc(0), iterator)), MAX_MANIFEST_BYTES - first.length)]);
      } catch (err) {
        if (err instanceof BodyTooLargeError) session.recordError(new ReelayError('upstream_error', `A manifest is larger than ${MAX_MANIFEST_BYTES / 1024 / 1024} MB.`));
        return undefined; // otherwise the body's error listener has recorded why
      }
    }
    const rewritten = Buffer.from(rewriteManifest(text.toString('utf8'), target));
    const out: http.OutgoingHttpHeaders = { ...headers, 'content-length': String(rewritten.length) };
    // The whole manifest, at a new length: a 206's range and validators no longer describe it.
    for (const name of ['content-range', 'accept-ranges', 'etag', 'last-modified']) delete out[name];
    return { status: 200, headers: out, body: Readable.from([rewritten]) };
  }

  private blocked(session: ProxySession, error: ReelayError, where: string): void {
    session.recordError(error);
    this.hooks.onBlocked?.();
    this.logger.warn({ jobId: session.jobId, target: where }, 'proxy: blocked a request');
  }

  private refuseTunnel(req: http.IncomingMessage, socket: Socket): void {
    // ffmpeg never tunnels here (https goes through stand-in names), and a tunnel would hide the
    // requests from the checks above; so CONNECT is refused outright, whatever the target.
    const authorised = this.authenticate(req.headers['proxy-authorization']) !== undefined;
    socket.on('error', () => socket.destroy()); // a client that resets is no concern here
    socket.end(
      authorised
        ? 'HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'
        : 'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="reelay"\r\nConnection: close\r\nContent-Length: 0\r\n\r\n',
    );
  }
}

interface ProxiedResponse {
  status: number;
  headers: http.OutgoingHttpHeaders;
  body: Readable;
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

/** Whether a request asks for a range that does not start at 0 (no manifest sniffing then). */
function rangeFromMiddle(req: http.IncomingMessage): boolean {
  const match = /^bytes=(\d+)-/.exec(req.headers.range ?? '');
  return match !== null && Number(match[1]) > 0;
}

function responseHeaders(upstream: http.IncomingHttpHeaders, target: URL): http.OutgoingHttpHeaders {
  const listed = new Set(String(upstream.connection ?? '').toLowerCase().split(',').map((s) => s.trim()));
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name)) continue;
    out[name] = name === 'location' && typeof value === 'string' ? location(value, target) : value;
  }
  return out;
}

/** A redirect to https becomes its stand-in, so ffmpeg asks the proxy for it like anything else. */
function location(value: string, target: URL): string {
  let next: URL;
  try {
    next = new URL(value, target);
  } catch {
    return value; // unusable: ffmpeg fails to follow it, and the proxy would refuse it anyway
  }
  return next.protocol === 'https:' || next.protocol === 'http:' ? toProxyUrl(next) : value;
}

function reply(res: http.ServerResponse, status: number): void {
  res.writeHead(status, { 'content-length': '0', connection: 'close' }).end();
}
