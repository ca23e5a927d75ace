// Request values made from an OpenAPI document's JSON Schemas, for the test that holds the server to
// its document: values each schema allows, and values that break exactly one stated constraint.
// Strings a schema would take as a URL are URLs on 127.0.0.2, which the egress guard blocks before any
// connection, so no case ever reaches past this machine.
import fc from 'fast-check';

export type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  examples?: unknown[];
  uniqueItems?: boolean;
  dependentRequired?: Record<string, string[]>;
  dependentSchemas?: Record<string, Schema>;
  oneOf?: Schema[];
  anyOf?: Schema[];
};

/** A body (or value) that breaks one constraint: what it breaks, where, and the code the refusal carries. */
export interface Violation {
  what: string;
  value: unknown;
  /** The field the refusal's message must name. */
  field: string;
  code: string;
}

export const BLOCKED_URL = 'http://127.0.0.2:9/media.mp4';
const UNKNOWN_FIELD = 'x_not_a_field';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class SchemaCases {
  constructor(private readonly components: Record<string, Schema>) {}

  /** The schema a `$ref` names, with the referring schema's own keywords (a description) on top. */
  resolve(schema: Schema): Schema {
    // `const: v` is `enum: [v]` for every purpose here (zod's z.literal states it so).
    if ('const' in schema && !schema.enum) return this.resolve({ ...schema, enum: [schema.const] });
    if (!schema.$ref) return schema;
    const { $ref, ...rest } = schema;
    const target = this.components[$ref.replace('#/components/schemas/', '')];
    if (!target) throw new Error(`unresolved ${$ref}`);
    return { ...this.resolve(target), ...rest };
  }

  /** Whether a string meets the schema's length and pattern (JSON Schema patterns are ECMA-262, unicode). */
  stringAllowed(schema: Schema, value: string): boolean {
    const length = [...value].length;
    if (typeof schema.minLength === 'number' && length < schema.minLength) return false;
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) return false;
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) return false;
    return !schema.enum || schema.enum.includes(value);
  }

  /** One value the schema allows: its example, else one made from its keywords. */
  valid(raw: Schema): unknown {
    const schema = this.resolve(raw);
    if (schema.examples?.length) return blockUrls(schema.examples[0]);
    if (schema.oneOf || schema.anyOf) return this.valid((schema.oneOf ?? schema.anyOf)![0]);
    if (schema.enum) return schema.enum[0];
    switch (schema.type) {
      case 'string':
        return this.strings(schema)[0];
      case 'number':
      case 'integer': {
        const min =
          typeof schema.minimum === 'number'
            ? schema.minimum
            : typeof schema.exclusiveMinimum === 'number'
              ? schema.exclusiveMinimum + 1
              : 0;
        return schema.type === 'integer' ? Math.ceil(min) : min;
      }
      case 'boolean':
        return true;
      case 'array':
        return Array.from({ length: Math.max(1, Number(schema.minItems ?? 1)) }, () => this.valid(schema.items ?? {}));
      case 'object':
        return Object.fromEntries(
          (schema.required ?? []).map((key) => [key, this.valid(schema.properties?.[key] ?? {})]),
        );
      default:
        return 'x';
    }
  }

  /** Strings the schema allows (made once per schema): a blocked URL or a plain one first, then its shortest and longest, then samples of its pattern. */
  strings(schema: Schema): string[] {
    const key = JSON.stringify(schema);
    const known = this.made.get(key);
    if (known) return known;
    const made = this.makeStrings(schema);
    this.made.set(key, made);
    return made;
  }

  private readonly made = new Map<string, string[]>();

  private makeStrings(schema: Schema): string[] {
    const min = Number(schema.minLength ?? 0);
    const max = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
    const found = new Set<string>();
    const offer = (value: string) => this.stringAllowed(schema, value) && found.add(value);
    for (const example of schema.examples ?? []) if (typeof example === 'string') offer(blockUrls(example) as string);
    offer(BLOCKED_URL);
    offer('x'.repeat(Math.max(1, min)));
    offer('ada@example.com');
    const first = [...found][0];
    if (first !== undefined) {
      // The longest value still allowed, grown at either end (a URL's path, an e-mail's local part).
      if (max !== undefined && max <= 4096)
        for (const grown of [first + 'a'.repeat(max - first.length), 'a'.repeat(max - first.length) + first])
          if (offer(grown)) break;
      if (min > 0) offer(first.slice(0, min));
    }
    // Samples of a pattern that no URL meets (a URL field gets blocked URLs only: no name to resolve).
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(BLOCKED_URL)) {
      try {
        for (const sample of fc.sample(fc.stringMatching(new RegExp(schema.pattern, 'u')), { numRuns: 12, seed: 26 }))
          offer(sample);
      } catch {
        /* a pattern fast-check cannot generate from: the values above stand */
      }
    }
    if (found.size === 0) throw new Error(`no value found for ${JSON.stringify(schema)}`);
    return [...found].slice(0, 6);
  }

  /** Values the schema allows, for one field: each is sent in place of the field's value in an allowed body. */
  validValues(raw: Schema): unknown[] {
    const schema = this.resolve(raw);
    if (schema.enum) return schema.enum;
    if (schema.type === 'string') return this.strings(schema);
    if (schema.type === 'number' || schema.type === 'integer') {
      const values = [
        this.valid(schema),
        schema.maximum,
        typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - 0.5 : undefined,
      ];
      return [...new Set(values.filter((v) => typeof v === 'number'))];
    }
    if (schema.type === 'boolean') return [true, false];
    if (schema.type === 'array' && typeof schema.maxItems === 'number')
      return [this.valid(schema), this.items(schema, schema.maxItems)];
    return [this.valid(schema)];
  }

  /** `count` items the array schema allows, all different when it says uniqueItems. */
  items(schema: Schema, count: number): unknown[] {
    const item = this.resolve(schema.items ?? {});
    const first = this.valid(item);
    if (!schema.uniqueItems) return Array.from({ length: count }, () => first);
    const distinct = new Set<unknown>([first]);
    if (item.type === 'string')
      for (let i = 0; distinct.size < count && i < count * 2; i++)
        for (const v of [`${String(first)}${i}`, `${i}${String(first)}`])
          if (this.stringAllowed(item, v)) {
            distinct.add(v);
            break;
          }
    for (const v of item.enum ?? []) if (distinct.size < count) distinct.add(v);
    return [...distinct];
  }

  /**
   * Values of `raw` that break one stated constraint each, given an allowed `value` to break from.
   * `field` names the field (its dotted path); `code` is the field's stated code for its constraints.
   */
  violations(raw: Schema, value: unknown, field: string): Violation[] {
    const schema = this.resolve(raw);
    const code = typeof schema['x-error-code'] === 'string' ? schema['x-error-code'] : 'invalid_request';
    const out: Violation[] = [];
    const add = (what: string, v: unknown, c = code, f = field) =>
      out.push({ what: `${f || 'the body'}: ${what}`, value: v, field: f, code: c });
    // Which branch a value breaks is not one constraint; an object whose oneOf only states its forms
    // (which fields go together) still has properties whose own constraints each can break.
    if ((schema.oneOf || schema.anyOf) && !schema.properties) return out;
    const wrong =
      schema.type === 'string'
        ? 12345
        : schema.type === 'object' || schema.type === 'array'
          ? 'x'
          : schema.type
            ? 'not-a-' + schema.type
            : undefined;
    if (wrong !== undefined) add(`a ${typeof wrong} instead of ${schema.type}`, wrong, 'invalid_request');
    if (schema.enum)
      add('a value not in its enum', schema.type === 'string' ? 'not-one-of-them' : -987654, 'invalid_request');
    if (schema.type === 'string' && typeof value === 'string') {
      if (typeof schema.minLength === 'number' && schema.minLength > 0)
        add(`shorter than minLength ${schema.minLength}`, value.slice(0, schema.minLength - 1));
      if (typeof schema.maxLength === 'number') {
        const longer = value + 'a'.repeat(schema.maxLength + 1 - value.length);
        add(`longer than maxLength ${schema.maxLength}`, longer);
      }
      if (typeof schema.pattern === 'string') {
        const re = new RegExp(schema.pattern, 'u');
        const candidates = [
          ' ',
          '\u0000',
          '!',
          'not matching ☃',
          `${value} `,
          ` ${value}`,
          `${value}\u0000`,
          value.replace('.', '-.'),
          value.replace('@', '@-'),
          value.replace(/^http/i, 'ftp'),
          'http://user:pw@127.0.0.2/',
          'https://',
        ];
        const breaking = [...new Set(candidates)].filter(
          (c) =>
            c !== value && !re.test(c) && this.stringAllowed({ ...schema, pattern: undefined, enum: undefined }, c),
        );
        for (const c of breaking.slice(0, 6)) add(`${JSON.stringify(c.slice(0, 40))} against its pattern`, c);
      }
    }
    if ((schema.type === 'number' || schema.type === 'integer') && typeof value === 'number') {
      if (typeof schema.minimum === 'number') add(`below minimum ${schema.minimum}`, schema.minimum - 0.5);
      if (typeof schema.exclusiveMinimum === 'number')
        add(`at exclusiveMinimum ${schema.exclusiveMinimum}`, schema.exclusiveMinimum);
      if (typeof schema.maximum === 'number') add(`above maximum ${schema.maximum}`, schema.maximum + 0.5);
      if (typeof schema.exclusiveMaximum === 'number')
        add(`at exclusiveMaximum ${schema.exclusiveMaximum}`, schema.exclusiveMaximum);
      if (schema.type === 'integer') add('not an integer', value + 0.5, 'invalid_request');
    }
    if (schema.type === 'array' && Array.isArray(value)) {
      if (typeof schema.minItems === 'number' && schema.minItems > 0)
        add(`fewer than minItems ${schema.minItems}`, value.slice(0, schema.minItems - 1));
      if (typeof schema.maxItems === 'number')
        add(`more than maxItems ${schema.maxItems}`, this.items(schema, schema.maxItems + 1));
      if (schema.uniqueItems && value.length) add('an item twice (uniqueItems)', [...value, value[0]]);
      if (schema.items && value.length) {
        for (const broken of this.violations(schema.items, value[0], `${field}.0`))
          out.push({ ...broken, value: [broken.value, ...value.slice(1)], field: broken.field });
      }
    }
    if (schema.type === 'object' && isObject(value)) out.push(...this.objectViolations(schema, value, field));
    return out;
  }

  private objectViolations(schema: Schema, value: Record<string, unknown>, field: string): Violation[] {
    const out: Violation[] = [];
    const at = (key: string) => (field ? `${field}.${key}` : key);
    const add = (what: string, v: unknown, f: string) =>
      out.push({ what: `${f}: ${what}`, value: v, field: f, code: 'invalid_request' });
    if (schema.additionalProperties === false)
      add('a field the schema does not list', { ...value, [UNKNOWN_FIELD]: true }, at(UNKNOWN_FIELD));
    for (const key of schema.required ?? []) {
      const { [key]: _dropped, ...rest } = value;
      add('required, left out', rest, at(key));
    }
    for (const [key, needs] of Object.entries(schema.dependentRequired ?? {})) {
      for (const needed of needs) {
        const { [needed]: _dropped, ...rest } = value;
        add(
          `given without ${needed} (dependentRequired)`,
          { ...rest, [key]: value[key] ?? this.valid(schema.properties?.[key] ?? {}) },
          at(key),
        );
      }
    }
    for (const [key, dependent] of Object.entries(schema.dependentSchemas ?? {})) {
      // A dependent enum on another field: give the key with a value of that field its own schema allows but the dependent one does not.
      for (const [other, rule] of Object.entries(dependent.properties ?? {})) {
        const own = this.resolve(schema.properties?.[other] ?? {});
        const outside = (own.enum ?? []).find((v) => !(rule.enum ?? []).includes(v));
        if (outside !== undefined)
          add(
            `given with ${other}=${String(outside)} (dependentSchemas)`,
            { ...value, [key]: value[key] ?? this.valid(schema.properties?.[key] ?? {}), [other]: outside },
            at(key),
          );
      }
    }
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      const current = key in value ? value[key] : this.valid(property);
      for (const broken of this.violations(property, current, at(key)))
        out.push({ ...broken, value: { ...value, [key]: broken.value } });
    }
    return out;
  }
}

/** Any http(s) URL inside an example, aimed at 127.0.0.2 instead (blocked before any connection). */
export function blockUrls(value: unknown): unknown {
  if (typeof value === 'string') return /^https?:\/\//i.test(value) ? BLOCKED_URL : value;
  if (Array.isArray(value)) return value.map(blockUrls);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, blockUrls(v)]));
  return value;
}
