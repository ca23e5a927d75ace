// Surface B: POST /api/v1/extract.
import type { RequestHandler } from 'express';
import { ErrorEnvelopeSchema, ExtractEnvelopeSchema, ExtractRequestSchema } from '@reelay/contracts';
import { parseBody, type RouteSpec } from '../http/route.js';
import { TOO_MANY, withRateLimitHeaders } from '../http/surface-gate.js';
import { perMinute, type StatedLimits } from '../openapi-limits.js';
import { clientGone, sendExtract, wantsFresh, type ExtractService } from '../services/extract.js';

export const EXTRACT_ERRORS = {
  400: { description: 'invalid_request or invalid_url', schema: ErrorEnvelopeSchema },
  403: { description: 'url_blocked: the URL or a redirect points at a private address', schema: ErrorEnvelopeSchema },
  404: { description: 'content_not_found: the origin answered 404/410', schema: ErrorEnvelopeSchema },
  413: { description: 'payload_too_large', schema: ErrorEnvelopeSchema },
  415: { description: 'unsupported_media_type', schema: ErrorEnvelopeSchema },
  422: { description: 'no_media_found', schema: ErrorEnvelopeSchema },
  502: { description: 'upstream_error', schema: ErrorEnvelopeSchema },
  503: {
    description:
      "service_unavailable; or upstream_rate_limited: the platform's API or the page's origin is rate limiting (it answered 429, or 503 with Retry-After; Retry-After: the origin's own, at most 3600, when it gave one)",
    schema: ErrorEnvelopeSchema,
    headers: { 'Retry-After': 'Seconds to wait, when the origin said' },
  },
  504: { description: 'upstream_timeout', schema: ErrorEnvelopeSchema },
};

/** On an answer from the extract cache (EXTRACT_CACHE_SECONDS); `Cache-Control: no-cache` asks afresh. */
export const CACHED_HEADERS = {
  Age: 'Seconds since this result was fetched from the origin, when it was answered from the extract cache or shared with a concurrent request; absent when this request fetched it',
};

/**
 * `limit`: surface B's limit per client address (RATE_LIMIT_V1_PER_MIN), absent when it is off;
 * `stated`: the limits as the summary states them.
 */
export function extractRoutes(
  service: ExtractService,
  limit: RequestHandler | undefined,
  stated: Pick<StatedLimits, 'v1PerMinute'>,
): RouteSpec[] {
  return [
    {
      method: 'post',
      path: '/api/v1/extract',
      tag: 'Extract and download',
      summary: `Extract the media of a public page, manifest or media file, or a page of a collection's entries (playlist, channel, feed, profile; \`cursor\` for the next page): ${perMinute(stated.v1PerMinute, 'client address', 'RATE_LIMIT_V1_PER_MIN')}`,
      body: ExtractRequestSchema,
      responses: withRateLimitHeaders({
        200: { description: 'The extract result', schema: ExtractEnvelopeSchema, headers: CACHED_HEADERS },
        ...EXTRACT_ERRORS,
        ...TOO_MANY,
      }),
      before: limit && [limit],
      handler: async (req, res) => {
        const { url, cursor } = parseBody(ExtractRequestSchema, req.body);
        sendExtract(res, await service.extract(url, clientGone(req, res), { fresh: wantsFresh(req), cursor }));
      },
    },
  ];
}
