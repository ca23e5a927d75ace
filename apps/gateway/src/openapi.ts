// The OpenAPI 3.1 document, generated from the route specs and their zod schemas at start-up, so it
// describes exactly what the code validates and returns.
import { z } from 'zod';
import type { RouteSpec } from './http/route.js';

type JsonSchema = Record<string, unknown>;

const REF_PREFIX = '#/components/schemas/';

function idOf(schema: z.ZodType): string | undefined {
  return (z.globalRegistry.get(schema) as { id?: string } | undefined)?.id;
}

export function buildOpenApi(routes: readonly RouteSpec[], info: { version: string; serverUrl?: string }): JsonSchema {
  // Every schema registered with .meta({ id }) becomes a component; references between them use $ref.
  const { schemas } = z.toJSONSchema(z.globalRegistry, { uri: (id) => REF_PREFIX + id, io: 'output', unrepresentable: 'any' }) as {
    schemas: Record<string, JsonSchema>;
  };
  for (const schema of Object.values(schemas)) delete schema.$id;
  const schemaRef = (schema: z.ZodType): JsonSchema => {
    const id = idOf(schema);
    return id ? { $ref: REF_PREFIX + id } : (z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonSchema);
  };

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.internal) continue;
    const operation: Record<string, unknown> = {
      summary: route.summary,
      tags: [route.tag],
      operationId: `${route.method}${route.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      responses: Object.fromEntries(
        Object.entries(route.responses).map(([status, spec]) => {
          const response: Record<string, unknown> = { description: spec.description };
          if (spec.schema) response.content = { 'application/json': { schema: schemaRef(spec.schema) } };
          else if (spec.contentType) {
            const types = typeof spec.contentType === 'string' ? [spec.contentType] : spec.contentType;
            // OpenAPI 3.1 describes raw bytes by their media type alone, with no schema.
            response.content = Object.fromEntries(types.map((type) => [type, {}]));
          }
          if (spec.headers) response.headers = Object.fromEntries(Object.entries(spec.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }]));
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
    if (params.length) operation.parameters = params;
    // Public routes say so explicitly: no scheme applies, rather than "not documented".
    operation.security = route.auth ? [{ [route.auth]: [] }] : [];
    if (route.body) operation.requestBody = { required: true, content: { 'application/json': { schema: schemaRef(route.body) } } };
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'reelay',
      version: info.version,
      description: 'Media extraction and download service. Errors use the envelope {"success": false, "error": {"code", "message"}}.',
    },
    // Relative: the document is served by the gateway it describes, whatever host name reached it.
    servers: [{ url: info.serverUrl ?? '/', description: 'The gateway serving this document' }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A key created under /account/keys (rly_…)' },
        session: { type: 'apiKey', in: 'cookie', name: 'reelay_session', description: 'The session cookie set by /account/signup and /account/login' },
      },
    },
  };
}
