// Direct streams: a progressive source piped from the origin through the egress guard to the
// client with backpressure, Range passed through, and the upstream request cancelled when the
// client goes away. Errors before the first byte are envelopes; after it, the connection is cut.
// A stream that moves no bytes for egress.streamIdleMs (a client that stopped reading, or an origin
// that went quiet) is cut too, so it cannot hold an upstream connection and its host's slot.
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { mediaFilename, ReelayError, type StoredSource } from '@reelay/contracts';
import { statusError, type Egress } from '@reelay/egress';
import { extOfMime } from '@reelay/extractors';
import type { GatewayMetrics, StreamOutcome } from '../metrics.js';
import { contentDisposition } from './disposition.js';

export interface StreamOptions {
  egress: Egress;
  metrics: GatewayMetrics;
  maxBytes: number;
  source: StoredSource;
  basename: string;
}

export async function streamSource(req: Request, res: Response, opts: StreamOptions): Promise<void> {
  const { egress, metrics, source } = opts;
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const range = req.get('range');
  const upstream = await egress.open(source.url, {
    identity: true,
    purpose: 'media',
    signal: controller.signal,
    allowErrorStatus: true,
    headers: { ...source.headers, range: range && /^bytes=\d*-\d*$/.test(range) ? range : undefined },
  });
  const { status, headers } = upstream;
  if (status === 416) {
    upstream.body.destroy();
    res.status(416);
    if (headers['content-range']) res.setHeader('Content-Range', String(headers['content-range']));
    res.end();
    return;
  }
  if (status >= 400) {
    upstream.body.destroy();
    throw statusError(status, headers);
  }
  const length = Number(headers['content-length']);
  const total = status === 206 ? Number(/\/(\d+)$/.exec(String(headers['content-range'] ?? ''))?.[1]) : length;
  if (Number.isFinite(total) && total > opts.maxBytes) {
    upstream.body.destroy();
    throw new ReelayError('upstream_error', `The media is larger than the service allows (${opts.maxBytes} bytes).`);
  }
  const upstreamType = String(headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  const contentType =
    upstreamType && upstreamType !== 'application/octet-stream'
      ? upstreamType
      : (source.mime_type ?? 'application/octet-stream');
  const ext = source.ext ?? extOfMime(contentType);
  res.status(status === 206 ? 206 : 200);
  res.setHeader('Content-Type', contentType);
  if (Number.isFinite(length) && headers['content-encoding'] === undefined)
    res.setHeader('Content-Length', String(length));
  if (status === 206 && headers['content-range']) res.setHeader('Content-Range', String(headers['content-range']));
  res.setHeader('Accept-Ranges', status === 206 || headers['accept-ranges'] === 'bytes' ? 'bytes' : 'none');
  res.setHeader('Content-Disposition', contentDisposition(mediaFilename(opts.basename, ext)));
  res.setHeader('Cache-Control', 'no-store');

  metrics.activeStreams.inc();
  // Counting on 'data' beside the pipe, rather than in a Transform stage, saves a stream hop per
  // chunk on the hot path; the limit still cuts the stream the moment it is passed.
  let bytes = 0;
  // Backpressure stops 'data' once the client's buffers are full, so the timer sees a non-reader.
  let stalled = false;
  const idle = setTimeout(() => {
    stalled = true;
    upstream.body.destroy(new ReelayError('upstream_timeout', 'The stream moved no bytes for too long.'));
  }, egress.streamIdleMs);
  idle.unref();
  let tooLarge = false;
  upstream.body.on('data', (chunk: Buffer) => {
    idle.refresh();
    bytes += chunk.length;
    if (bytes > opts.maxBytes) {
      tooLarge = true;
      // This listener runs before the pipe's: cutting the client here keeps the chunk that passed
      // the limit from being written, so the client never receives more than maxBytes.
      res.destroy();
      upstream.body.destroy(new ReelayError('upstream_error', 'The media is larger than the service allows.'));
    }
  });
  // Which side broke first, read from the order of events: on Node 22 the pipeline's clean-up closes
  // the response (aborting the controller) before its rejection arrives, so an aborted signal alone
  // no longer tells a client that left from an origin that cut the body.
  // An origin error after the client left is the abort reaching the origin, not the origin failing.
  let originBroke = false;
  const originFailed = () => {
    if (!controller.signal.aborted) originBroke = true;
  };
  upstream.body.once('error', originFailed);
  upstream.body.once('close', () => {
    if (!upstream.body.readableEnded) originFailed();
  });
  let outcome: StreamOutcome = 'completed';
  try {
    await pipeline(upstream.body, res);
  } catch {
    // Told apart for the metrics: the client leaving is normal, the origin failing is not.
    outcome = tooLarge
      ? 'too_large'
      : stalled
        ? 'stalled'
        : controller.signal.aborted && !originBroke
          ? 'client_aborted'
          : 'origin_error';
    // Headers are out: the only honest signal left is cutting the connection.
    if (!res.destroyed) res.destroy();
  } finally {
    clearTimeout(idle);
    metrics.streams.inc({ outcome });
    metrics.streamedBytes.inc(bytes);
    metrics.activeStreams.dec();
  }
}
