// Routes are data: method, path, schemas and handler in one object. The app registers them with
// Express and the OpenAPI document is generated from the same list, so the two cannot drift.
import type { Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { ErrorCodeSchema, ReelayError } from '@reelay/contracts';
import { errorCodeAt, unknownFields } from './body-fields.js';
import { plainParse } from './plain-issues.js';

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Media type(s) of a non-JSON body (e.g. a file stream: the types it may really carry). */
  contentType?: string | readonly string[];
  headers?: Record<string, string>;
  /** An example body for the OpenAPI document (JSON, or text for a non-JSON type). */
  example?: unknown;
}

export type AuthScheme = 'apiKey' | 'session' | 'controlToken';

export interface RouteSpec {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI form: `/api/v1/jobs/{id}`. */
  path: string;
  summary: string;
  /** Longer prose for the OpenAPI document. */
  description?: string;
  tag: string;
  body?: z.ZodType;
  params?: Record<string, string>;
  /**
   * Query parameters the route reads, by name: their description, or the description and the schema
   * the route checks the value with (the document states it; a value it refuses is 400).
   */
  query?: Record<string, string | { description: string; schema: z.ZodType }>;
  /** Request headers the route reads, by name: their description. */
  headers?: Record<string, string>;
  /** An example request body for the OpenAPI document. */
  bodyExample?: unknown;
  responses: Record<number, ResponseSpec>;
  /**
   * Middleware run before the body is read (auth, rate limits, same-origin checks): it sees headers
   * only, so a refusal costs no body parsing and is answered the same whatever the body.
   */
  before?: RequestHandler[];
  /**
   * How the route authenticates, for the OpenAPI document: an API key header, the session cookie or a
   * job's control token; a list names alternatives, any one of which is enough ('none': optional).
   */
  auth?: AuthScheme | readonly (AuthScheme | 'none')[];
  handler: (req: Request, res: Response) => unknown;
  /** Left out of the OpenAPI document (operational endpoints). */
  internal?: boolean;
}

/** `/api/v1/jobs/{id}` → `/api/v1/jobs/:id` */
export function expressPath(path: string): string {
  return path.replace(/\{([A-Za-z_]+)\}/g, ':$1');
}

/** Validates a request body against a schema, throwing invalid_request with the first problem. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ReelayError('invalid_request', 'The request body must be a JSON object.');
  }
  const { result: parsed, written } = plainParse(schema, body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    // Plain messages name their field; a schema's own message is prefixed with it.
    const where = issue.path.length && !written.has(issue.message) ? `${issue.path.join('.')}: ` : '';
    // A schema may name a more precise code for its own checks (a clip's invalid_clip), and a field for
    // its constraints (`x-error-code`: a url's invalid_url); a value of the wrong type is invalid_request.
    const named =
      issue.code === 'custom'
        ? ErrorCodeSchema.safeParse(issue.params?.error_code).data
        : issue.code === 'invalid_type'
          ? undefined
          : errorCodeAt(schema, issue.path);
    throw new ReelayError(named ?? 'invalid_request', `${where}${issue.message}`);
  }
  return parsed.data;
}

/**
 * Refuses a JSON object body naming fields its route's schema does not take, as the OpenAPI document
 * says (additionalProperties: false). The app runs it for every route with a body, before its handler.
 */
export function refuseUnknownFields(schema: z.ZodType): RequestHandler {
  return (req, _res, next) => {
    const body: unknown = req.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return next();
    const unknown = unknownFields(schema, body);
    if (unknown.length === 0) return next();
    const names = unknown
      .slice(0, 10)
      .map((field) => JSON.stringify(field.length > 64 ? `${field.slice(0, 64)}…` : field))
      .join(', ');
    next(
      new ReelayError(
        'invalid_request',
        `Unknown field${unknown.length > 1 ? 's' : ''} ${names}${unknown.length > 10 ? ` and ${unknown.length - 10} more` : ''}: this request takes no such field (see /api/openapi.json).`,
      ),
    );
  };
}
