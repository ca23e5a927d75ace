// Surface A: POST /api with an X-API-Key and its keyless twin POST /api/playground. Both answer what
// POST /api/v1/extract answers (the same ExtractService); the gate in front adds the key check and the
// rate limits.
import { ErrorEnvelopeSchema, ExtractEnvelopeSchema, ExtractRequestSchema } from '@reelay/contracts';
import { parseBody, type RouteSpec } from '../http/route.js';
import { surfaceGate, TOO_MANY, withRateLimitHeaders, type SurfaceGateDeps } from '../http/surface-gate.js';
import { perMinute, type StatedLimits } from '../openapi-limits.js';
import { clientGone, sendExtract, wantsFresh, type ExtractService } from '../services/extract.js';
import { CACHED_HEADERS, EXTRACT_ERRORS } from './extract.js';

export function surfaceARoutes(
  service: ExtractService,
  gateDeps: SurfaceGateDeps,
  stated: Pick<StatedLimits, 'keyPerMinute' | 'publicPerMinute'>,
): RouteSpec[] {
  const handler: RouteSpec['handler'] = async (req, res) => {
    const { url, cursor } = parseBody(ExtractRequestSchema, req.body);
    sendExtract(res, await service.extract(url, clientGone(req, res), { fresh: wantsFresh(req), cursor }));
  };
  const ok = {
    200: {
      description: 'The extract result, as POST /api/v1/extract answers it',
      schema: ExtractEnvelopeSchema,
      headers: CACHED_HEADERS,
    },
  };
  return [
    {
      method: 'post',
      path: '/api',
      tag: 'API with a key',
      summary: `Extract media with an API key (X-API-Key): ${perMinute(stated.keyPerMinute, 'key', 'RATE_LIMIT_KEY_PER_MIN')}, usage counted per key`,
      auth: 'apiKey',
      body: ExtractRequestSchema,
      responses: withRateLimitHeaders({
        ...ok,
        ...EXTRACT_ERRORS,
        401: {
          description: 'api_key_required (no X-API-Key) or invalid_api_key (unknown or deleted key)',
          schema: ErrorEnvelopeSchema,
        },
        403: { description: 'api_key_disabled, or url_blocked', schema: ErrorEnvelopeSchema },
        ...TOO_MANY,
      }),
      before: [surfaceGate('api', gateDeps)],
      handler,
    },
    {
      method: 'post',
      path: '/api/playground',
      tag: 'API with a key',
      summary: `Extract media without a key (what the web app's More options page uses): ${perMinute(stated.publicPerMinute, 'client address', 'RATE_LIMIT_PUBLIC_PER_MIN')}`,
      body: ExtractRequestSchema,
      responses: withRateLimitHeaders({ ...ok, ...EXTRACT_ERRORS, ...TOO_MANY }),
      before: [surfaceGate('playground', gateDeps)],
      handler,
    },
  ];
}
