// fast-check arbitraries made from an OpenAPI document's JSON Schemas: values that aim at what a schema
// allows (every field, form and rule between fields in random combination) and values that break it
// (one mutation each, anywhere in the value). Neither is trusted to be what it aims at: the conformance
// run judges each value with a JSON Schema validator reading the same document. Generic over the
// keywords the document uses, so a field added to a zod schema is generated without a line here.
import fc from 'fast-check';

export type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  examples?: unknown[];
  uniqueItems?: boolean;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  dependentRequired?: Record<string, string[]>;
  dependentSchemas?: Record<string, Schema>;
  oneOf?: Schema[];
  anyOf?: Schema[];
  not?: Schema;
};

const REF_PREFIX = '#/components/schemas/';
/** Arrays and strings past this many items or characters are made only at their stated bounds. */
const SMALL = 12;
const UNKNOWN_FIELD = 'x_not_a_field';
/**
 * Characters of every kind a client might send: ASCII, two-byte and astral (two UTF-16 units, one code
 * point), controls, a bidi override and a lone surrogate. (fast-check's 'binary' unit would do, but it
 * takes seconds to build.)
 */
const ANY_CHAR = fc.oneof(
  { arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }), weight: 6 },
  fc.integer({ min: 0xa0, max: 0xd7ff }).map((c) => String.fromCodePoint(c)),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
  fc.constantFrom('\u0000', '\u0007', '\u007f', '\u202e', '\ud800', '\u00a0'),
);

/** A form an object's oneOf/anyOf states: the fields it needs and those it must not have. */
interface Form {
  required: string[];
  forbidden: string[];
  /** The fields a form narrows (the Merge pair's format), with their schema in that form. */
  narrowed: Record<string, Schema>;
}

export class SchemaArbitraries {
  private readonly allowed = new Map<string, fc.Arbitrary<unknown>>();
  private readonly broken = new Map<string, fc.Arbitrary<unknown>>();

  constructor(private readonly components: Record<string, Schema>) {}

  /** The schema a `$ref` names, the referring schema's own keywords on top; `const` read as a one-value enum. */
  resolve(schema: Schema): Schema {
    if ('const' in schema && !schema.enum) return this.resolve({ ...schema, enum: [schema.const] });
    if (!schema.$ref) return schema;
    const { $ref, ...rest } = schema;
    const target = this.components[$ref.replace(REF_PREFIX, '')];
    if (!target) throw new Error(`unresolved ${$ref}`);
    return { ...this.resolve(target), ...rest };
  }

  /** Values aimed at what `raw` allows. */
  valid(raw: Schema): fc.Arbitrary<unknown> {
    const key = JSON.stringify(raw);
    let arb = this.allowed.get(key);
    if (!arb) {
      // Made on first use: a schema's arbitrary is built once, and building one never recurses forever.
      let made: fc.Arbitrary<unknown> | undefined;
      arb = fc.constant(null).chain(() => (made ??= this.makeValid(this.resolve(raw))));
      this.allowed.set(key, arb);
    }
    return arb;
  }

  /** Values aimed at breaking `raw`: one mutation of an allowed value, at its top or inside it. */
  invalid(raw: Schema): fc.Arbitrary<unknown> {
    const key = JSON.stringify(raw);
    let arb = this.broken.get(key);
    if (!arb) {
      let made: fc.Arbitrary<unknown> | undefined;
      arb = fc.constant(null).chain(() => (made ??= this.makeInvalid(this.resolve(raw))));
      this.broken.set(key, arb);
    }
    return arb;
  }

  private makeValid(schema: Schema): fc.Arbitrary<unknown> {
    const examples = (schema.examples ?? []).map((e) => fc.constant(e));
    if (schema.enum) return fc.constantFrom(...schema.enum);
    if ((schema.oneOf || schema.anyOf) && !schema.type)
      return fc.oneof(...examples, ...(schema.oneOf ?? schema.anyOf)!.map((branch) => this.valid(branch)));
    const made = this.byType(schema);
    return examples.length ? fc.oneof({ arbitrary: made, weight: 4 }, ...examples) : made;
  }

