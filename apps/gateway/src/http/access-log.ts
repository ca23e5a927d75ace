// One JSON line per request, written when the response is finished or the client leaves: the id,
// method, URL, status and time taken. Replaces pino-http, whose per-request child logger and response
// wrapping cost about a tenth of the extract benchmark's CPU for the same line.
import type { RequestHandler } from 'express';
import type { Logger } from '@reelay/observability';

/**
 * Routes scraped or probed every few seconds: logging them would drown the rest. /readyz is 503
 * while no worker is healthy, so a compose healthcheck would log an error every 10 s.
 */
const QUIET = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Query parameters that carry one-time secrets (a social sign-in callback's code and state, a token):
 * logged as [redacted], so a log reader cannot finish someone else's sign-in.
 */
const SECRET_PARAMS = /([?&](?:code|state|token|session_state|id_token|access_token)=)[^&#]*/gi;

export function loggedUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[redacted]');
}

export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    if (QUIET.has(req.url)) return next();
    const started = performance.now();
    const done = () => {
      res.removeListener('finish', done);
      res.removeListener('close', done);
      const finished = res.writableFinished;
      const status = res.statusCode;
      const line = {
        req: { id: req.id, method: req.method, url: loggedUrl(req.originalUrl) },
        res: { status },
        responseTime: Math.round(performance.now() - started),
      };
      if (status >= 500) logger.error(line, finished ? 'request failed' : 'request aborted');
      else logger.info(line, finished ? 'request completed' : 'request aborted');
    };
    res.once('finish', done);
    res.once('close', done);
    next();
  };
}
