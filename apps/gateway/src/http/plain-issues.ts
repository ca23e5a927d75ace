// The one place zod's findings about a request become words for people: every 400 a schema refuses
// says, in a sentence naming the field, what was wrong and what the field takes ("every must be from
// 300 to 604800, not 60.") instead of zod's own ("Too small: expected number to be >=300"). It is
// zod's per-parse error map, so a message a schema states itself (a refine's, a `.min(n, '…')`'s)
// still wins: zod ranks schema messages above the per-parse map.
import { z } from 'zod';
import { fieldChain } from './body-fields.js';

type Issue = z.core.$ZodRawIssue;
/** zod's number schemas state their bounds as minValue/maxValue (null when unbounded or only safe-integer). */
type Bounds = { minValue?: number | null; maxValue?: number | null };
const bound = (value: number | null | undefined) =>
  typeof value === 'number' && Math.abs(value) < Number.MAX_SAFE_INTEGER ? value : undefined;

/** `every`, `clip.start`, `subtitles.1`; the body itself when the issue is about the whole of it. */
export const fieldLabel = (path: readonly PropertyKey[] | undefined): string =>
  path?.length ? path.map(String).join('.') : 'the body';

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'a JSON object',
  array: 'a list',
  null: 'null',
  bigint: 'a whole number',
};
const typeName = (expected: string | undefined) => TYPE_NAMES[expected ?? ''] ?? `a value of type ${expected}`;

/** What a value is, for "…, not <this>": the value itself when it is short and plain, else its kind. */
function shown(value: unknown): string {
  if (typeof value === 'string') return value.length <= 40 ? JSON.stringify(value) : 'a longer string';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return typeof value;
}

/** The kind of a value, for a wrong type: "not a string". */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : `${value}`;
  return `a ${typeof value}`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const lcFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);
const listOf = (values: readonly unknown[]) =>
  values.length <= 1
    ? values.map((v) => JSON.stringify(v)).join('')
    : `${values
        .slice(0, -1)
        .map((v) => JSON.stringify(v))
        .join(', ')} or ${JSON.stringify(values.at(-1))}`;

/** The bounds and description of the field an issue is about, read from the route's schema. */
function fieldFacts(root: z.ZodType | undefined, path: readonly PropertyKey[] | undefined) {
  const chain = (root && path && fieldChain(root, path)) || [];
  const own = (chain.at(-1) ?? {}) as Bounds;
  const bounds = { minimum: bound(own.minValue), maximum: bound(own.maxValue) };
  // `.describe()` is often on the optional wrapper (`every: Every.optional().describe(…)`): the outermost wins.
  const description = chain
    .map((link) => z.globalRegistry.get(link)?.description)
    .find((text): text is string => typeof text === 'string');
  return { bounds, description };
}