  private byType(schema: Schema): fc.Arbitrary<unknown> {
    switch (schema.type) {
      case 'string':
        return this.strings(schema);
      case 'integer':
      case 'number':
        return this.numbers(schema);
      case 'boolean':
        return fc.boolean();
      case 'array':
        return this.arrays(schema);
      case 'object':
        return this.objects(schema);
      default:
        return fc.oneof(fc.string({ maxLength: SMALL }), fc.integer(), fc.boolean());
    }
  }

  private strings(schema: Schema): fc.Arbitrary<string> {
    const min = schema.minLength ?? 0;
    const max = schema.maxLength;
    const re = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
    const fits = (s: string) => {
      const length = [...s].length;
      return length >= min && (max === undefined || length <= max);
    };
    const options: fc.Arbitrary<string>[] = [];
    const matching = re && patternArbitrary(re);
    // Never a filter that might reject everything (fast-check would retry forever): a value that does
    // not fit is kept as it is, and the validator sorts it.
    if (matching) {
      options.push(matching);
      // The longest value still allowed: a matching one grown at its end, when the pattern lets it grow.
      if (max !== undefined)
        options.push(
          matching.map((s) => {
            const grown = s + 'a'.repeat(Math.max(0, max - [...s].length));
            return fits(grown) && re.test(grown) ? grown : s;
          }),
        );
    } else if (!re) {
      const upTo = Math.min(max ?? SMALL, Math.max(min, SMALL));
      options.push(fc.string({ minLength: min, maxLength: upTo }));
      options.push(fc.string({ minLength: min, maxLength: upTo, unit: ANY_CHAR }));
      // Both bounds, in characters that are one UTF-16 unit and in characters that are two (JSON Schema counts code points).
      for (const length of [min, max].filter((n): n is number => n !== undefined && n > 0))
        options.push(fc.constantFrom('a'.repeat(length), '😀'.repeat(length), 'é'.repeat(length)));
    }
    for (const example of schema.examples ?? []) if (typeof example === 'string') options.push(fc.constant(example));
    if (options.length === 0) {
      // A pattern fast-check cannot generate from: strings, some of which meet it.
      options.push(fc.string({ minLength: min, maxLength: Math.max(min, SMALL) }));
    }
    return fc.oneof(...options);
  }

