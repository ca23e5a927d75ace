// The proxy's body rewrite (the worker's manifests): peek at the first bytes of a response, and
// either read it whole (bounded), rewrite it and send it at its new length, or stream it on untouched,
// the peeked bytes first. Built on body.ts's peek, which puts what it read back into the stream: a
// body that is not rewritten is sent on as the very stream that came, with no stage added per chunk.
import type http from 'node:http';
import { Readable } from 'node:stream';
import { isReelayError, ReelayError } from '@reelay/contracts';
import { BodyTooLargeError, peek, readAll } from './body.js';
import type { EgressResponse } from './response.js';
import type { ProxySession } from './proxy-session.js';
import type { BodyRewriter, ProxiedResponse } from './proxy-types.js';

/**
 * The response to send for an upstream body the rewriter may want. Undefined when the body failed
 * (the body's own error listener has recorded why, or the size failure is recorded here).
 */
export async function rewriteBody(
  rewriter: BodyRewriter,
  session: ProxySession,
  upstream: EgressResponse,
  target: URL,
  headers: http.OutgoingHttpHeaders,
): Promise<ProxiedResponse | undefined> {
  const peeked = await peek(upstream.body, rewriter.sniffBytes);
  if (peeked.failed) return undefined;
  if (!rewriter.detect(peeked.head)) {
    return { status: upstream.status, headers, body: peeked.ended ? Readable.from([peeked.head]) : upstream.body };
  }
  let text: Buffer;
  try {
    if (peeked.head.length > rewriter.maxBytes) {
      upstream.body.destroy();
      throw new BodyTooLargeError(rewriter.maxBytes);
    }
    text = peeked.ended ? peeked.head : await readAll(upstream.body, rewriter.maxBytes);
  } catch (err) {
    if (err instanceof BodyTooLargeError)
      session.recordError(
        new ReelayError('upstream_error', `A ${rewriter.name} is larger than ${rewriter.maxBytes / 1024 / 1024} MB.`),
      );
    return undefined;
  }
  let rewritten: Buffer;
  try {
    rewritten = Buffer.from(rewriter.rewrite(text.toString('utf8'), target, session));
  } catch (err) {
    if (!isReelayError(err)) throw err;
    session.refuse(err.message);
    return undefined;
  }
  const out: http.OutgoingHttpHeaders = { ...headers, 'content-length': String(rewritten.length) };
  // The whole body, at a new length: a 206's range and validators no longer describe it.
  for (const name of ['content-range', 'accept-ranges', 'etag', 'last-modified']) delete out[name];
  return { status: 200, headers: out, body: Readable.from([rewritten]), rewritten: true };
}
