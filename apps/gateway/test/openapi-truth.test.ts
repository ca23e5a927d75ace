// The OpenAPI document holds the server to its word, route by route, with no list of routes here: for
// every operation that takes a body, a body breaking each stated constraint is refused with 400, the
// field's stated code and a message naming the field; and bodies the document allows are never
// refused for their form (invalid_request or a field's x-error-code), only with answers the operation
// documents. Routes added later are walked the same way. Then requests generated from the document
// (fast-check, judged by Ajv: ./openapi-conformance.ts), a few per operation from a fixed seed; the
// scenario openapi-conformance.scenario.test.ts sends hundreds per operation from a fresh seed.
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildGateway, type TestGateway } from './helpers.js';
import { signUp, uniqueIp, type SignedInAgent } from './account-helpers.js';
import { blockUrls, SchemaCases, type Schema } from './openapi-cases.js';
import { Conformance, type Document, type StatedRule } from './openapi-conformance.js';
import {
  CONFORMANCE_ENV,
  confirmedAccount,
  runConformance,
  send as sendCase,
  summarise,
} from './openapi-conformance-run.js';

interface Parameter {
  name: string;
  in: string;
  schema: Schema;
}

interface Operation {
  key: string;
  parameters?: Parameter[];
  method: 'get' | 'post' | 'delete';
  path: string;
  security: Record<string, unknown>[];
  requestBody?: { content: Record<string, { schema: Schema; example?: unknown }> };
  responses: Record<string, { description: string }>;
}

let gw: TestGateway;
/** One listening server for the file's few hundred requests (supertest would start one per request). */
let server: Server;
let operations: Operation[];
let cases: SchemaCases;
let session: SignedInAgent;
let apiKey: string;
/** Every x-error-code the document names, with invalid_request: the codes of a refusal for a body's form. */
let formCodes: Set<string>;

