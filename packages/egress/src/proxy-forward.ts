// Forwarding one absolute-form proxy request: egress opens it (address checks, no redirects followed,
// so the client's next hop comes back through the proxy and is checked too), the response's hop-by-hop
// headers are dropped, the body is counted against the session's byte limit on its way out, and
// failures are recorded on the session so the run fails with the right code.
import type http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { ReelayError } from '@reelay/contracts';
import { toReelayError, type EgressResponse } from './egress.js';
import { decodeResponse } from './decode.js';
import { rangedBody } from './proxy-ranges.js';
import { rewriteBody } from './proxy-rewrite.js';
import type { ProxySession } from './proxy-session.js';
import type { ProxyEgress, ProxyHooks, ProxyLogger } from './proxy-deps.js';
import type { ProxiedResponse, ProxyOptions } from './proxy-types.js';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** What forwarding needs of the proxy that received the request. */
export interface ForwardContext {
  egress: ProxyEgress;
  logger: ProxyLogger;
  hooks: ProxyHooks;
  location: ProxyOptions['location'];
  rewriter: ProxyOptions['rewriter'];
  /** Connections one large file may be fetched over (proxy-ranges.ts); 1: one, as asked. */
  concurrency: number;
  /** Records and reports a blocked target. */
  blocked(session: ProxySession, error: ReelayError, where: string): void;
}

/**
 * An upstream answer made ready for the client: the response to send, or the bare status the client
 * gets instead (`body` absent), or nothing when the request was given up before the answer came.
 */
export type Opened = ProxiedResponse | { status: number; body?: undefined } | undefined;

export async function forward(ctx: ForwardContext, session: ProxySession, req: http.IncomingMessage, res: http.ServerResponse, target: URL): Promise<void> {
  // One controller per request: it follows the session (cut off, ended) and the client (which
  // closes connections when it seeks or has read enough), so no upstream transfer outlives its reader.
  const abort = followSession(session);
  res.once('close', () => abort.abort());
  const opened = await openUpstream(ctx, session, target, { method: req.method === 'HEAD' ? 'HEAD' : 'GET', headers: session.forwardHeaders(req.headers), fromMiddle: rangeFromMiddle(req) }, abort.signal);
  await send(ctx, session, res, target, opened);
}

/** A controller aborted with the session (cut off, ended); abort() it when its request is done with. */
export function followSession(session: ProxySession): AbortController {
  const abort = new AbortController();
  const onSessionAbort = () => abort.abort();
  session.signal.addEventListener('abort', onSessionAbort, { once: true });
  abort.signal.addEventListener('abort', () => session.signal.removeEventListener('abort', onSessionAbort), { once: true });
  return abort;
}

export interface UpstreamRequest {
  method: 'GET' | 'HEAD';
  /** The request headers that may go upstream (session.forwardHeaders). */
  headers: Record<string, string>;
  /** Whether it asks for a range that does not start at 0 (no manifest sniffing then). */
  fromMiddle: boolean;
}

/**
 * Opens the request upstream and makes its answer ready: failures and error statuses recorded on the
 * session, the body decoded, a manifest rewritten, a large file split into parallel Range parts.
 * Nothing reaches the client here: an answer opened early (proxy-early.ts) waits for its request.
 */
