// GET /api/v1/download/stream: the web app's way to save a direct stream by navigation. A fetch() of
// POST /api/v1/download can only hand its bytes to the page (which would hold the whole file in
// memory); a link the browser follows writes them straight to disk. So the front page POSTs first, and
// when the answer is a 200 stream it drops that body and points an <a download> here with the same
// preset. This route never starts a job (a GET must be safe to repeat and to prefetch): what would be a
// job is refused, so a link from another site cannot queue work on a visitor's job slots, and a
// browser request from another site is refused outright.
import type { RequestHandler } from 'express';
import type { Egress } from '@reelay/egress';
import {
  DownloadRequestSchema,
  ErrorEnvelopeSchema,
  ReelayError,
  type ChosenSource,
  type DownloadRequest,
} from '@reelay/contracts';
import { parseBody, type RouteSpec } from '../http/route.js';
import { refuseCrossSite } from '../http/same-origin.js';
import { withRateLimitHeaders } from '../http/surface-gate.js';
import { streamSource } from '../http/stream.js';
import type { GatewayMetrics } from '../metrics.js';
import type { DownloadService } from '../services/download.js';
import { wantsFresh, type ExtractService } from '../services/extract.js';
import { resolvePageUrl } from '../services/one-step.js';

/** The query parameters taken, as they map onto the POST body: everything a direct stream can use. */
const TEXT_FIELDS = ['page_url', 'url', 'extraction_id', 'quality', 'format', 'filename'] as const;
const NUMBER_FIELDS = ['item'] as const;
const BOOLEAN_FIELDS = ['audio_only'] as const;
const error = (description: string) => ({ description, schema: ErrorEnvelopeSchema });
const KNOWN = new Set<string>([...TEXT_FIELDS, ...NUMBER_FIELDS, ...BOOLEAN_FIELDS]);

/** The download request a query names, or 400 naming the parameter that is wrong. */
export function requestFromQuery(query: Record<string, unknown>): DownloadRequest {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    if (!KNOWN.has(name))
      throw new ReelayError(
        'invalid_request',
        `${name} is not a parameter of this route; it takes ${[...KNOWN].join(', ')}.`,
      );
    if (typeof value !== 'string') throw new ReelayError('invalid_request', `${name} is given once, as a string.`);
    if ((NUMBER_FIELDS as readonly string[]).includes(name)) {
      if (!/^\d{1,6}$/.test(value)) throw new ReelayError('invalid_request', `${name}: expected a whole number.`);
      body[name] = Number(value);
    } else if ((BOOLEAN_FIELDS as readonly string[]).includes(name)) {
      if (value !== 'true' && value !== 'false')
        throw new ReelayError('invalid_request', `${name}: expected true or false.`);
      body[name] = value === 'true';
    } else body[name] = value;
  }
  return parseBody(DownloadRequestSchema, body);
}

/**
 * This link is for the web app itself (or typed, or bookmarked); another site embedding it in a
 * <video> or <img> would use the gateway as its media proxy on its visitors' rate limits. Clients
 * that say nothing of where they come from (curl) pass.
 */
const ownSiteOnly = refuseCrossSite('This download link works from the reelay web app, not from another site.');

export function downloadStreamRoute(deps: {
  downloads: DownloadService;
  egress: Egress;
  metrics: GatewayMetrics;
  maxMediaBytes: number;
  extracts?: ExtractService;
  limit?: RequestHandler;
}): RouteSpec {
  return {
    method: 'get',
    path: '/api/v1/download/stream',
    tag: 'web',
    summary: 'A direct stream of POST /api/v1/download, for a browser to follow as a link (never a job)',
    internal: true,
    before: [ownSiteOnly, ...(deps.limit ? [deps.limit] : [])],
    responses: withRateLimitHeaders({
      200: {
        description: 'The media, streamed (as POST /api/v1/download answers 200)',
        contentType: 'application/octet-stream',
      },
      206: { description: 'The requested byte range', contentType: 'application/octet-stream' },
      400: error(
        'invalid_request: an unknown parameter, or a download that needs a job (POST it instead); invalid_url, unknown_source',
      ),
      403: error('url_blocked; cross_site_request: a browser request from another site (Sec-Fetch-Site)'),
      404: error('content_not_found'),
      416: { description: 'Range Not Satisfiable' },
      422: error('no_matching_source, no_media_found, resource_limit'),
      429: { ...error('rate_limited'), headers: { 'Retry-After': 'Seconds to wait' } },
      502: error('upstream_error'),
      503: error('service_unavailable, upstream_rate_limited'),
      504: error('upstream_timeout'),
    }),
    handler: async (req, res) => {
      let body = requestFromQuery(req.query as Record<string, unknown>);
      let chosen: ChosenSource | undefined;
      if (body.page_url !== undefined) {
        if (!deps.extracts)
          throw new ReelayError('invalid_request', 'page_url downloads are not set up on this gateway.');
        const gone = new AbortController();
        const onClose = () => gone.abort(new Error('client closed the connection'));
        res.once('close', onClose);
        try {
          // A collection is refused by itemOf(): it is always a job.
          ({ body, chosen } = await resolvePageUrl(deps.extracts, body, {
            signal: gone.signal,
            fresh: wantsFresh(req),
          }));
        } finally {
          res.off('close', onClose);
        }
      }
      const plan = await deps.downloads.plan(body, chosen);
      if (plan.kind !== 'direct')
        throw new ReelayError(
          'invalid_request',
          'This download is made by a job (a merge, conversion, clip or stream): start it with POST /api/v1/download.',
        );
      deps.metrics.downloads.inc({ kind: 'direct' });
      if (chosen) res.setHeader('Reelay-Source-Quality', chosen.quality);
      if (chosen?.description) res.setHeader('Reelay-Source-Description', chosen.description);
      await streamSource(req, res, {
        egress: deps.egress,
        metrics: deps.metrics,
        maxBytes: deps.maxMediaBytes,
        source: plan.source,
        basename: plan.basename,
      });
    },
  };
}
