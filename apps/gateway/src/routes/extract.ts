// Surface B: POST /api/v1/extract.
import { ErrorEnvelopeSchema, ExtractEnvelopeSchema, ExtractRequestSchema } from '@reelay/contracts';
import { parseBody, type RouteSpec } from '../http/route.js';
import { clientGone, type ExtractService } from '../services/extract.js';

export const EXTRACT_ERRORS = {
  400: { description: 'invalid_request or invalid_url', schema: ErrorEnvelopeSchema },
  403: { description: 'url_blocked: the URL or a redirect points at a private address', schema: ErrorEnvelopeSchema },
  404: { description: 'content_not_found: the origin answered 404/410', schema: ErrorEnvelopeSchema },
  413: { description: 'payload_too_large', schema: ErrorEnvelopeSchema },
  415: { description: 'unsupported_media_type', schema: ErrorEnvelopeSchema },
  422: { description: 'no_media_found', schema: ErrorEnvelopeSchema },
  502: { description: 'upstream_error', schema: ErrorEnvelopeSchema },
  503: { description: 'service_unavailable', schema: ErrorEnvelopeSchema },
  504: { description: 'upstream_timeout', schema: ErrorEnvelopeSchema },
};

export function extractRoutes(service: ExtractService): RouteSpec[] {
  return [
    {
      method: 'post',
      path: '/api/v1/extract',
      tag: 'surface B',
      summary: 'Extract the media of a public page, manifest or media file',
      body: ExtractRequestSchema,
      responses: { 200: { description: 'The extract result', schema: ExtractEnvelopeSchema }, ...EXTRACT_ERRORS },
      handler: async (req, res) => {
        const { url } = parseBody(ExtractRequestSchema, req.body);
        const data = await service.extract(url, clientGone(req, res));
        res.json({ success: true, data });
      },
    },
  ];
}
