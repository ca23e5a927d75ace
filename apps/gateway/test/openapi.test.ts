// The OpenAPI document: valid OpenAPI 3.1 by the official schema, and truthful about what the routes
// answer. (Every response the other test files receive is checked against it too: see helpers.ts.)
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Validator, type SpecData } from '@seriousme/openapi-schema-validator';
import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { responseCheck } from '../src/http/response-check.js';
import type { RouteSpec } from '../src/http/route.js';
import { buildGateway, type TestGateway } from './helpers.js';

let gw: TestGateway;
let doc: {
  openapi: string;
  servers: { url: string }[];
  info: { description: string };
  paths: Record<
    string,
    Record<
      string,
      {
        security?: unknown;
        responses: Record<
          string,
          { description?: string; content?: Record<string, unknown>; headers?: Record<string, unknown> }
        >;
      }
    >
  >;
};

beforeAll(async () => {
  gw = await buildGateway();
  const res = await request(gw.app).get('/api/openapi.json').expect(200);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  doc = res.body;
});
afterAll(() => gw.close());

describe('the OpenAPI document', () => {
  test('is a valid OpenAPI 3.1 document by the official schema', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as SpecData);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  test('the validator does refuse a broken document (so the check above can fail)', async () => {
    const broken = structuredClone(doc) as unknown as { paths: Record<string, unknown> };
    broken.paths['/api/v1/extract'] = { post: { responses: { 200: { content: 'not an object' } } } };
    expect((await new Validator().validate(broken as unknown as SpecData)).valid).toBe(false);
  });

  test('names the server as the gateway that serves it', () => {
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
  });

  test('documents the download answers a client meets: 206, 413, 415 and 416, with the real media types', () => {
    const download = doc.paths['/api/v1/download'].post.responses;
    expect(Object.keys(download)).toEqual(expect.arrayContaining(['200', '202', '206', '413', '415', '416']));
    expect(Object.keys(download['200'].content ?? {})).toEqual(
      expect.arrayContaining(['video/mp4', 'audio/mpeg', 'image/jpeg', 'application/octet-stream']),
    );
    expect(download['206'].headers).toHaveProperty('Content-Range');
    expect(download['200'].headers).toHaveProperty('Content-Disposition');
  });

  test("documents surface B's 429s with Retry-After and the RateLimit headers, and 405 for other methods", () => {
    for (const path of ['/api/v1/extract', '/api/v1/download']) {
      const responses = doc.paths[path].post.responses;
      expect(Object.keys(responses['429'].headers ?? {})).toEqual(
        expect.arrayContaining(['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
      );
      expect(Object.keys(responses['200'].headers ?? {})).toEqual(
        expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
      );
    }
    expect(doc.paths['/api/v1/download'].post.responses['429'].description).toMatch(/too_many_jobs/);
    expect(doc.paths['/api/v1/jobs/{id}'].get.responses['429']).toBeUndefined();
    expect(doc.info.description).toMatch(/405 method_not_allowed with an Allow header/);
  });

  test("documents the artifact's 206 and the types a job writes", () => {
    const artifact = doc.paths['/api/v1/jobs/{id}/artifact'].get.responses;
    expect(Object.keys(artifact)).toEqual(expect.arrayContaining(['200', '206', '404', '409', '410', '416']));
    expect(Object.keys(artifact['200'].content ?? {}).sort()).toEqual([
      'application/x-subrip',
      'application/zip',
      'audio/mp4',
      'audio/mpeg',
      'audio/ogg',
      'audio/wav',
      'text/vtt',
      'video/mp4',
      'video/webm',
      'video/x-matroska',
    ]);
  });

  test('documents subtitle tracks on media items and the languages a download embeds', () => {
    const schemas = (
      doc as unknown as {
        components: {
          schemas: Record<string, { properties?: Record<string, { description?: string; items?: unknown }> }>;
        };
      }
    ).components.schemas;
    expect(schemas.MediaItem.properties?.subtitles?.items).toEqual({ $ref: '#/components/schemas/Subtitle' });
    expect(Object.keys(schemas.Subtitle.properties ?? {}).sort()).toEqual([
      'auto_generated',
      'format',
      'label',
      'language',
      'url',
    ]);
    expect(schemas.DownloadRequest.properties?.subtitles?.description).toMatch(
      /mov_text in mp4, WebVTT in mkv and webm/,
    );
  });

  test('describes /api/openapi.json as a JSON object', () => {
    const own = doc.paths['/api/openapi.json'].get.responses['200'].content;
    expect(own).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/OpenApiDocument' }, example: expect.any(Object) },
    });
  });

  test('public routes say no security applies; /api needs the key and account routes the session', () => {
    expect(doc.paths['/api/v1/extract'].post.security).toEqual([]);
    expect(doc.paths['/api/playground'].post.security).toEqual([]);
    expect(doc.paths['/account/signup'].post.security).toEqual([]);
    expect(doc.paths['/api'].post.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths['/account/keys'].get.security).toEqual([{ session: [] }]);
    for (const operations of Object.values(doc.paths))
      for (const op of Object.values(operations)) expect(op.security).toBeDefined();
  });

  test("cancel and stop need the job's control token (a bearer scheme) or the key or session that started it", () => {
    const whole = doc as unknown as {
      components: { securitySchemes: Record<string, unknown>; schemas: Record<string, Record<string, unknown>> };
    };
    expect(whole.components.securitySchemes.controlToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const op of [doc.paths['/api/v1/jobs/{id}'].delete, doc.paths['/api/v1/jobs/{id}/stop'].post]) {
      expect(op.security).toEqual([{ controlToken: [] }, { apiKey: [] }, { session: [] }]);
      expect(op.responses['403'].description).toMatch(/^job_control_forbidden: /);
    }
    // The 202 of a download (and of a collection, the same answer) carries the token; optional auth.
    const accepted = whole.components.schemas.JobAccepted as {
      properties: { data: { properties: Record<string, unknown>; required: string[] } };
    };
    expect(accepted.properties.data.properties.control_token).toMatchObject({ type: 'string' });
    expect(accepted.properties.data.required).toContain('control_token');
    expect(doc.paths['/api/v1/download'].post.security).toEqual([{}, { apiKey: [] }, { session: [] }]);
    // And never in what anyone with the id reads.
    expect(JSON.stringify(whole.components.schemas.Job)).not.toContain('control_token');
  });

  test('the account routes answer in the {success, data} envelope', () => {
    expect(doc.paths['/account/me'].get.responses['200'].content).toEqual({
      'application/json': {
        schema: { $ref: '#/components/schemas/AccountEnvelope' },
        example: { success: true, data: { email: 'ada@example.com' } },
      },
    });
  });
});