beforeAll(async () => {
  // A deployment webhook secret, so a webhook_url alone is a complete request; limits out of the way.
  gw = await buildGateway({
    env: {
      TRUST_PROXY: 'true',
      WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 9).toString('base64')}`,
      RATE_LIMIT_KEY_PER_MIN: '100000',
    },
  });
  server = gw.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const doc = (await request(server).get('/api/openapi.json').expect(200)).body as {
    paths: Record<string, Record<string, Omit<Operation, 'key' | 'method' | 'path'>>>;
    components: { schemas: Record<string, Schema> };
  };
  cases = new SchemaCases(doc.components.schemas);
  operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      ...op,
      key: `${method} ${path}`,
      method: method as Operation['method'],
      path,
    })),
  );
  formCodes = new Set([
    'invalid_request',
    ...[...JSON.stringify(doc).matchAll(/"x-error-code":"([a-z_]+)"/g)].map((m) => m[1]),
  ]);
  session = await signUp(server as unknown as Parameters<typeof signUp>[0]);
  apiKey = (await session.agent.post('/account/keys').send({ name: 'openapi truth' }).expect(201)).body.data.secret;
}, 20_000);
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await gw.close();
});

/** Sends a request as the operation's security asks: the session cookie, the API key, or nothing; a client address of its own each time. */
function send(op: Operation, body?: unknown): Promise<request.Response> {
  const usesSession = op.security.some((s) => 'session' in s);
  const path = op.path.replace(/\{[^}]+\}/g, 'no-such-id');
  let req = (usesSession ? session.agent : request(server))[op.method](path).set('X-Forwarded-For', uniqueIp());
  if (op.security.some((s) => 'apiKey' in s)) req = req.set('X-API-Key', apiKey);
  // As JSON whatever its type, so a body that is a string or a number is a JSON body too.
  return body === undefined ? req : req.set('Content-Type', 'application/json').send(JSON.stringify(body));
}

const queryParams = (op: Operation) => (op.parameters ?? []).filter((p) => p.in === 'query');
const withQuery = () => operations.filter((op) => queryParams(op).length > 0);

/** Sends the operation with one query parameter set (as its security asks, no body). */
function sendQuery(op: Operation, name: string, value: unknown, signedIn: SignedInAgent): Promise<request.Response> {
  const path = op.path.replace(/\{[^}]+\}/g, 'no-such-id');
  const url = `${path}?${new URLSearchParams({ [name]: String(value) })}`;
  const agent = op.security.some((s) => 'session' in s) ? signedIn.agent : request(server);
  let req = agent[op.method](url).set('X-Forwarded-For', uniqueIp());
  if (op.security.some((s) => 'apiKey' in s)) req = req.set('X-API-Key', apiKey);
  return req;
}

const bodySchema = (op: Operation) => op.requestBody?.content['application/json']?.schema;
const withBody = () => operations.filter((op) => bodySchema(op));

/** The allowed body every case starts from: the operation's example, its URLs aimed at 127.0.0.2. */
function baseBody(op: Operation): Record<string, unknown> {
  const media = op.requestBody!.content['application/json'];
  const example = media.example ?? cases.valid(media.schema);
  return blockUrls(example) as Record<string, unknown>;
}

/** A refusal of a body that breaks one constraint: 400, the envelope, the stated code, the field named. */
function expectRefused(res: request.Response, code: string, field: string, where: string): void {
  const seen = {
    where,
    status: res.status,
    code: res.body?.error?.code,
    names: String(res.body?.error?.message).includes(field),
    envelope: res.body?.success,
  };
  expect(seen).toEqual({ where, status: 400, code, names: true, envelope: false });
}

/** An answer to an allowed body: a success, or a documented answer that is not about the body's form. */
function expectNotRefusedForForm(op: Operation, res: request.Response, where: string): void {
  if (res.status < 400) return;
  const code = String(res.body?.error?.code);
  const documented = op.responses[String(res.status)]?.description ?? '';
  expect({
    where,
    status: res.status,
    code,
    formRefusal: formCodes.has(code),
    documented: documented.includes(code),
  }).toEqual({ where, status: res.status, code, formRefusal: false, documented: true });
}

describe('every operation with a request body', () => {
  test('the walk finds the routes with bodies and cases of every kind (so it cannot pass empty)', () => {
    // Query parameters are walked below; this notices the routes that state them.
    expect(withQuery().map((op) => op.key)).toEqual(
      expect.arrayContaining(['get /account/keys/{id}/usage', 'get /api/v1/jobs/{id}/children']),
    );
    const keys = withBody().map((op) => op.key);
    expect(keys).toEqual(
      expect.arrayContaining([
        'post /api/v1/extract',
        'post /api',
        'post /api/playground',
        'post /api/v1/download',
        'post /account/signup',
        'post /account/login',
        'post /account/keys',
      ]),
    );
    const all = withBody().flatMap((op) => cases.violations(bodySchema(op)!, baseBody(op), ''));
    for (const kind of [
      'does not list',
      'required, left out',
      'instead of',
      'maxLength',
      'minLength',
      'pattern',
      'below minimum',
      'exclusiveMinimum',
      'above maximum',
      'enum',
      'maxItems',
      'uniqueItems',
      'dependentRequired',
      'dependentSchemas',
    ]) {
      expect([kind, all.some((c) => c.what.includes(kind))]).toEqual([kind, true]);
    }
  });

  test('refuses a body that breaks any one stated constraint: 400, the envelope, the stated code, the field named', async () => {
    let sent = 0;
    for (const op of withBody()) {
      for (const broken of cases.violations(bodySchema(op)!, baseBody(op), '')) {
        expectRefused(await send(op, broken.value), broken.code, broken.field, `${op.key} ${broken.what}`);
        sent++;
      }
    }
    expect(sent).toBeGreaterThan(100);
  }, 20_000);

  test('never refuses a body the document allows for its form: each field through its allowed values, optional fields left out', async () => {
    let sent = 0;
    for (const op of withBody()) {
      const schema = cases.resolve(bodySchema(op)!);
      const base = baseBody(op);
      const bodies: [string, unknown][] = [['its example', base]];
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        // A server-issued value (a signed cursor) is allowed only as issued: no value made here is one.
        if (!cases.resolve(property)['x-server-issued'])
          for (const value of cases.validValues(property))
            bodies.push([
              `${key}=${JSON.stringify(value).slice(0, 60)}`,
              withDependencies(schema, inItsForm(schema, { ...base, [key]: value }, key), key),
            ]);
        const neededByForm = formsOf(schema).some((f) => fits(f, base) && f.required.includes(key));
        if (key in base && !(schema.required ?? []).includes(key) && !neededByForm) {
          const { [key]: _left, ...rest } = base;
          bodies.push([`without ${key}`, rest]);
        }
      }
      for (const [what, body] of bodies) {
        // Sign-ups of one address meet 409 email_taken after the first: the form was accepted all the same.
        expectNotRefusedForForm(op, await send(op, body), `${op.key} ${what}`);
        sent++;
      }
    }
    expect(sent).toBeGreaterThan(50);
  }, 20_000);

  test('query parameters: a value breaking a stated constraint is refused naming the parameter; an allowed one never for its form', async () => {
    let sent = 0;
    // A session of its own: the body walk above signs out, changes passwords and deletes accounts.
    const fresh = await signUp(server as unknown as Parameters<typeof signUp>[0]);
    for (const op of withQuery()) {
      for (const param of queryParams(op)) {
        const schema = cases.resolve(param.schema);
        const allowed = cases.validValues(schema);
        for (const value of schema['x-server-issued'] ? [] : allowed) {
          expectNotRefusedForForm(
            op,
            await sendQuery(op, param.name, value, fresh),
            `${op.key} ?${param.name}=${String(value).slice(0, 40)}`,
          );
          sent++;
        }
        // A query value is always a string: only a string's own constraints can be broken here.
        for (const broken of cases
          .violations(schema, allowed[0], param.name)
          .filter((v) => typeof v.value === 'string')) {
          expectRefused(
            await sendQuery(op, param.name, broken.value, fresh),
            broken.code,
            broken.field,
            `${op.key} ${broken.what}`,
          );
          sent++;
        }
      }
    }
    expect(sent).toBeGreaterThan(3);
  }, 20_000);
});

/** A body with `key` set, completed with what the schema's dependentRequired and dependentSchemas ask for it. */
function withDependencies(schema: Schema, body: Record<string, unknown>, key: string): Record<string, unknown> {
  const out = { ...body };
  for (const needed of schema.dependentRequired?.[key] ?? [])
    out[needed] ??= cases.valid(schema.properties?.[needed] ?? {});
  for (const [other, rule] of Object.entries(schema.dependentSchemas?.[key]?.properties ?? {})) {
    if (rule.enum && !rule.enum.includes(out[other])) out[other] = rule.enum[0];
  }
  return out;
}

/** A oneOf that states an object's forms: each form's required fields, the fields it must not have, and the values it narrows a field to. */
interface Form {
  required: string[];
  forbidden: string[];
  narrowed: Record<string, unknown[]>;
}
function formsOf(schema: Schema): Form[] {
  return (schema.oneOf ?? []).map((f) => ({
    narrowed: Object.fromEntries(
      Object.entries((f.properties ?? {}) as Record<string, Schema>).flatMap(([k, p]) => (p.enum ? [[k, p.enum]] : [])),
    ),
    required: (f.required as string[] | undefined) ?? [],
    forbidden: (((f.not as Schema | undefined)?.anyOf ?? []) as Schema[]).flatMap(
      (n) => (n.required as string[] | undefined) ?? [],
    ),
  }));
}
const fits = (form: Form, body: Record<string, unknown>) =>
  form.required.every((k) => k in body) && form.forbidden.every((k) => !(k in body));

/** `body` with `key` set, moved into the form that takes `key` (as a client following the oneOf would). */
function inItsForm(schema: Schema, body: Record<string, unknown>, key: string): Record<string, unknown> {
  const forms = formsOf(schema);
  if (forms.length === 0) return body;
  const allows = (f: Form) => !f.forbidden.includes(key) && (f.narrowed[key]?.includes(body[key]) ?? true);
  const form =
    forms.find((f) => f.required.includes(key)) ?? forms.find((f) => allows(f) && fits(f, body)) ?? forms.find(allows);
  if (!form) return body;
  const out = { ...body };
  for (const other of forms) for (const k of other.required) if (!form.required.includes(k) && k !== key) delete out[k];
  for (const k of form.forbidden) delete out[k];
  for (const [k, values] of Object.entries(form.narrowed))
    if (k !== key && k in out && !values.includes(out[k])) delete out[k];
  for (const k of form.required) out[k] ??= blockUrls(cases.valid(schema.properties?.[k] ?? {}));
  return out;
}

describe('every operation with a query parameter', () => {
  test('a malformed value of each is refused with the envelope and its documented code', async () => {
    const withQuery = operations.filter((op) => JSON.stringify(op).includes('"in":"query"'));
    // Signed in, for the routes that need a session (a fresh one: the body walk signs out).
    const fresh = await signUp(server as unknown as Parameters<typeof signUp>[0]);
    const client = (op: Operation) => (op.security.some((s) => 'session' in s) ? fresh.agent : request(server));
    expect(withQuery.length).toBeGreaterThan(0);
    for (const op of withQuery) {
      const params = (op as unknown as { parameters: { name: string; in: string }[] }).parameters.filter(
        (p) => p.in === 'query',
      );
      const path = op.path.replace(/\{[A-Za-z_]+\}/g, 'AAAAAAAAAAAAAAAAAAAAAA');
      for (const p of params) {
        for (const bad of ['%E0%A4%A', 'x'.repeat(5000), '../../', '']) {
          const res = await client(op)[op.method](`${path}?${p.name}=${bad}`);
          const where = `${op.key} ?${p.name}=${bad.slice(0, 20)}`;
          expect({
            where,
            envelope: res.body?.success,
            documented: (op.responses[String(res.status)]?.description ?? '').includes(String(res.body?.error?.code)),
          }).toEqual({ where, envelope: false, documented: true });
        }
        const twice = await client(op)[op.method](`${path}?${p.name}=a&${p.name}=b`);
        // Given twice: refused (400), or answered for what the route checks first (an unknown id: 404).
        expect({
          key: op.key,
          refused: twice.status >= 400 && twice.status < 500,
          envelope: twice.body?.success,
          documented: (op.responses[String(twice.status)]?.description ?? '').includes(String(twice.body?.error?.code)),
        }).toEqual({ key: op.key, refused: true, envelope: false, documented: true });
      }
    }
  });
});

describe('requests generated from the document (fast-check), judged by a JSON Schema validator (Ajv)', () => {
  // A gateway of its own: mail on and a public URL (CONFORMANCE_ENV), so every route answers past its 503.
  let generated: TestGateway;
  let listening: Server;
  let doc: Document;
  beforeAll(async () => {
    generated = await buildGateway({ env: CONFORMANCE_ENV });
    listening = generated.app.listen(0, '127.0.0.1');
    await once(listening, 'listening');
    doc = (await request(listening).get('/api/openapi.json').expect(200)).body as Document;
  });
  afterAll(async () => {
    await new Promise((resolve) => listening.close(resolve));
    await generated.close();
  });

  test('the server and the document agree on every one (a fixed seed, a few of each kind per operation)', async () => {
    const result = await runConformance(listening, generated.redis, { perKind: 5, seed: 36 });
    expect(summarise(result.findings)).toEqual([]);
    // It cannot pass empty: every operation with a body was sent bodies the document allows and bodies it does not.
    const conformance = new Conformance(doc);
    const withBodies = conformance.operations().filter((op) => conformance.bodySchema(op));
    expect(withBodies.length).toBeGreaterThan(15);
    for (const op of withBodies)
      expect([op.key, result.counts[op.key].allowed > 0, result.counts[op.key].refused > 0]).toEqual([
        op.key,
        true,
        true,
      ]);
  }, 60_000);

  test('the rules found disagreeing are stated: webhook_secret needs webhook_url, an entry 0, a merge to mp3, a port 0, a range backwards', async () => {
    const conformance = new Conformance(doc);
    const op = (key: string) => conformance.operations().find((o) => o.key === key)!;
    const session = await confirmedAccount(listening, generated.redis);
    const apiKey = (await session.agent.post('/account/keys').send({ name: 'stated' }).expect(201)).body.data.secret;
    const url = 'http://127.0.0.2:9/feed.xml';
    const cases: [string, unknown][] = [
      ['post /api/v1/subscriptions', { url, webhook_secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}` }],
      ['post /api/v1/download', { url, webhook_secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}` }],
      ['post /api/v1/download', { collection_url: url, entries: '0' }],
      // Found reading the checks after the source lookup: a merge pair makes a video (the Merge pair form says so now).
      ['post /api/v1/download', { video_url: url, audio_url: url, format: 'mp3' }],
      ['post /api/v1/download', { collection_url: url, entries: '3,000000-2' }],
      ['post /api/v1/extract', { url: 'http://127.0.0.2:0/' }],
      ['post /api/v1/extract', { url: 'http://127.0.0.2:65536/' }],
    ];
    for (const [key, body] of cases) {
      const request = { path: {}, query: {}, headers: {}, body };
      const why = conformance.judge(op(key), request);
      // The document refuses each, and the server refuses it with 400 for its form.
      expect([key, body, why === undefined]).toEqual([key, body, false]);
      const answer = await sendCase(listening, op(key), { ...request, allowed: false, why }, session, apiKey);
      expect([key, body, conformance.check(op(key), { ...request, allowed: false, why }, answer)]).toEqual([
        key,
        body,
        undefined,
      ]);
    }
    // A rule JSON Schema cannot state is in the document's x-rules, so the refusal of an allowed body is one it names.
    const backwards = { path: {}, query: {}, headers: {}, body: { collection_url: url, entries: '5-3' } };
    expect(conformance.judge(op('post /api/v1/download'), backwards)).toBeUndefined();
    const answer = await sendCase(
      listening,
      op('post /api/v1/download'),
      { ...backwards, allowed: true },
      session,
      apiKey,
    );
    expect([answer.status, answer.body?.error?.message]).toEqual([400, 'entries range 5-3 runs backwards.']);
    expect(conformance.check(op('post /api/v1/download'), { ...backwards, allowed: true }, answer)).toBeUndefined();
  });

  test('docs/api-validation.md lists every rule the document states in x-rules, with its code and message', () => {
    const rules = new Map<string, StatedRule>();
    JSON.stringify(doc, (key, value: unknown) => {
      if (key === 'x-rules') for (const rule of value as StatedRule[]) rules.set(`${rule.code} ${rule.message}`, rule);
      return value;
    });
    expect(rules.size).toBeGreaterThan(5);
    const page = readFileSync(new URL('../../../docs/api-validation.md', import.meta.url), 'utf8');
    const lines = page.split('\n');
    for (const rule of rules.values()) {
      const listed = lines.some((l) => l.includes(rule.message) && l.includes(`\`${rule.code}\``));
      expect([rule.code, rule.message, listed]).toEqual([rule.code, rule.message, true]);
    }
  });
});
