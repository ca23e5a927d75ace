// What zod does not say about a request body by itself: the fields it names that its schema does not
// know (a plain z.object strips them silently, while the OpenAPI document calls every request object
// additionalProperties: false), and the error code a field's own constraints are refused with (its
// `x-error-code` metadata, which the document shows too).
import { z } from 'zod';
import { ErrorCodeSchema, type ErrorCode } from '@reelay/contracts';

type Def = { type: string; [key: string]: unknown };
type Schema = z.core.$ZodType;

const defOf = (schema: Schema): Def => schema._zod.def as unknown as Def;
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The schema under wrappers that do not change which fields a value may have (optional, default, pipe…). */
function unwrap(schema: Schema, seen: Schema[] = []): Schema[] {
  seen.push(schema);
  const def = defOf(schema);
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      return unwrap(def.innerType as Schema, seen);
    case 'pipe':
      return unwrap(def.in as Schema, seen);
    case 'lazy':
      return unwrap((def.getter as () => Schema)(), seen);
    default:
      return seen;
  }
}

const innermost = (schema: Schema): Schema => unwrap(schema).at(-1)!;

/** Dotted paths of the fields `value` names that `schema` does not take, at any depth. */
export function unknownFields(schema: Schema, value: unknown, path: string[] = []): string[] {
  const inner = innermost(schema);
  const def = defOf(inner);
  if (def.type === 'object' && isPlainObject(value)) {
    const shape = def.shape as Record<string, Schema>;
    const catchall = def.catchall as Schema | undefined;
    return Object.keys(value).flatMap((key) => {
      if (Object.hasOwn(shape, key)) return unknownFields(shape[key], value[key], [...path, key]);
      // No catchall: zod strips the key; a `never` catchall (.strict()) lets zod refuse it itself, but
      // naming it here too keeps one message for every route.
      if (!catchall || defOf(catchall).type === 'never') return [[...path, key].join('.')];
      return unknownFields(catchall, value[key], [...path, key]);
    });
  }
  if (def.type === 'array' && Array.isArray(value))
    return value.flatMap((item, i) => unknownFields(def.element as Schema, item, [...path, String(i)]));
  if (def.type === 'record' && isPlainObject(value))
    return Object.keys(value).flatMap((key) => unknownFields(def.valueType as Schema, value[key], [...path, key]));
  if (def.type === 'union') {
    // The option the value fits best: a value that fits one option fully names no unknown field.
    const found = (def.options as Schema[]).map((option) => unknownFields(option, value, path));
    return found.reduce((best, next) => (next.length < best.length ? next : best));
  }
  if (def.type === 'intersection') {
    const right = new Set(unknownFields(def.right as Schema, value, path));
    return unknownFields(def.left as Schema, value, path).filter((field) => right.has(field));
  }
  return [];
}

/**
 * The schema a field is checked with, following a zod issue's path: the field's wrappers (optional,
 * default…) outermost first and its own schema last; undefined for a path the schema does not have.
 */
export function fieldChain(schema: Schema, path: readonly PropertyKey[]): Schema[] | undefined {
  let chain = unwrap(schema);
  for (const key of path) {
    const def = defOf(chain.at(-1)!);
    let next: Schema | undefined;
    if (def.type === 'object')
      next = (def.shape as Record<string, Schema>)[String(key)] ?? (def.catchall as Schema | undefined);
    else if (def.type === 'array') next = def.element as Schema;
    else if (def.type === 'record') next = def.valueType as Schema;
    if (!next) return undefined;
    chain = unwrap(next);
  }
  return chain;
}

/** The `x-error-code` a field's schema names for its constraints, following a zod issue's path. */
export function errorCodeAt(schema: Schema, path: readonly PropertyKey[]): ErrorCode | undefined {
  const chain = fieldChain(schema, path);
  if (!chain) return undefined;
  for (const link of chain) {
    const named = ErrorCodeSchema.safeParse(
      (z.globalRegistry.get(link) as Record<string, unknown> | undefined)?.['x-error-code'],
    );
    if (named.success) return named.data;
  }
  return undefined;
}
