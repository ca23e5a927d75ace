// Property-based conformance of a server to its OpenAPI document, in the manner of Schemathesis: for
// every operation that takes a body, a path, query or header parameter, requests are generated from the
// document's schemas (fast-check, ./openapi-arbitraries.ts), judged allowed or not by a JSON Schema
// 2020-12 validator reading the same document (Ajv: the document's meaning is a validator's, not this
// file's), and sent. A disagreement is an allowed request refused for its form (400 with a form code,
// unless a rule the document states in `x-rules` names that refusal), a request the document does not
// allow that is not refused with 400, a 5xx, or a status the operation does not document.
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { SchemaArbitraries, type Schema } from './openapi-arbitraries.js';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: Schema;
}

export interface Operation {
  key: string;
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  parameters?: Parameter[];
  security: Record<string, unknown>[];
  requestBody?: { content: Record<string, { schema: Schema }>; 'x-max-bytes'?: number };
  responses: Record<string, { description: string }>;
}

export interface Document {
  paths: Record<string, Record<string, Omit<Operation, 'key' | 'method' | 'path'>>>;
  components: { schemas: Record<string, Schema> };
}

/** One generated request: its parts, and whether the document allows it. */
export interface Case {
  path: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: unknown;
  allowed: boolean;
  /** What the validator found wrong (an invalid case). */
  why?: string;
}

export interface Answer {
  status: number;
  body: { success?: boolean; error?: { code?: string; message?: string } } | undefined;
}

export interface Finding {
  operation: string;
  kind: 'allowed, refused for its form' | 'not allowed, not refused' | 'server error' | 'undocumented status';
  status: number;
  code?: string;
  message?: string;
  why?: string;
  request: Omit<Case, 'allowed' | 'why'>;
}

/** A rule JSON Schema cannot state, as the document states it instead: the code and message of its refusal. */
export interface StatedRule {
  rule: string;
  code: string;
  /** The message, `{name}` standing for a part that varies. */
  message: string;
}

const DOC_ID = 'https://reelay.invalid/openapi.json';

/**
 * URL hosts the generated requests may name: each an IP literal the egress guard refuses before any
 * connection (127.0.0.2 is not the allow-listed 127.0.0.1), or one URL parsing refuses (a port out of
 * range, a forbidden character, five numbers), so no name is ever looked up and nothing leaves the machine.
 */
const BLOCKED_HOSTS = [
  '127.0.0.2',
  '127.0.0.2:9',
  '127.0.0.2:0',
  '127.0.0.2:00080',
  '127.0.0.2:65536',
  '[::ffff:127.0.0.2]',
  '127.0.0.2.',
  '127.0.0.2.5',
  '127.0.0.2%zz',
  '127.0.0.2^',
  '[127.0.0.2]',
];

/** Every http(s) URL in a generated value, its host (after any user info) swapped for a blocked one. */
export function blockHosts(value: unknown, pick: number): unknown {
  if (typeof value === 'string')
    return value.replace(
      /^([Hh][Tt][Tt][Pp][Ss]?:\/\/)([^/?#]*@)?([^/?#]*)/,
      (_, scheme: string, user = '') => scheme + user + BLOCKED_HOSTS[pick % BLOCKED_HOSTS.length],
    );
  if (Array.isArray(value)) return value.map((v) => blockHosts(v, pick));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, blockHosts(v, pick)]));
  return value;
}