export async function openUpstream(ctx: ForwardContext, session: ProxySession, target: URL, request: UpstreamRequest, signal: AbortSignal): Promise<Opened> {
  let encoded: EgressResponse;
  try {
    encoded = await ctx.egress.open(target, {
      method: request.method,
      headers: request.headers,
      identity: true,
      followRedirects: false, // the client follows them itself, through the proxy, so every hop is checked
      allowErrorStatus: true,
      signal,
    });
  } catch (err) {
    if (signal.aborted) return undefined; // the client or its run went away first
    const error = toReelayError(err);
    if (error.code === 'url_blocked') {
      ctx.blocked(session, error, target.host);
      return { status: 403 };
    }
    session.recordError(error);
    ctx.logger.info({ ...session.logFields, host: target.host, code: error.code }, 'proxy: upstream failed');
    return { status: error.code === 'upstream_timeout' ? 504 : 502 };
  }
  session.recordStatus(encoded.status, encoded.headers);
  // Errors of the body after the headers: upstream's fault unless we aborted it ourselves.
  // `released`: the parallel ranges took over and closed this answer on purpose (proxy-ranges.ts).
  let released = false;
  encoded.body.once('error', (err: Error) => {
    if (!signal.aborted && !released) session.recordError(toReelayError(err));
  });
  const upstream = decodeResponse(encoded, request.method);
  if (typeof upstream === 'string') {
    encoded.body.destroy();
    session.refuse(`The origin sent a body in an encoding that cannot be checked (${upstream.slice(0, 40)}).`);
    return { status: 502 };
  }
  if (upstream.body !== encoded.body) {
    upstream.body.once('error', () => {
      if (!signal.aborted) session.recordError(new ReelayError('upstream_error', 'The origin sent a compressed body that cannot be decoded.'));
    });
  }
  ctx.logger.debug({ ...session.logFields, host: target.host, status: upstream.status }, 'proxy: response');

  const headers = responseHeaders(upstream.headers, target, ctx.location);
  const rewriter = ctx.rewriter;
  const sniff = rewriter && request.method === 'GET' && upstream.status >= 200 && upstream.status < 300 && !request.fromMiddle;
  const out: ProxiedResponse | undefined = sniff ? await rewriteBody(rewriter, session, upstream, target, headers) : { status: upstream.status, headers, body: upstream.body };
  if (out === undefined) return signal.aborted ? undefined : { status: 502 };
  if (ctx.concurrency > 1 && request.method === 'GET' && !out.rewritten && upstream === encoded) {
    const { range: _range, 'if-range': _ifRange, ...asked } = request.headers;
    out.body = (await rangedBody({ egress: ctx.egress, session, concurrency: ctx.concurrency, target, headers: asked, signal, release: () => (released = true), thresholdBytes: session.rangeThresholdBytes }, upstream, out.body)) ?? out.body;
  }
  return out;
}

/** Sends an opened answer to the client, counting its bytes against the session's limit. */
export async function send(ctx: ForwardContext, session: ProxySession, res: http.ServerResponse, target: URL, opened: Opened): Promise<void> {
  if (opened === undefined || res.destroyed) {
    opened?.body?.destroy();
    return void res.destroy();
  }
  if (opened.body === undefined) return reply(res, opened.status);
  const out = opened;
  res.writeHead(out.status, out.headers);
  // Counted on 'data' beside the pipe, not in a Transform stage: one stream hop less per chunk (a
  // tenth of the proxy's CPU). Past the limit the body is destroyed, which ends the pipeline.
  out.body.on('data', (chunk: Buffer) => {
    if (!session.count(chunk.length)) out.body.destroy(new Error('byte limit reached'));
    else ctx.hooks.onBytes?.(chunk.length);
  });
  try {
    await pipeline(out.body, res);
  } catch (err) {
    // Already recorded where it matters (body error, byte limit); a client that left is no failure.
    ctx.logger.debug({ ...session.logFields, host: target.host, err: (err as Error).message }, 'proxy: transfer ended early');
  }
}

/** Whether a request asks for a range that does not start at 0 (no sniffing then). */
function rangeFromMiddle(req: http.IncomingMessage): boolean {
  const match = /^bytes=(\d+)-/.exec(req.headers.range ?? '');
  return match !== null && Number(match[1]) > 0;
}

function responseHeaders(upstream: http.IncomingHttpHeaders, target: URL, location: ProxyOptions['location']): http.OutgoingHttpHeaders {
  const listed = new Set(String(upstream.connection ?? '').toLowerCase().split(',').map((s) => s.trim()));
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name)) continue;
    out[name] = name === 'location' && typeof value === 'string' && location ? location(value, target) : value;
  }
  return out;
}

/** An empty answer that closes the connection (the client sees only the status). */
export function reply(res: http.ServerResponse, status: number): void {
  res.writeHead(status, { 'content-length': '0', connection: 'close' }).end();
}
