// Surface A's gate, and surface B's limit per client address, run before the body is read: one Redis
// round trip checks the API key and counts the request against its limit (see @reelay/accounts
// limits.ts). Every answer past the gate carries the RateLimit-* headers, errors included. A key's
// usage is counted by key-usage.ts, as on every route that takes a key.
import type { RequestHandler } from 'express';
import type { AccountServices, Surface } from '@reelay/accounts';
import { ErrorEnvelopeSchema, ReelayError } from '@reelay/contracts';
import type { Logger } from '@reelay/observability';
import type { GatewayMetrics } from '../metrics.js';
import type { ResponseSpec } from './route.js';

export interface SurfaceGateDeps {
  gate: AccountServices['gate'];
  metrics: GatewayMetrics;
  logger: Logger;
}

export const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': 'Requests allowed per window (a minute)',
  'RateLimit-Remaining': 'Requests left in the current window',
  'RateLimit-Reset': 'Seconds until the window ends',
};

export const TOO_MANY = {
  429: {
    description: 'rate_limited: over the limit; Retry-After says when to try again',
    schema: ErrorEnvelopeSchema,
    headers: { 'Retry-After': 'Seconds to wait' },
  },
};

/** Documents the RateLimit-* headers on every answer a gate lets through or refuses (503: no gate ran). */
export function withRateLimitHeaders(responses: Record<number, ResponseSpec>): Record<number, ResponseSpec> {
  return Object.fromEntries(
    Object.entries(responses).map(([status, spec]) => [
      status,
      status === '503' ? spec : { ...spec, headers: { ...spec.headers, ...RATE_LIMIT_HEADERS } },
    ]),
  );
}

export function surfaceGate(surface: Surface, deps: SurfaceGateDeps): RequestHandler {
  return async (req, res, next) => {
    const started = process.hrtime.bigint();
    const decision = await deps.gate.check({ surface, secret: req.get('x-api-key'), ip: req.ip ?? '' });
    deps.metrics.gateDuration.observe({ surface }, Number(process.hrtime.bigint() - started) / 1e9);
    res.setHeader('RateLimit-Limit', String(decision.limit));
    res.setHeader('RateLimit-Remaining', String(decision.remaining));
    res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
    deps.metrics.surfaceRequests.inc({ surface, auth: decision.auth });
    if (!decision.allowed) {
      deps.metrics.rateLimited.inc({ surface });
      throw new ReelayError(
        'rate_limited',
        `The limit of ${decision.limit} requests per minute is reached; try again in ${decision.resetSeconds} seconds.`,
        {
          headers: { 'Retry-After': String(decision.resetSeconds) },
        },
      );
    }
    if (decision.auth === 'missing')
      throw new ReelayError(
        'api_key_required',
        'This endpoint needs an API key in the X-API-Key header; /api/playground works without one.',
      );
    if (decision.auth === 'invalid')
      throw new ReelayError('invalid_api_key', 'The API key is not valid: it is unknown or has been deleted.');
    if (decision.auth === 'disabled')
      throw new ReelayError(
        'api_key_disabled',
        'This API key is disabled; enable it again in the key settings or use another key.',
      );
    next();
  };
}