const withoutSchemaKeys = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutSchemaKeys)
    : value && typeof value === 'object'
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([k]) => k !== '$schema')
            .map(([k, v]) => [k, withoutSchemaKeys(v)]),
        )
      : value;

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export class Conformance {
  readonly arbitraries: SchemaArbitraries;
  private readonly ajv: Ajv2020;
  /** The codes of a refusal for a request's form: invalid_request and every x-error-code the document names. */
  readonly formCodes: Set<string>;

  constructor(private readonly doc: Document) {
    this.arbitraries = new SchemaArbitraries(doc.components.schemas);
    // strict off: the document's schemas carry OpenAPI's and reelay's own keywords (x-error-code, …).
    this.ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false, logger: false });
    this.ajv.addSchema({
      $id: DOC_ID,
      ...(withoutSchemaKeys({ paths: doc.paths, components: doc.components }) as object),
    });
    this.formCodes = new Set([
      'invalid_request',
      ...[...JSON.stringify(doc).matchAll(/"x-error-code":"([a-z_]+)"/g)].map((m) => m[1]),
    ]);
  }

  /** Every operation with a body or a parameter, in the document's order. */
  operations(): Operation[] {
    return Object.entries(this.doc.paths)
      .flatMap(([path, ops]) =>
        Object.entries(ops).map(([method, op]) => ({ ...op, key: `${method} ${path}`, method, path }) as Operation),
      )
      .filter((op) => this.bodySchema(op) || (op.parameters ?? []).length > 0);
  }

  bodySchema(op: Operation): Schema | undefined {
    return op.requestBody?.content['application/json']?.schema;
  }

  /** The parameters generated: a server-issued one (a signed cursor) is never made up, so it is left out. */
  parameters(op: Operation): Parameter[] {
    return (op.parameters ?? []).filter(
      (p) => ['path', 'query', 'header'].includes(p.in) && !this.arbitraries.resolve(p.schema)['x-server-issued'],
    );
  }

  /** The rules the operation's body schema states in `x-rules`, wherever in the body they sit. */
  statedRules(op: Operation): StatedRule[] {
    const rules: StatedRule[] = [];
    const seen = new Set<string>();
    const walk = (raw: unknown) => {
      if (!raw || typeof raw !== 'object') return;
      if (Array.isArray(raw)) return raw.forEach(walk);
      const schema = raw as Schema;
      if (schema.$ref) {
        if (seen.has(schema.$ref)) return;
        seen.add(schema.$ref);
      }
      const resolved = this.arbitraries.resolve(schema);
      rules.push(...((resolved['x-rules'] as StatedRule[] | undefined) ?? []));
      for (const [k, v] of Object.entries(resolved)) if (k !== 'x-rules' && k !== '$ref') walk(v);
    };
    walk(this.bodySchema(op));
    return rules;
  }

  /** `count` requests aimed at what the document allows and `count` aimed at breaking it, from `seed`. */
  cases(op: Operation, count: number, seed: number): Case[] {
    const params = this.parameters(op);
    const body = this.bodySchema(op);
    const validParams = fc.record(
      Object.fromEntries(params.map((p) => [`${p.in}:${p.name}`, this.arbitraries.valid(p.schema)])),
    );
    // Path parameters are always sent (a path without one is another route); others now and then.
    const sentParams = fc.record(
      Object.fromEntries(params.map((p) => [`${p.in}:${p.name}`, fc.integer({ min: 0, max: 2 })])),
    );
    const valid = fc.record({
      params: validParams,
      sent: sentParams,
      body: body ? this.arbitraries.valid(body) : fc.constant(undefined),
      pick: fc.nat(),
    });
    const breakable = [
      ...params.filter((p) => p.in !== 'path').map((p) => `${p.in}:${p.name}`),
      ...(body ? ['body'] : []),
    ];
    const made = fc.sample(valid, { numRuns: count, seed });
    if (breakable.length) {
      const invalid = fc.record({ base: valid, part: fc.constantFrom(...breakable) }).chain(({ base, part }) => {
        if (part === 'body') return this.arbitraries.invalid(body!).map((bad) => ({ ...base, body: bad }));
        const param = params.find((p) => `${p.in}:${p.name}` === part)!;
        return this.arbitraries
          .invalid(param.schema)
          .map((bad) => ({ ...base, params: { ...base.params, [part]: bad }, sent: { ...base.sent, [part]: 1 } }));
      });
      made.push(...fc.sample(invalid, { numRuns: count, seed: seed + 1 }));
    }
    return made.flatMap(({ params: values, sent, body: value, pick }) => {
      const request: Case = { path: {}, query: {}, headers: {}, allowed: true };
      for (const p of params) {
        const key = `${p.in}:${p.name}`;
        if (p.in !== 'path' && sent[key] === 0 && !p.required) continue;
        const v = values[key];
        // A parameter travels as UTF-8 text: a value that is not a string, or holds a lone surrogate, cannot travel as it is.
        if (typeof v !== 'string' || /\p{Cs}/u.test(v)) return [];
        if (p.in === 'path') {
          if (v === '' || v === '.' || v === '..') return [];
          request.path[p.name] = v;
        } else if (p.in === 'query') request.query[p.name] = String(blockHosts(v, pick));
        // A header holds visible ASCII only, without white space at either end (HTTP would trim it).
        else if (/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(v)) request.headers[p.name] = v;
        else return [];
      }
      if (body) request.body = blockHosts(value, pick);
      const problem = this.judge(op, request);
      return [{ ...request, allowed: problem === undefined, why: problem }];
    });
  }

  /** What the document finds wrong with a request, or undefined when it allows it. */
  judge(op: Operation, request: Omit<Case, 'allowed'>): string | undefined {
    const base = pointer('paths', op.path, op.method);
    for (const [i, p] of (op.parameters ?? []).entries()) {
      const value =
        p.in === 'query' ? request.query[p.name] : p.in === 'header' ? request.headers[p.name] : request.path[p.name];
      if (value === undefined) {
        if (p.required && p.in !== 'path') return `${p.name} is required`;
        continue;
      }
      const validate = this.ajv.getSchema(`${DOC_ID}#/${base}/parameters/${i}/schema`);
      if (validate && !validate(value)) return `${p.in} ${p.name}: ${this.ajv.errorsText(validate.errors)}`;
    }
    if (this.bodySchema(op)) {
      const validate = this.ajv.getSchema(
        `${DOC_ID}#/${base}/${pointer('requestBody', 'content', 'application/json', 'schema')}`,
      )!;
      if (!validate(request.body)) return `body: ${this.ajv.errorsText(validate.errors)}`;
      if (this.oversized(op, request)) return `body: over the ${op.requestBody!['x-max-bytes']} bytes of x-max-bytes`;
    }
    return undefined;
  }

  /** Whether the body is larger than the operation's stated x-max-bytes. */
  private oversized(op: Operation, request: Omit<Case, 'allowed'>): boolean {
    const limit = op.requestBody?.['x-max-bytes'];
    return limit !== undefined && request.body !== undefined && Buffer.byteLength(JSON.stringify(request.body)) > limit;
  }

  /** The disagreement an answer shows, or undefined when server and document agree. */
  check(op: Operation, request: Case, answer: Answer): Finding | undefined {
    const code = answer.body?.error?.code;
    const message = answer.body?.error?.message;
    const { allowed: _allowed, why, ...sent } = request;
    const finding = (kind: Finding['kind']): Finding => ({
      operation: op.key,
      kind,
      status: answer.status,
      code,
      message,
      why,
      request: sent,
    });
    if (answer.status >= 500) return finding('server error');
    // A body over the size the document states is refused for its size (413), whatever its fields.
    if (this.oversized(op, request)) return answer.status === 413 ? undefined : finding('not allowed, not refused');
    if (!(String(answer.status) in op.responses) && !('default' in op.responses)) return finding('undocumented status');
    if (request.allowed) {
      if (answer.status === 400 && code && this.formCodes.has(code) && !this.acknowledged(op, code, message ?? ''))
        return finding('allowed, refused for its form');
      return undefined;
    }
    if (answer.status !== 400 || answer.body?.success !== false || !code || !this.formCodes.has(code))
      return finding('not allowed, not refused');
    return undefined;
  }

  /** Whether a refusal of an allowed request is one the document states: a rule of its `x-rules`, the same code and message. */
  private acknowledged(op: Operation, code: string, message: string): boolean {
    return this.statedRules(op).some((r) => r.code === code && ruleMessage(r.message).test(message));
  }
}

/** A stated message as a pattern: `{name}` stands for any text; a field's name may come first (`clip: …`). */
export function ruleMessage(stated: string): RegExp {
  const parts = stated.split(/\{[a-z_]+\}/);
  return new RegExp(`^(?:[\\w.]+: )?${parts.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.+?')}$`);
}
