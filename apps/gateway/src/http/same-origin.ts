// Cookie-authenticated routes that change state refuse cross-site requests (CSRF). Browsers send
// Origin on every POST and DELETE, and Sec-Fetch-Site where they support it: both must name this
// site (scheme, host and port of the request itself, as seen through TRUST_PROXY). A client that sends
// neither is not a browser, so it holds no ambient cookie of a victim, and passes.
// SameSite=Lax and JSON-only bodies already stop most cross-site forms; this also covers bodiless
// POSTs (logout, disable), which a plain HTML form can send.
import type { Request, RequestHandler } from 'express';
import { ReelayError } from '@reelay/contracts';

function ownOrigin(req: Request): string | undefined {
  try {
    return req.host ? new URL(`${req.protocol}://${req.host}`).origin : undefined;
  } catch {
    return undefined; // a Host header that is not a host: nothing can match it
  }
}

function originOf(value: string): string | undefined {
  try {
    return new URL(value).origin;
  } catch {
    return undefined;
  }
}

/** Whether a browser sent this request from another site (a client that says neither header is not a browser). */
export function isCrossSite(req: Request): boolean {
  const site = req.get('sec-fetch-site');
  const origin = req.get('origin');
  return (
    (site !== undefined && site !== 'same-origin' && site !== 'none') ||
    (origin !== undefined && (originOf(origin) ?? 'null') !== ownOrigin(req))
  );
}

/** Refuses a browser's request from another site with `message` (403 cross_site_request). */
export function refuseCrossSite(message: string): RequestHandler {
  return (req, _res, next) => {
    if (isCrossSite(req)) return next(new ReelayError('cross_site_request', message));
    next();
  };
}

export const sameOrigin: RequestHandler = refuseCrossSite(
  'Cross-site requests to account routes are refused; use the reelay web app.',
);