describe('links between operations (extract → download → job → artifact and events)', () => {
  type Link = { operationId: string; parameters?: Record<string, string>; requestBody?: Record<string, string> };
  type Op = {
    operationId: string;
    parameters?: { name: string; in: string }[];
    responses: Record<string, { links?: Record<string, Link>; content?: Record<string, { example?: unknown }> }>;
  };
  const ops = () => Object.values(doc.paths).flatMap((byMethod) => Object.values(byMethod) as unknown as Op[]);
  /** The value a `$response.body#/…` expression names in an example answer. */
  const pointAt = (example: unknown, expression: string): unknown =>
    expression
      .replace(/^\{?\$response\.body#\//, '')
      .replace(/\}$/, '')
      .split('/')
      .reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], example);

  test('follow the flow: each answer names the next operation and where its inputs come from', () => {
    const linksOf = (path: string, method: string, status: string) =>
      (doc.paths[path][method] as unknown as Op).responses[status].links ?? {};
    for (const path of ['/api/v1/extract', '/api', '/api/playground'])
      expect(linksOf(path, 'post', '200').download).toMatchObject({
        operationId: 'postApiV1Download',
        requestBody: { url: expect.stringContaining('/sources/0/url') },
      });
    expect(linksOf('/api/v1/download', 'post', '202').job).toMatchObject({
      operationId: 'getApiV1JobsId',
      parameters: { id: '$response.body#/data/job_id' },
    });
    expect(Object.keys(linksOf('/api/v1/jobs/{id}', 'get', '200')).sort()).toEqual(['artifact', 'events']);
  });

  test('every link names an operation of the document, its parameters, and values its example answer holds', () => {
    const byId = new Map(ops().map((op) => [op.operationId, op]));
    let checked = 0;
    for (const op of ops()) {
      for (const [status, response] of Object.entries(op.responses)) {
        for (const [name, link] of Object.entries(response.links ?? {})) {
          const where = `${op.operationId} ${status} ${name}`;
          const target = byId.get(link.operationId);
          expect([where, target !== undefined]).toEqual([where, true]);
          for (const param of Object.keys(link.parameters ?? {}))
            expect([where, param, target?.parameters?.some((p) => p.name === param)]).toEqual([where, param, true]);
          const example = response.content?.['application/json']?.example;
          for (const expression of [
            ...Object.values(link.parameters ?? {}),
            ...Object.values(link.requestBody ?? {}),
          ]) {
            expect([where, expression, typeof pointAt(example, expression)]).toEqual([where, expression, 'string']);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });
});

describe('the document as people read it (/docs)', () => {
  test('groups the routes under the names a user would look for, in that order', () => {
    const tags = (doc as unknown as { tags: { name: string }[] }).tags.map((t) => t.name);
    expect(tags).toEqual(['Extract and download', 'Jobs', 'API with a key', 'Account', 'Subscriptions', 'Operations']);
    const used = Object.values(doc.paths).flatMap((ops) =>
      Object.values(ops).flatMap((op) => (op as unknown as { tags: string[] }).tags),
    );
    expect(new Set(used)).toEqual(new Set(tags));
    expect(doc.paths['/api/v1/extract'].post).toMatchObject({ tags: ['Extract and download'] });
    expect(doc.paths['/api/v1/jobs/{id}/events'].get).toMatchObject({ tags: ['Jobs'] });
  });

  test('every route has an example request (when it takes a body) and an example answer, and each JSON example passes its schema', () => {
    const documented = gw.routes.filter((r) => !r.internal);
    expect(documented.length).toBeGreaterThan(15);
    for (const route of documented) {
      const where = `${route.method} ${route.path}`;
      if (route.body) {
        expect([where, route.bodyExample !== undefined]).toEqual([where, true]);
        expect([where, route.body.safeParse(route.bodyExample).success]).toEqual([where, true]);
      }
      const answered = Object.entries(route.responses).filter(([, spec]) => spec.example !== undefined);
      const noBody = Object.entries(route.responses).some(
        ([status, spec]) => status.startsWith('2') && !spec.schema && !spec.contentType,
      );
      expect([where, answered.length > 0 || noBody]).toEqual([where, true]);
      for (const [status, spec] of answered) {
        if (spec.schema)
          expect([where, status, spec.schema.safeParse(spec.example).error?.issues ?? 'ok']).toEqual([
            where,
            status,
            'ok',
          ]);
      }
    }
  });

  test('documents the event stream: text/event-stream, the event format and the Last-Event-ID header', () => {
    const op = doc.paths['/api/v1/jobs/{id}/events'].get as unknown as {
      description: string;
      parameters: { name: string; in: string }[];
      responses: Record<string, { content?: Record<string, { example?: string }>; headers?: Record<string, unknown> }>;
    };
    expect(op.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'Last-Event-ID', in: 'header' }),
        expect.objectContaining({ name: 'id', in: 'path' }),
      ]),
    );
    expect(Object.keys(op.responses['200'].content!)).toEqual(['text/event-stream']);
    expect(op.responses['200'].content!['text/event-stream'].example).toMatch(
      /^retry: \d+\n\nid: \d+\nevent: job\ndata: \{/,
    );
    expect(op.responses['200'].headers).toHaveProperty('X-Accel-Buffering');
    expect(op.description).toMatch(/Last-Event-ID/);
    expect(op.description).toMatch(/completed, failed, expired or cancelled/);
    expect(op.responses['404'].content).toHaveProperty('application/json');
    expect(op.responses).toHaveProperty('204');
  });

  test("documents the webhook: the request fields, the Job's webhook, and a 3.1 webhooks entry with the payload and the Standard Webhooks headers", () => {
    const full = doc as unknown as {
      webhooks: Record<
        string,
        {
          post: {
            parameters: { name: string; in: string }[];
            requestBody: { content: Record<string, { schema: { $ref: string } }> };
          };
        }
      >;
      components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> };
    };
    const hook = full.webhooks.jobEnded.post;
    expect(hook.parameters.map((p) => [p.name, p.in])).toEqual([
      ['webhook-id', 'header'],
      ['webhook-timestamp', 'header'],
      ['webhook-signature', 'header'],
    ]);
    expect(hook.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/WebhookEvent');
    const schemas = full.components.schemas;
    expect(Object.keys(schemas.WebhookEvent.properties)).toEqual(['type', 'timestamp', 'data']);
    expect(schemas.WebhookEvent.properties.type).toMatchObject({
      enum: ['job.completed', 'job.failed', 'job.cancelled', 'subscription.item.completed', 'subscription.item.failed'],
    });
    expect(schemas.DownloadRequest.properties).toHaveProperty('webhook_url');
    expect(schemas.DownloadRequest.properties).toHaveProperty('webhook_secret');
    expect(schemas.Job.properties).toHaveProperty('webhook');
    expect(Object.keys(schemas.JobWebhook.properties)).toEqual([
      'url',
      'status',
      'attempts',
      'last_status',
      'last_error',
    ]);
    expect(JSON.stringify(schemas.JobWebhook)).not.toMatch(/secret/);
  });
});

