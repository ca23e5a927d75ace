// Rules a request is held to beyond one field's own type, length, pattern and range, each written once
// beside the check that enforces it, so the OpenAPI document (generated from these zod schemas) states
// it: a field that needs another is JSON Schema's dependentRequired; a rule JSON Schema cannot say (an
// order between two numbers, a host that must parse, a value only this server issues) is listed in the
// schema's `x-rules` with the code and message of its refusal. docs/api-validation.md explains both, and
// the gateway's conformance test accepts a refusal of a request the document allows only when an
// `x-rules` entry names it.
import { z } from 'zod';

/** A rule as the document states it: in words, the code of its refusal, and its message ({name}: a part that varies). */
export interface StatedRule {
  rule: string;
  code: string;
  message: string;
}

const rulesOf = (schema: z.ZodType): StatedRule[] =>
  ((z.globalRegistry.get(schema) as { 'x-rules'?: StatedRule[] } | undefined)?.['x-rules'] ?? []).slice();

/** `schema` stating `rules` in its `x-rules`, after any it states already. */
export function withRules<T extends z.ZodType>(schema: T, rules: readonly StatedRule[]): T {
  return schema.meta({ 'x-rules': [...rulesOf(schema), ...rules] }) as T;
}

/** A stated rule's message with its {names} filled in: the exact text of the refusal. */
export function ruleMessage(rule: StatedRule, values: Record<string, string | number> = {}): string {
  return rule.message.replace(/\{([a-z_]+)\}/g, (whole, name: string) =>
    name in values ? String(values[name]) : whole,
  );
}

/**
 * An object schema that refuses a field given without the fields it needs (400 invalid_request, the
 * message naming the field) and states it as JSON Schema's dependentRequired: one rule, one place.
 */
export function dependentRequired<T extends z.ZodObject>(
  schema: T,
  needs: Record<string, { fields: readonly string[]; message: string }>,
): T {
  const known =
    (z.globalRegistry.get(schema) as { dependentRequired?: Record<string, string[]> } | undefined)?.dependentRequired ??
    {};
  return schema
    .superRefine((body: Record<string, unknown>, ctx) => {
      for (const [field, { fields, message }] of Object.entries(needs))
        if (body[field] !== undefined && fields.some((f) => body[f] === undefined))
          ctx.addIssue({ code: 'custom', path: [field], message });
    })
    .meta({
      dependentRequired: {
        ...known,
        ...Object.fromEntries(Object.entries(needs).map(([field, { fields }]) => [field, [...fields]])),
      },
    }) as T;
}
