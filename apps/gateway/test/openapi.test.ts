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
  paths: Record<string, Record<string, { security?: unknown; responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }> }>>;
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
    expect(Object.keys(download['200'].content ?? {})).toEqual(expect.arrayContaining(['video/mp4', 'audio/mpeg', 'image/jpeg', 'application/octet-stream']));
    expect(download['206'].headers).toHaveProperty('Content-Range');
    expect(download['200'].headers).toHaveProperty('Content-Disposition');
  });

  test("documents the artifact's 206 and the types a job writes", () => {
    const artifact = doc.paths['/api/v1/jobs/{id}/artifact'].get.responses;
    expect(Object.keys(artifact)).toEqual(expect.arrayContaining(['200', '206', '404', '409', '410', '416']));
    expect(Object.keys(artifact['200'].content ?? {}).sort()).toEqual(['audio/mp4', 'audio/mpeg', 'audio/ogg', 'audio/wav', 'video/mp4', 'video/webm', 'video/x-matroska']);
  });

  test('describes /api/openapi.json as a JSON object', () => {
    const own = doc.paths['/api/openapi.json'].get.responses['200'].content;
    expect(own).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/OpenApiDocument' } } });
  });

  test('public routes say no security applies; /api needs the key and account routes the session', () => {
    expect(doc.paths['/api/v1/extract'].post.security).toEqual([]);
    expect(doc.paths['/api/playground'].post.security).toEqual([]);
    expect(doc.paths['/account/signup'].post.security).toEqual([]);
    expect(doc.paths['/api'].post.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths['/account/keys'].get.security).toEqual([{ session: [] }]);
    for (const operations of Object.values(doc.paths)) for (const op of Object.values(operations)) expect(op.security).toBeDefined();
  });

  test('the account routes answer in the {success, data} envelope', () => {
    expect(doc.paths['/account/me'].get.responses['200'].content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/AccountEnvelope' } } });
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
    app.get('/thing', responseCheck(route, (p) => problems.push(p)), route.handler);
    await request(app).get('/thing?kind=good').expect(200);
    await request(app).get('/thing?kind=empty').expect(204);
    expect(problems).toEqual([]);
    await request(app).get('/thing?kind=bad').expect(200);
    await request(app).get('/thing?kind=teapot').expect(418);
    expect(problems).toEqual([expect.stringMatching(/^GET \/thing → 200: body does not match its schema at count/), 'GET /thing → 418: status not documented']);
  });
});
