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

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

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

/** `parts: false`: the answer goes over the one connection, never split into Range parts (a header read). */
export async function forward(
  ctx: ForwardContext,
  session: ProxySession,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  target: URL,
  opts: { parts?: boolean } = {},
): Promise<void> {
  // One controller per request: it follows the session (cut off, ended) and the client (which
  // closes connections when it seeks or has read enough), so no upstream transfer outlives its reader.
  const abort = new AbortController();
  const onSessionAbort = () => abort.abort();
  session.signal.addEventListener('abort', onSessionAbort, { once: true });
  res.once('close', () => {
    abort.abort();
    session.signal.removeEventListener('abort', onSessionAbort);
  });

  let encoded: EgressResponse;
  try {
    encoded = await ctx.egress.open(target, {
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
      ctx.blocked(session, error, target.host);
      return reply(res, 403);
    }
    session.recordError(error);
    ctx.logger.info({ ...session.logFields, host: target.host, code: error.code }, 'proxy: upstream failed');
    return reply(res, error.code === 'upstream_timeout' ? 504 : 502);
  }
  session.recordStatus(encoded.status, encoded.headers);
  // Errors of the body after the headers: upstream's fault unless we aborted it ourselves.
  // `released`: the parallel ranges took over and closed this answer on purpose (proxy-ranges.ts).
  let released = false;
  encoded.body.once('error', (err: Error) => {
    if (!abort.signal.aborted && !released) session.recordError(toReelayError(err));
  });
  const upstream = decodeResponse(encoded, req.method);
  if (typeof upstream === 'string') {
    encoded.body.destroy();
    session.refuse(`The origin sent a body in an encoding that cannot be checked (${upstream.slice(0, 40)}).`);
    return reply(res, 502);
  }
  if (upstream.body !== encoded.body) {
    upstream.body.once('error', () => {
      if (!abort.signal.aborted)
        session.recordError(
          new ReelayError('upstream_error', 'The origin sent a compressed body that cannot be decoded.'),
        );
    });
  }
  ctx.logger.debug({ ...session.logFields, host: target.host, status: upstream.status }, 'proxy: response');

  const headers = responseHeaders(upstream.headers, target, ctx.location);
  const rewriter = ctx.rewriter;
  const sniff =
    rewriter && req.method === 'GET' && upstream.status >= 200 && upstream.status < 300 && !rangeFromMiddle(req);
  const out: ProxiedResponse | undefined = sniff
    ? await rewriteBody(rewriter, session, upstream, target, headers)
    : { status: upstream.status, headers, body: upstream.body };
  if (out === undefined) {
    if (abort.signal.aborted) return void res.destroy();
    return reply(res, 502);
  }
  if (ctx.concurrency > 1 && opts.parts !== false && req.method === 'GET' && !out.rewritten && upstream === encoded) {
    const { range: _range, 'if-range': _ifRange, ...asked } = session.forwardHeaders(req.headers);
    out.body =
      (await rangedBody(
        {
          egress: ctx.egress,
          session,
          concurrency: ctx.concurrency,
          target,
          headers: asked,
          signal: abort.signal,
          release: () => (released = true),
          thresholdBytes: session.rangeThresholdBytes,
        },
        upstream,
        out.body,
      )) ?? out.body;
  }
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
    ctx.logger.debug(
      { ...session.logFields, host: target.host, err: (err as Error).message },
      'proxy: transfer ended early',
    );
  }
}

/** Whether a request asks for a range that does not start at 0 (no sniffing then). */
function rangeFromMiddle(req: http.IncomingMessage): boolean {
  const match = /^bytes=(\d+)-/.exec(req.headers.range ?? '');
  return match !== null && Number(match[1]) > 0;
}

function responseHeaders(
  upstream: http.IncomingHttpHeaders,
  target: URL,
  location: ProxyOptions['location'],
): http.OutgoingHttpHeaders {
  const listed = new Set(
    String(upstream.connection ?? '')
      .toLowerCase()
      .split(',')
      .map((s) => s.trim()),
  );
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
