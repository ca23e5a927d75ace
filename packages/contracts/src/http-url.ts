// The one stated form of a URL a client sends (a page to extract, a webhook to call): http or https,
// a host without credentials, a port from 1 to 65535 if any, at most MAX_URL_LENGTH characters, and a
// host URL parsing takes. The pattern and the rule are what the OpenAPI document shows; the routes
// enforce the same schema, and parseContentUrl then parses the URL itself.
import { z } from 'zod';
import { withRules } from './stated-rules.js';

export const MAX_URL_LENGTH = 2048;

/**
 * `http://` or `https://` in any case; a host holding no `@` (no credentials), no white space and no
 * `:` (an IPv6 address in brackets); an optional port from 1 to 65535 (leading zeros allowed, as URL
 * parsing reads them; empty is the scheme's default); then an optional path, query or fragment without
 * white space. ECMA-262 with no flags and no lookaround, so JSON Schema tools read it the same way.
 */
// `\[` inside a class: other regex dialects (Python's) read an unescaped `[` there as a nested set.
export const HTTP_URL_PATTERN =
  // eslint-disable-next-line no-useless-escape
  /^[Hh][Tt][Tt][Pp][Ss]?:\/\/(?:[^/?#@\s:\[\]]+|\[[^/?#@\s\]]*\])(?::(?:0*(?:[1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5]))?)?(?:[/?#]\S*)?$/;

/**
 * What the pattern cannot say: the host must be one URL parsing (WHATWG) takes. Checked with the
 * pattern, and stated in the document as a rule with the message of its refusal.
 */
export const HOST_PARSES_RULE = {
  rule: 'The URL parses (WHATWG URL): its host has no forbidden character (< > ^ | or a % not followed by two hex digits, …), is not all numbers unless it is an IPv4 address, and an IPv6 address in brackets is one',
  message: 'The URL is not an absolute http(s) URL.',
} as const;

/** A client's http(s) URL: refused as `code` (invalid_url by default) when its length or form is wrong. */
export function httpUrlSchema(code = 'invalid_url') {
  return withRules(
    z
      .string()
      .min(1, 'The URL is empty.')
      .max(MAX_URL_LENGTH, `The URL is longer than ${MAX_URL_LENGTH} characters.`)
      .regex(
        HTTP_URL_PATTERN,
        'The URL is not an absolute http(s) URL: a host without credentials, then a port from 1 to 65535 if any.',
      )
      .refine((s) => URL.canParse(s), { message: HOST_PARSES_RULE.message, params: { error_code: code } })
      .meta({ 'x-error-code': code }),
    [{ ...HOST_PARSES_RULE, code }],
  );
}
