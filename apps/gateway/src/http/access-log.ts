// One JSON line per request, written when the response is finished or the client leaves: the id,
// method, route, status and time taken. Replaces pino-http, whose per-request child logger and response
// wrapping cost about a tenth of the extract benchmark's CPU for the same line.
// The path is logged as its route template (`/api/v1/jobs/:id`), never as sent: a path may hold a
// capability (a job id fetches the job's file, a feed URL holds its token), and a log reader holds none.
import type { Request, RequestHandler } from 'express';
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

/** A path segment shaped like a capability (an id or token of 16+ base64url characters). */
const TOKEN_SEGMENT = /^[A-Za-z0-9_-]{16,}(\.[A-Za-z0-9]{1,8})?$/;

export function loggedUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[redacted]');
}

export interface AccessLogOptions {
  /** The template of a path no route matched by Express (refused before routing), if any has it. */
  routeOf?: (method: string, path: string) => string | undefined;
}

/**
 * The path as logged: Express's route template, else the app's template for it, else (no route at
 * all: a 404) the path with every capability-shaped segment replaced; then the query, redacted.
 */
export function loggedPath(req: Request, options: AccessLogOptions = {}): string {
  const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
  const matched = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : undefined;
  const template = matched ?? routeTemplate(options, req.method, req.path);
  const path =
    template ??
    req.path
      .split('/')
      .map((segment) => (TOKEN_SEGMENT.test(segment) ? ':redacted' : segment))
      .join('/');
  return loggedUrl(`${path}${query}`);
}

function routeTemplate(options: AccessLogOptions, method: string, path: string): string | undefined {
  const found = options.routeOf?.(method, path);
  return found === 'unmatched' ? undefined : found;
}

export function accessLog(logger: Logger, options: AccessLogOptions = {}): RequestHandler {
  return (req, res, next) => {
    if (QUIET.has(req.url)) return next();
    const started = performance.now();
    const done = () => {
      res.removeListener('finish', done);
      res.removeListener('close', done);
      const finished = res.writableFinished;
      const status = res.statusCode;
      const line = {
        req: { id: req.id, method: req.method, url: loggedPath(req, options) },
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