describe('the response check the suite runs on every gateway', () => {
  test('reports a body that does not match its schema and a status the route does not document', async () => {
    const problems: string[] = [];
    const route: RouteSpec = {
      method: 'get',
      path: '/thing',
      tag: 't',
      summary: 's',
      responses: { 200: { description: 'ok', schema: z.object({ count: z.number() }) }, 204: { description: 'empty' } },
      handler: (req, res) => {
        if (req.query.kind === 'teapot') return res.status(418).end();
        if (req.query.kind === 'empty') return res.status(204).end();
        res.json({ count: req.query.kind === 'good' ? 1 : 'one' });
      },
    };
    const app = express();
    app.get(
      '/thing',
      responseCheck(route, (p) => problems.push(p)),
      route.handler,
    );
    await request(app).get('/thing?kind=good').expect(200);
    await request(app).get('/thing?kind=empty').expect(204);
    expect(problems).toEqual([]);
    await request(app).get('/thing?kind=bad').expect(200);
    await request(app).get('/thing?kind=teapot').expect(418);
    expect(problems).toEqual([
      expect.stringMatching(/^GET \/thing → 200: body does not match its schema at count/),
      'GET /thing → 418: status not documented',
    ]);
  });
});

describe('the reference a newcomer reads at /docs', () => {
  let limited: TestGateway;
  let intro: string;
  let operations: Array<{ id: string; summary: string; responses: Record<string, { description?: string }> }>;

  beforeAll(async () => {
    limited = await buildGateway({
      env: {
        RATE_LIMIT_V1_PER_MIN: '45',
        RATE_LIMIT_KEY_PER_MIN: '90',
        RATE_LIMIT_PUBLIC_PER_MIN: '12',
        MAX_ACTIVE_JOBS_PER_CLIENT: '3',
        MAX_SUBSCRIPTIONS_PER_ACCOUNT: '7',
      },
    });
    const body = (await request(limited.app).get('/api/openapi.json').expect(200)).body as {
      info: { description: string };
      paths: Record<
        string,
        Record<string, { operationId: string; summary: string; responses: Record<string, { description?: string }> }>
      >;
    };
    intro = body.info.description;
    operations = Object.values(body.paths).flatMap((methods) =>
      Object.values(methods).map((op) => ({ id: op.operationId, summary: op.summary, responses: op.responses })),
    );
  });
  afterAll(() => limited.close());

  const summary = (id: string) => operations.find((op) => op.id === id)!.summary;

  test('opens with what the API is for and a download in three steps; the 405 rule comes last', () => {
    const paragraphs = intro.split('\n\n');
    expect(paragraphs[0]).toMatch(/^reelay finds the media of a public web page/);
    expect(paragraphs[0]).not.toMatch(/405|TRACE|PROPFIND|CONNECT/);
    const steps = intro.indexOf('three steps');
    const [extract, download, job] = ['1. **Extract**', '2. **Download**', '3. **Job**'].map((s) => intro.indexOf(s));
    expect(steps).toBeGreaterThan(0);
    expect([steps < extract, extract < download, download < job]).toEqual([true, true, true]);
    expect(intro).toContain('GET /api/v1/jobs/{id}/artifact');
    expect(paragraphs.at(-1)).toMatch(
      /^On every path, a method the path does not serve \(TRACE, PROPFIND, CONNECT…\) is 405/,
    );
  });

  test("states this server's limits as numbers, each with its setting's name only beside the number", () => {
    expect(summary('postApiV1Extract')).toMatch(/: 45 requests a minute per client address \(RATE_LIMIT_V1_PER_MIN\)$/);
    expect(summary('postApiV1Download')).toMatch(
      /45 requests a minute per client address \(RATE_LIMIT_V1_PER_MIN\); 3 live jobs per client address \(MAX_ACTIVE_JOBS_PER_CLIENT\)$/,
    );
    expect(summary('postApi')).toContain('90 requests a minute per key (RATE_LIMIT_KEY_PER_MIN)');
    expect(summary('postApiPlayground')).toContain(
      '12 requests a minute per client address (RATE_LIMIT_PUBLIC_PER_MIN)',
    );
    expect(operations.find((op) => op.id === 'postApiV1Subscriptions')!.responses['409'].description).toContain(
      'holds 7 subscriptions already',
    );
    expect(intro).toContain('- /api/v1: 45 requests a minute per client address (RATE_LIMIT_V1_PER_MIN)');
    // No summary names a setting where a number belongs: outside the parentheses after a number, none at all.
    const bare = operations
      .map((op) => op.summary.replace(/\([A-Z][A-Z0-9_]*(=0)?\)/g, ''))
      .filter((text) => /\b[A-Z]{2,}(?:_[A-Z0-9]+)+\b/.test(text));
    expect(bare).toEqual([]);
  });

  test('a limit turned off (0) is said to be off, not "0 requests"', async () => {
    const open = await buildGateway({ env: { RATE_LIMIT_V1_PER_MIN: '0', MAX_ACTIVE_JOBS_PER_CLIENT: '0' } });
    try {
      const body = (await request(open.app).get('/api/openapi.json').expect(200)).body as {
        paths: Record<string, { post: { summary: string } }>;
      };
      expect(body.paths['/api/v1/extract'].post.summary).toMatch(
        /no limit of requests per client address on this server \(RATE_LIMIT_V1_PER_MIN=0\)$/,
      );
      expect(body.paths['/api/v1/download'].post.summary).not.toMatch(/\b0 (requests|live jobs)/);
    } finally {
      await open.close();
    }
  });
});
