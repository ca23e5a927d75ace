// The error envelope of DESIGN.md for every failure. ReelayErrors are answered as they are; anything
// else is a bug: logged with the request id, answered as internal_error without a stack.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ReelayError } from '@reelay/contracts';
import type { Logger } from '@reelay/observability';

export const notFound: RequestHandler = (req, _res, next) => {
  next(new ReelayError('not_found', `No route for ${req.method} ${req.path}.`));
};

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const error =
      err instanceof ReelayError ? err : new ReelayError('internal_error', 'Something went wrong on our side; the request id identifies it in our logs.');
    if (!(err instanceof ReelayError) || error.status >= 500) {
      logger.error({ err, reqId: req.id, code: error.code }, 'request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.status(error.status).json(error.toEnvelope());
  };
}
