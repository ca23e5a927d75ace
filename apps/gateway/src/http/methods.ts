// Methods a path does not serve. A request for a known path with another method (TRACE, PROPFIND,
// GET on a POST route…) is 405 method_not_allowed with the Allow header RFC 9110 asks for, not a 404
// that says the path does not exist; an unknown path stays 404. CONNECT never reaches Express (Node
// hands it to the server's 'connect' event), so client-error.ts asks the same question for it.
import type { RequestHandler } from 'express';
import { ReelayError } from '@reelay/contracts';
import type { RouteSpec } from './route.js';

/** The methods each path serves, for a path as a client sends it; empty for an unknown path. */
export type AllowedMethods = (path: string) => string[];

export function allowedMethods(routes: readonly RouteSpec[]): AllowedMethods {
  // Express matches paths case-insensitively and with an optional trailing slash; so does this.
  const patterns = routes.map((route) => ({
    method: route.method.toUpperCase(),
    pattern: new RegExp(
      `^${route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[A-Za-z_]+\}/g, '[^/]+')}/?$`,
      'i',
    ),
  }));
  return (path) => {
    const methods = new Set<string>();
    for (const { method, pattern } of patterns) {
      if (!pattern.test(path)) continue;
      methods.add(method);
      if (method === 'GET') methods.add('HEAD'); // Express answers HEAD with the GET route
    }
    return [...methods];
  };
}

export function methodNotAllowed(allowed: AllowedMethods): RequestHandler {
  return (req, _res, next) => {
    const methods = allowed(req.path);
    if (!methods.length) return next();
    next(
      new ReelayError(
        'method_not_allowed',
        `${req.method} is not allowed on ${req.path}; use ${methods.join(' or ')}.`,
        { headers: { Allow: methods.join(', ') } },
      ),
    );
  };
}
