// X-Request-Id on every response: the client's when it is sane, otherwise a fresh UUID. The access log
// and the error handler name the request by it.
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

declare global {
  namespace Express {
    interface Request {
      /** Set by requestId, first of all middleware. */
      id: string;
    }
  }
}

const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

export const requestId: RequestHandler = (req, res, next) => {
  const given = req.get('x-request-id');
  req.id = given && SANE.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', req.id);
  next();
};