  private numbers(schema: Schema): fc.Arbitrary<number> {
    const integer = schema.type === 'integer';
    const low =
      schema.minimum ??
      (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : 0.001) : -1e6);
    const high =
      schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : 0.001) : 1e6);
    const bounds = fc.constantFrom(...new Set([low, high].map((n) => (integer ? Math.ceil(n) : n))));
    const inside = integer
      ? fc.integer({ min: Math.ceil(low), max: Math.floor(high) })
      : fc.double({ min: low, max: high, noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n));
    return fc.oneof({ arbitrary: inside, weight: 3 }, bounds);
  }

  private arrays(schema: Schema): fc.Arbitrary<unknown[]> {
    const item = this.valid(schema.items ?? {});
    const minLength = schema.minItems ?? 0;
    const max = schema.maxItems;
    const small = fc.array(item, { minLength, maxLength: Math.max(minLength, Math.min(max ?? SMALL, SMALL)) });
    const unique = (length: number) =>
      fc.uniqueArray(item, {
        minLength: Math.min(length, minLength),
        maxLength: length,
        selector: (v) => JSON.stringify(v),
      });
    if (!schema.uniqueItems)
      return max !== undefined && max > SMALL
        ? fc.oneof(small, fc.array(item, { minLength: max, maxLength: max }))
        : small;
    return fc.oneof(unique(Math.min(max ?? SMALL, SMALL)), ...(max !== undefined ? [unique(max)] : []));
  }

  /** The forms an object's oneOf/anyOf states as `required` and `not: {anyOf: [{required}]}`. */
  formsOf(schema: Schema): Form[] {
    return (schema.oneOf ?? schema.anyOf ?? []).map((f) => ({
      narrowed: Object.fromEntries(
        Object.entries(f.properties ?? {}).map(([k, s]) => [k, { ...schema.properties?.[k], ...s }]),
      ),
      required: f.required ?? [],
      forbidden: (f.not?.anyOf ?? []).flatMap((n) => n.required ?? []),
    }));
  }

  /**
   * Objects of a random set of the listed fields: the required ones and a form's, each other field
   * now and then, a field's dependencies mostly with it (and a dependent schema's values mostly kept):
   * the combinations a client might send, allowed or not, for the validator to sort.
   */
  private objects(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
    const properties = schema.properties ?? {};
    const keys = Object.keys(properties);
    const forms = this.formsOf(schema);
    const values = fc.record(Object.fromEntries(keys.map((k) => [k, this.valid(properties[k])])));
    // A field's value as another field's presence asks for it (dependentSchemas), by field.
    const dependent: Record<string, fc.Arbitrary<Record<string, unknown>>> = {};
    for (const [key, rule] of Object.entries(schema.dependentSchemas ?? {}))
      dependent[key] = fc.record(
        Object.fromEntries(
          Object.entries(rule.properties ?? {}).map(([other, s]) => [
            other,
            this.valid({ ...properties[other], ...s }),
          ]),
        ),
      );
    return fc
      .record({
        values,
        form: fc.integer({ min: -1, max: forms.length - 1 }),
        take: fc.array(fc.integer({ min: 0, max: 99 }), { minLength: keys.length, maxLength: keys.length }),
        keepRules: fc.integer({ min: 0, max: 99 }),
        dependentValues: fc.record(dependent),
        formValues: fc.tuple(
          ...forms.map((f) =>
            fc.record(Object.fromEntries(Object.entries(f.narrowed).map(([k, s]) => [k, this.valid(s)]))),
          ),
        ),
      })
      .map(({ values, form, take, keepRules, dependentValues, formValues }) => {
        const chosen = forms[form];
        const out: Record<string, unknown> = {};
        keys.forEach((k, i) => {
          if (schema.required?.includes(k) || chosen?.required.includes(k) || take[i] < 35) out[k] = values[k];
        });
        // Mostly (not always: the validator then sorts them) as the rules between fields ask.
        if (keepRules < 85) {
          if (chosen) for (const k of chosen.forbidden) if (!chosen.required.includes(k)) delete out[k];
          if (chosen) for (const [k, v] of Object.entries(formValues[form])) if (k in out) out[k] = v;
          for (const [k, needs] of Object.entries(schema.dependentRequired ?? {}))
            if (k in out) for (const n of needs) out[n] ??= values[n];
          for (const [k, rule] of Object.entries(dependentValues))
            if (k in out) for (const [other, v] of Object.entries(rule)) if (other in out) out[other] = v;
        }
        return out;
      });
  }

  private makeInvalid(schema: Schema): fc.Arbitrary<unknown> {
    const branches = schema.oneOf ?? schema.anyOf;
    // A union without a type of its own: a branch's value broken, or a value of a type no branch takes.
    if (!schema.type && branches)
      return fc.oneof(fc.constantFrom<unknown>(null, {}, []), ...branches.map((b) => this.invalid(b)));
    // A schema that takes anything: nothing to break (the value is sent, and judged, all the same).
    if (!schema.type) return fc.constant(null);
    const wrongType = fc.constantFrom<unknown>(
      ...[null, 12345, 'x', true, [], {}].filter((v) => !matchesType(schema.type, v)),
    );
    const mutations: fc.Arbitrary<unknown>[] = [wrongType];
    if (schema.enum)
      mutations.push(
        fc.string({ maxLength: SMALL }),
        ...schema.enum.filter((v) => typeof v === 'string').map((v) => fc.constant((v as string).toUpperCase() + '_')),
      );
    if (schema.type === 'string') {
      const min = schema.minLength ?? 0;
      if (min > 0) mutations.push(fc.string({ maxLength: min - 1 }));
      if (schema.maxLength !== undefined) {
        const max = schema.maxLength;
        mutations.push(fc.constantFrom('a'.repeat(max + 1), '😀'.repeat(max + 1)));
        // A value allowed in all but its length.
        mutations.push(
          this.valid(schema).map((s) => String(s) + 'a'.repeat(Math.max(1, max + 1 - [...String(s)].length))),
        );
      }
      if (typeof schema.pattern === 'string') {
        // Any short string (most break a pattern; the validator sorts out those that do not).
        mutations.push(fc.string({ maxLength: SMALL, unit: ANY_CHAR }));
        // An allowed value with one character put in, taken out or changed somewhere.
        mutations.push(
          fc
            .tuple(
              this.valid(schema),
              fc.nat(),
              fc.constantFrom('', ' ', '0', '-', ',', '@', '/', ':0', '\u0000', '\n', 'é', 'A'),
            )
            .map(([v, at, c]) => {
              const s = String(v);
              const i = s.length ? at % s.length : 0;
              return s.slice(0, i) + c + s.slice(i + (at % 2));
            }),
        );
      }
    }
    if (schema.type === 'integer' || schema.type === 'number') {
      if (schema.minimum !== undefined) mutations.push(fc.constantFrom(schema.minimum - 1, schema.minimum - 0.5));
      if (schema.exclusiveMinimum !== undefined) mutations.push(fc.constant(schema.exclusiveMinimum));
      if (schema.maximum !== undefined) mutations.push(fc.constantFrom(schema.maximum + 1, schema.maximum + 0.5));
      if (schema.exclusiveMaximum !== undefined) mutations.push(fc.constant(schema.exclusiveMaximum));
      if (schema.type === 'integer') mutations.push(this.valid(schema).map((n) => Number(n) + 0.5));
      mutations.push(this.valid(schema).map((n) => String(n)));
    }
    if (schema.type === 'array') {
      const item = schema.items ?? {};
      if ((schema.minItems ?? 0) > 0) mutations.push(fc.constant([]));
      if (schema.maxItems !== undefined)
        mutations.push(fc.array(this.valid(item), { minLength: schema.maxItems + 1, maxLength: schema.maxItems + 1 }));
      if (schema.uniqueItems)
        mutations.push(this.valid(schema).map((a) => (Array.isArray(a) && a.length ? [...a, a[0]] : a)));
      mutations.push(
        fc.tuple(this.valid(schema), this.invalid(item)).map(([a, bad]) => [bad, ...(a as unknown[]).slice(1)]),
      );
    }
    if (schema.type === 'object') mutations.push(this.invalidObjects(schema));
    return fc.oneof(...mutations);
  }

  private invalidObjects(schema: Schema): fc.Arbitrary<unknown> {
    const properties = schema.properties ?? {};
    const keys = Object.keys(properties);
    const base = this.valid(schema) as fc.Arbitrary<Record<string, unknown>>;
    const mutations: fc.Arbitrary<unknown>[] = [];
    if (schema.additionalProperties === false) mutations.push(base.map((o) => ({ ...o, [UNKNOWN_FIELD]: true })));
    for (const key of schema.required ?? []) mutations.push(base.map(({ [key]: _dropped, ...rest }) => rest));
    for (const [key, needs] of Object.entries(schema.dependentRequired ?? {}))
      mutations.push(
        fc.tuple(base, this.valid(properties[key] ?? {})).map(([o, v]) => {
          const out: Record<string, unknown> = { ...o, [key]: o[key] ?? v };
          for (const n of needs) delete out[n];
          return out;
        }),
      );
    // Every field at once: forms that exclude each other, and any other rule between fields, in one body.
    if (keys.length) mutations.push(fc.record(Object.fromEntries(keys.map((k) => [k, this.valid(properties[k])]))));
    // One field broken, the others allowed.
    if (keys.length)
      mutations.push(
        fc
          .tuple(base, fc.constantFrom(...keys))
          .chain(([o, key]) => this.invalid(properties[key]).map((bad) => ({ ...o, [key]: bad }))),
      );
    return fc.oneof(...mutations);
  }
}

/** fast-check's strings matching `re`, or undefined where its generator does not take the pattern (lookaround, \p{…}). */
function patternArbitrary(re: RegExp): fc.Arbitrary<string> | undefined {
  // A Unicode property takes fast-check seconds to build into a character class; random strings meet most such patterns.
  if (/\\[pP]\{/.test(re.source)) return undefined;
  try {
    const arb = fc.stringMatching(re);
    fc.sample(arb, { numRuns: 1, seed: 1 });
    return arb;
  } catch {
    return undefined;
  }
}

function matchesType(type: string | undefined, v: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    case 'null':
      return v === null;
    default:
      return true;
  }
}
