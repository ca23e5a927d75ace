// The OpenAPI 3.1 document, generated from the route specs and their zod schemas at start-up, so it
// describes exactly what the code validates and returns.
import { z } from 'zod';
import { BODY_LIMIT_BYTES } from './http/body.js';
import type { RouteSpec } from './http/route.js';
import { LINKS } from './openapi-links.js';
import { perMinute, type StatedLimits } from './openapi-limits.js';

type JsonSchema = Record<string, unknown>;

const REF_PREFIX = '#/components/schemas/';

// The sections a reader sees, in this order (route specs name one each).
export const TAGS = [
  {
    name: 'Extract and download',
    description: 'Find the media of a page, then download a source, or merge or convert it in a job.',
  },
  { name: 'Jobs', description: 'Follow a download job (poll it or open its event stream) and fetch its file.' },
  {
    name: 'API with a key',
    description:
      "The extract API for programs: with a key from your account, or without one at /api/playground (what the web app's More options page uses), at fewer requests a minute.",
  },
  { name: 'Account', description: 'Sign up, sign in and manage API keys (the web app uses these; a session cookie).' },
  {
    name: 'Subscriptions',
    description: "Watch a feed, playlist or channel and download what appears (an API key or the web app's session).",
  },
  { name: 'Operations', description: 'Health, readiness, metrics and this document.' },
] as const;

const header = (name: string, description: string, example: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
  example,
});

/** What reelay POSTs to a download's webhook_url when its job ends (Standard Webhooks). */
const WEBHOOKS = {
  jobEnded: {
    post: {
      summary: 'A job ended: job.completed, job.failed or job.cancelled',
      description:
        'Sent to the webhook_url of POST /api/v1/download when the job ends. Verify webhook-signature: HMAC-SHA256 over "{webhook-id}.{webhook-timestamp}.{body}", keyed with the base64-decoded part of the secret after whsec_, in base64, after "v1,"; ' +
        'several space-separated signatures mean several secrets (a rotation): any one matching verifies. Refuse a webhook-timestamp far from now (replay); skip a webhook-id already seen (retries). ' +
        'A 2xx within 10 s is a delivery; anything else (a redirect too: it is not followed) is retried after 15 s, 1, 4, 16 and 64 min, then 2 h and 2 h: 8 attempts over about 5 h 25 min.',
      tags: ['Jobs'],
      operationId: 'webhookJobEnded',
      parameters: [
        header('webhook-id', 'msg_<job id>: the same on every retry of this message', 'msg_kq3T9vQ2rS8uX1yZ4aB6cD'),
        header('webhook-timestamp', 'Unix seconds of this attempt', '1764029940'),
        header(
          'webhook-signature',
          'v1,<base64 signature>, one per secret, space-separated',
          'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
        ),
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: `${REF_PREFIX}WebhookEvent` } } },
      },
      responses: {
        '2XX': { description: 'Delivered: no retry' },
        default: { description: 'Any other answer, or none within 10 s: retried on the schedule above' },
      },
      security: [],
    },
  },
};

/**
 * The document's introduction, the first thing /docs shows: what the API is for and the three calls
 * of a download, then the conventions every route shares. Markdown (Swagger UI renders it).
 */
export function introduction(limits?: StatedLimits): string {
  const extract = '{"url": "https://example.com/watch/clip"}';
  const download = '{"page_url": "https://example.com/watch/clip", "format": "mp3"}';
  return [
    'reelay finds the media of a public web page (a video page, a podcast feed, a playlist, an HLS or DASH manifest, a media file) and makes the file you want from it: as it is, converted, merged, cut, with its subtitles.',
    '**A download in three steps**',
    [
      `1. **Extract**: \`POST /api/v1/extract\` with \`${extract}\` answers the page's title and media items, each with its sources (quality, format, size, and a \`url\` to download).`,
      `2. **Download**: \`POST /api/v1/download\` with \`${download}\` (the gateway picks the best source; or give a source's \`url\` from step 1). A file that needs no work streams back at once (200); one that has to be made answers 202 with a \`job_id\`.`,
      '3. **Job**: `GET /api/v1/jobs/{id}` (or its event stream, `GET /api/v1/jobs/{id}/events`) until `status` is `completed`, then `GET /api/v1/jobs/{id}/artifact` is the file.',
    ].join('\n'),
    [
      '```sh',
      `curl -s http://127.0.0.1:8080/api/v1/extract -H 'Content-Type: application/json' -d '${extract}'`,
      `curl -s http://127.0.0.1:8080/api/v1/download -H 'Content-Type: application/json' -d '${download}'`,
      '# → 202 {"success": true, "data": {"job_id": "vb0Vq8c6Rk2w4n1Yt3xZ9A", "status": "queued", …}}',
      'curl -s http://127.0.0.1:8080/api/v1/jobs/vb0Vq8c6Rk2w4n1Yt3xZ9A',
      'curl -OJ http://127.0.0.1:8080/api/v1/jobs/vb0Vq8c6Rk2w4n1Yt3xZ9A/artifact',
      '```',
    ].join('\n'),
    '**Errors** use one envelope, `{"success": false, "error": {"code", "message"}}`: the code for programs, the message for people.',
    ...(limits
      ? [
          [
            "**Limits** on this server (each answer's RateLimit-* headers say how many requests are left):",
            `- /api/v1: ${perMinute(limits.v1PerMinute, 'client address', 'RATE_LIMIT_V1_PER_MIN')}`,
            `- POST /api with a key: ${perMinute(limits.keyPerMinute, 'key', 'RATE_LIMIT_KEY_PER_MIN')}`,
          ].join('\n'),
        ]
      : []),
    'On every path, a method the path does not serve (TRACE, PROPFIND, CONNECT…) is 405 method_not_allowed with an Allow header naming the methods it does; CONNECT to a host:port is 400 invalid_request (this server is not a proxy).',
  ].join('\n\n');
}

