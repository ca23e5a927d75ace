// The one stated form of a URL a client sends (a page to extract, a webhook to call): http or https,
// a host without credentials, at most MAX_URL_LENGTH characters. The pattern is what the OpenAPI
// document shows; the routes enforce the same schema, and parseContentUrl then parses the URL itself.
import { z } from 'zod';

export const MAX_URL_LENGTH = 2048;

/**
 * `http://` or `https://` in any case, a host (with an optional port) holding no `@` (no credentials)
 * and no white space, then an optional path, query or fragment without white space. ECMA-262 with no
 * flags, so JSON Schema tools read it the same way.
 */
export const HTTP_URL_PATTERN = /^[Hh][Tt][Tt][Pp][Ss]?:\/\/[^/?#@\s]+(?:[/?#]\S*)?$/;

/** A client's http(s) URL: refused as `code` (invalid_url by default) when its length or form is wrong. */
export function httpUrlSchema(code = 'invalid_url') {
  return z
    .string()
    .min(1, 'The URL is empty.')
    .max(MAX_URL_LENGTH, `The URL is longer than ${MAX_URL_LENGTH} characters.`)
    .regex(HTTP_URL_PATTERN, 'The URL is not an absolute http(s) URL without credentials.')
    .meta({ 'x-error-code': code });
}
