// Request bodies: JSON only (415 otherwise), at most 16 KiB (413), parse failures as 400. Body
// parser errors are turned into ReelayErrors here so the error handler sees one type.
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { ReelayError } from '@reelay/contracts';

export const BODY_LIMIT_BYTES = 16 * 1024;

function hasBody(req: Parameters<RequestHandler>[0]): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** 415 for a body that is not declared as JSON. */
export const requireJson: RequestHandler = (req, _res, next) => {
  if (hasBody(req) && !req.is(['application/json', 'application/*+json'])) {
    return next(
      new ReelayError('unsupported_media_type', 'Request bodies must be JSON (Content-Type: application/json).'),
    );
  }
  next();
};

export const jsonBody: RequestHandler = express.json({
  limit: BODY_LIMIT_BYTES,
  strict: true,
  type: ['application/json', 'application/*+json'],
});

/** Maps body-parser failures to the error table. */
export const bodyErrors: ErrorRequestHandler = (err, _req, _res, next) => {
  const type = (err as { type?: string }).type;
  if (type === 'entity.too.large')
    return next(
      new ReelayError('payload_too_large', `The request body is larger than ${BODY_LIMIT_BYTES / 1024} KiB.`),
    );
  if (type === 'entity.parse.failed')
    return next(new ReelayError('invalid_request', 'The request body is not valid JSON.'));
  if (type === 'encoding.unsupported' || type === 'charset.unsupported')
    return next(new ReelayError('unsupported_media_type', 'The request body encoding is not supported.'));
  // A gzip/deflate/br body that does not decompress: zlib's error, with body-parser's status 400.
  if (
    type === undefined &&
    (err as { status?: number }).status === 400 &&
    /^(Z_|ERR_)/.test(String((err as { code?: string }).code))
  ) {
    return next(new ReelayError('invalid_request', 'The request body does not decode as its Content-Encoding says.'));
  }
  if (type === 'request.aborted' || type === 'request.size.invalid' || type === 'stream.encoding.set')
    return next(new ReelayError('invalid_request', 'The request body could not be read.'));
  next(err);
};