/** The sentence for one issue; `root` is the schema the whole body was checked against. */
export function plainIssue(issue: Issue, root?: z.ZodType): string {
  const f = fieldLabel(issue.path);
  const { bounds, description } = fieldFacts(root, issue.path);
  const hint = description ? ` (${lcFirst(description)})` : '';
  const input = issue.input;
  switch (issue.code) {
    case 'invalid_type':
      if (input === undefined) return `${f} is missing; it takes ${typeName(issue.expected)}${hint}.`;
      return `${f} must be ${typeName(issue.expected)}, not ${kindOf(input)}.`;
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      const limit = Number(small ? issue.minimum : issue.maximum);
      const origin = issue.origin;
      if (origin === 'number' || origin === 'int' || origin === 'bigint') {
        const [min, max] = [small ? limit : bounds.minimum, small ? bounds.maximum : limit];
        const exclusive = issue.inclusive === false;
        if (!exclusive && min !== undefined && max !== undefined && Number.isFinite(min) && Number.isFinite(max))
          return `${f} must be from ${min} to ${max}, not ${shown(input)}.`;
        const side = small
          ? exclusive
            ? `greater than ${limit}`
            : `at least ${limit}`
          : exclusive
            ? `less than ${limit}`
            : `at most ${limit}`;
        return `${f} must be ${side}, not ${shown(input)}.`;
      }
      if (origin === 'string') {
        const length = typeof input === 'string' ? ` (it has ${plural(input.length, 'character')})` : '';
        if (small && limit <= 1) return `${f} must not be empty.`;
        return `${f} must be ${small ? 'at least' : 'at most'} ${plural(limit, 'character')} long${length}.`;
      }
      if (origin === 'array' || origin === 'set') {
        const count = Array.isArray(input) ? ` (it has ${input.length})` : '';
        return small
          ? `${f} needs at least ${plural(limit, 'item')}${count}.`
          : `${f} takes at most ${plural(limit, 'item')}${count}.`;
      }
      return `${f} is too ${small ? 'small' : 'big'}: ${small ? 'at least' : 'at most'} ${limit}.`;
    }
    case 'invalid_value': {
      const values = issue.values as readonly unknown[];
      if (values.length === 1) return `${f} must be ${listOf(values)}, not ${shown(input)}.`;
      return `${f} must be one of ${listOf(values)}, not ${shown(input)}.`;
    }
    case 'invalid_format':
      switch (issue.format) {
        case 'email':
          return `${f} must be an e-mail address such as ada@example.com.`;
        case 'url':
          return `${f} must be an absolute http(s) URL such as https://example.com/video.`;
        case 'starts_with':
          return `${f} must start with ${JSON.stringify((issue as { prefix?: string }).prefix)}.`;
        case 'ends_with':
          return `${f} must end with ${JSON.stringify((issue as { suffix?: string }).suffix)}.`;
        case 'includes':
          return `${f} must include ${JSON.stringify((issue as { includes?: string }).includes)}.`;
        case 'regex':
          return `${f} is not in the form it takes${hint}.`;
        default:
          return `${f} must be a valid ${issue.format}${hint}.`;
      }
    case 'not_multiple_of':
      return `${f} must be a multiple of ${String(issue.divisor)}, not ${shown(input)}.`;
    case 'unrecognized_keys': {
      const keys = (issue.keys as string[]).slice(0, 10).map((k) => JSON.stringify(k));
      return `${issue.path?.length ? f : 'The body'} has ${keys.length > 1 ? 'fields' : 'a field'} it does not take: ${keys.join(', ')} (see /api/openapi.json).`;
    }
    case 'invalid_union': {
      // What each form wanted, when every form refused the value's type or value outright.
      const wanted = (issue.errors as z.core.$ZodIssue[][]).map((branch) => {
        const first = branch[0];
        if (branch.length !== 1 || first.path.length) return undefined;
        if (first.code === 'invalid_type') return typeName(first.expected);
        if (first.code === 'invalid_value' && first.values.length === 1) return JSON.stringify(first.values[0]);
        return undefined;
      });
      if (wanted.length && wanted.every((w) => w !== undefined)) {
        const unique = [...new Set(wanted)];
        const options =
          unique.length === 1 ? unique[0] : `${unique.slice(0, -1).join(', ')} or ${unique.at(-1) as string}`;
        return `${f} must be ${options}${hint}, not ${kindOf(input)}.`;
      }
      return `${f} is none of the forms it takes${hint}.`;
    }
    case 'invalid_key':
      return `${f} has a key it does not take${hint}.`;
    case 'invalid_element':
      return `${f} holds a value it does not take${hint}.`;
    default:
      return `${f} is not valid${hint}.`;
  }
}

/**
 * zod's parse with plain messages: the per-parse error map that writes them, and the set of messages
 * it wrote, so the caller can tell them (which name their field) from a schema's own (which may not).
 */
export function plainParse<T extends z.ZodType>(schema: T, value: unknown) {
  const written = new Set<string>();
  const result = schema.safeParse(value, {
    error: (issue) => {
      const message = plainIssue(issue, schema);
      written.add(message);
      return message;
    },
  });
  return { result, written };
}
