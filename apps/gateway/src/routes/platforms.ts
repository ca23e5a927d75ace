// Surface B: GET /api/v1/platforms — what reelay can read, generated from the extractor registry so
// the list is never edited by hand.
import { z } from 'zod';
import type { ExtractorRegistry } from '@reelay/extractors';
import type { RouteSpec } from '../http/route.js';

const PlatformSchema = z
  .object({
    platform: z.string().describe('The value extract results carry in `platform`'),
    extractor: z.string().describe('The extractor that claims these URLs'),
    patterns: z.array(z.string()).describe('URL patterns (regular expressions) the extractor claims'),
    kinds: z.array(z.string()).describe('What it extracts: video, audio, image, gallery...'),
  })
  .meta({ id: 'Platform' });

const PlatformsEnvelopeSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      platforms: z.array(PlatformSchema),
      generic: z.array(z.string()).describe('Generic extractors tried, in order, on any other URL'),
    }),
  })
  .meta({ id: 'PlatformsEnvelope' });

export function platformRoutes(registry: ExtractorRegistry): RouteSpec[] {
  const body = {
    success: true as const,
    data: {
      platforms: registry.platforms.map((p) => ({
        platform: p.platform,
        extractor: p.name,
        patterns: p.patterns.map((r) => r.source),
        kinds: [...p.kinds],
      })),
      generic: registry.generic.map((g) => g.name),
    },
  };
  return [
    {
      method: 'get',
      path: '/api/v1/platforms',
      tag: 'Extract and download',
      summary: 'The supported platforms with their URL patterns and what each extracts',
      responses: { 200: { description: 'The platform list', schema: PlatformsEnvelopeSchema } },
      handler: (_req, res) => res.json(body),
    },
  ];
}
