// The error envelope of DESIGN.md for every failure. ReelayErrors are answered as they are; the
// client errors Express and its parsers raise (malformed path encoding, undecodable bodies) are mapped
// to their codes; a Redis that times out, is gone or refuses writes (MISCONF, OOM, READONLY, …) is
// service_unavailable, here for every route rather than in each store; anything else is a bug:
// logged with the request id, answered as internal_error without a stack.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ReelayError } from '@reelay/contracts';
import { redisUnavailable } from '@reelay/redis';
import type { Logger } from '@reelay/observability';

export const notFound: RequestHandler = (req, _res, next) => {
  next(new ReelayError('not_found', `No route for ${req.method} ${req.path}.`));
};

// Headers a handler may have set for the body it meant to send (a file's type and name); an
// envelope must not go out labelled as video/mp4.
const BODY_HEADERS = [
  'Content-Type',
  'Content-Length',
  'Content-Disposition',
  'Content-Range',
  'Content-Encoding',
  'Accept-Ranges',
  'ETag',
  'Last-Modified',
];

/** Errors from Express and body-parser that are the client's fault, as ReelayErrors; else undefined. */
export function clientFault(err: unknown): ReelayError | undefined {
  if (err instanceof ReelayError) return err;
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  // Express's router: a path parameter with malformed percent-encoding, such as /api/v1/jobs/%zz.
  if (err instanceof URIError)
    return new ReelayError('invalid_request', 'The request path holds malformed percent-encoding.');
  if (status === 413) return new ReelayError('payload_too_large', 'The request body is too large.');
  if (status === 415)
    return new ReelayError('unsupported_media_type', 'The request body type or encoding is not supported.');
  // body-parser: a gzip/deflate/br body that does not decompress (zlib's Z_* and ERR_* codes).
  return new ReelayError('invalid_request', 'The request could not be read (bad encoding or syntax).');
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const error =
      clientFault(err) ??
      redisUnavailable(err) ??
      new ReelayError('internal_error', 'Something went wrong on our side; the request id identifies it in our logs.');
    if (error.status >= 500) {
      logger.error({ err, reqId: req.id, code: error.code }, 'request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const name of BODY_HEADERS) res.removeHeader(name);
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.status(error.status).json(error.toEnvelope());
  };
}