function idOf(schema: z.ZodType): string | undefined {
  return (z.globalRegistry.get(schema) as { id?: string } | undefined)?.id;
}

/**
 * `settings`: what this deployment's configuration changes in a schema, merged into that schema's
 * JSON wherever it appears (a subscription's `every` takes SUBSCRIPTION_MIN_EVERY_SECONDS as its
 * minimum), so the document states the bounds this gateway enforces.
 */
export function buildOpenApi(
  routes: readonly RouteSpec[],
  info: { version: string; serverUrl?: string; limits?: StatedLimits; settings?: ReadonlyMap<z.ZodType, JsonSchema> },
): JsonSchema {
  const settings = info.settings ?? new Map<z.ZodType, JsonSchema>();
  const override = (ctx: { zodSchema: unknown; jsonSchema: JsonSchema }) => {
    const set = settings.get(ctx.zodSchema as z.ZodType);
    if (set) Object.assign(ctx.jsonSchema, set);
  };
  // Every schema registered with .meta({ id }) becomes a component; references between them use $ref.
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    uri: (id) => REF_PREFIX + id,
    io: 'output',
    unrepresentable: 'any',
    override,
  }) as {
    schemas: Record<string, JsonSchema>;
  };
  for (const schema of Object.values(schemas)) delete schema.$id;
  const schemaRef = (schema: z.ZodType): JsonSchema => {
    const id = idOf(schema);
    return id
      ? { $ref: REF_PREFIX + id }
      : (z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any', override }) as JsonSchema);
  };

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.internal) continue;
    const operation: Record<string, unknown> = {
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      operationId: `${route.method}${route.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      responses: Object.fromEntries(
        Object.entries(route.responses).map(([status, spec]) => {
          const response: Record<string, unknown> = { description: spec.description };
          const example = spec.example === undefined ? {} : { example: spec.example };
          if (spec.schema) response.content = { 'application/json': { schema: schemaRef(spec.schema), ...example } };
          else if (spec.contentType) {
            const types = typeof spec.contentType === 'string' ? [spec.contentType] : spec.contentType;
            // OpenAPI 3.1 describes raw bytes by their media type alone, with no schema.
            response.content = Object.fromEntries(types.map((type, i) => [type, i === 0 ? { ...example } : {}]));
          }
          if (spec.headers)
            response.headers = Object.fromEntries(
              Object.entries(spec.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }]),
            );
          const links = LINKS[`${route.method} ${route.path} ${status}`];
          if (links) response.links = links;
          return [status, response];
        }),
      ),
    };
    const params = [...route.path.matchAll(/\{([A-Za-z_]+)\}/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      description: route.params?.[name],
      schema: { type: 'string' },
    }));
    const headers = Object.entries(route.headers ?? {}).map(([name, description]) => ({
      name,
      in: 'header',
      required: false,
      description,
      schema: { type: 'string' },
    }));
    const query = Object.entries(route.query ?? {}).map(([name, spec]) =>
      typeof spec === 'string'
        ? { name, in: 'query', required: false, description: spec, schema: { type: 'string' } }
        : {
            name,
            in: 'query',
            required: false,
            description: spec.description,
            schema: z.toJSONSchema(spec.schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema,
          },
    );
    if (params.length || headers.length || query.length) operation.parameters = [...params, ...query, ...headers];
    // Public routes say so explicitly: no scheme applies, rather than "not documented".
    // A list of alternatives: any one scheme is enough; 'none' ({}) makes the scheme optional.
    const schemes = route.auth === undefined ? [] : typeof route.auth === 'string' ? [route.auth] : route.auth;
    operation.security = schemes.map((scheme) => (scheme === 'none' ? {} : { [scheme]: [] }));
    if (route.body) {
      const example = route.bodyExample === undefined ? {} : { example: route.bodyExample };
      operation.requestBody = {
        required: true,
        // JSON Schema has no word for a body's size: the limit every route's body parser holds to.
        description: `A JSON object of at most ${BODY_LIMIT_BYTES / 1024} KiB (UTF-8); a larger body is 413 payload_too_large.`,
        'x-max-bytes': BODY_LIMIT_BYTES,
        content: { 'application/json': { schema: schemaRef(route.body), ...example } },
      };
    }
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'reelay',
      version: info.version,
      description: introduction(info.limits),
    },
    // Relative: the document is served by the gateway it describes, whatever host name reached it.
    servers: [{ url: info.serverUrl ?? '/', description: 'The gateway serving this document' }],
    tags: TAGS.map((tag) => ({ ...tag })),
    paths,
    webhooks: WEBHOOKS,
    components: {
      schemas,
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'A key created under /account/keys (rly_…)',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'reelay_session',
          description: 'The session cookie set by /account/signup and /account/login',
        },
        controlToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            "A job's control_token, from the 202 answer of POST /api/v1/download that started it (or its collection): `Authorization: Bearer <control_token>`",
        },
      },
    },
  };
}
