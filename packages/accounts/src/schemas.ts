// The request and response schemas of the account and key routes; the gateway validates with them
// and its OpenAPI document is generated from them.
import { z } from 'zod';

export const MIN_PASSWORD_LENGTH = 10;
const MAX_PASSWORD_LENGTH = 1024;

/**
 * The e-mail addresses sign-up takes: a local part of letters, digits and _ ' + - in dot-separated
 * runs; a domain of two or more labels, each 1–63 letters, digits and hyphens that starts and ends with
 * a letter or digit, the last one 2+ letters. White space around it is allowed (it is trimmed). ECMA-262
 * with no flags, as the OpenAPI document states it.
 */
export const EMAIL_PATTERN = /^\s*[A-Za-z0-9_'+-]+(?:\.[A-Za-z0-9_'+-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}\s*$/;

/** E-mail addresses are compared trimmed and lower-cased: `Ann@Example.com ` signs in as ann@example.com. */
export const EmailSchema = z
  .string()
  .max(254)
  .regex(EMAIL_PATTERN, 'Not an e-mail address this service takes (name@example.com; no label of the domain starts or ends with a hyphen).')
  .trim()
  .toLowerCase()
  .describe('An e-mail address, at most 254 characters: compared trimmed and lower-cased');

export const SignupRequestSchema = z
  .object({
    email: EmailSchema,
    password: z.string().min(MIN_PASSWORD_LENGTH, `Passwords need at least ${MIN_PASSWORD_LENGTH} characters.`).max(MAX_PASSWORD_LENGTH),
  })
  .meta({ id: 'SignupRequest' });

// Sign-in does not judge the address's form: anything that is not an account is invalid_credentials.
export const LoginRequestSchema = z
  .object({
    email: z.string().min(1).max(254).regex(/\S/, 'The e-mail address is empty.').trim().toLowerCase().describe('The address signed up with (compared trimmed and lower-cased)'),
    password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
  })
  .meta({ id: 'LoginRequest' });

export const AccountSchema = z.object({ email: z.string() }).meta({ id: 'Account' });

export const CreateKeyRequestSchema = z
  .object({
    name: z
      .string()
      .max(100)
      // At least one character that is neither white space nor a control character, and no control character.
      .regex(/^\P{Cc}*[^\p{Cc}\s]\P{Cc}*$/u, 'Key names need a visible character and cannot hold control characters.')
      .trim()
      .describe('A label, e.g. the application that uses the key: at most 100 characters, trimmed'),
  })
  .meta({ id: 'CreateKeyRequest' });

export const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().describe('The first 8 characters of the secret, e.g. rly_AbCd'),
    enabled: z.boolean(),
    created_at: z.iso.datetime(),
    last_used_at: z.iso.datetime().nullable(),
    usage: z.object({
      total_requests: z.number().int(),
      successful_requests: z.number().int().describe('Requests answered with a 2xx status'),
      success_rate: z.number().min(0).max(1).nullable().describe('successful_requests / total_requests; null before the first request'),
    }),
  })
  .meta({ id: 'ApiKey' });

export const CreatedApiKeySchema = ApiKeySchema.extend({
  secret: z.string().describe('The key, shown only in this response: send it as X-API-Key'),
}).meta({ id: 'CreatedApiKey' });

export const ApiKeyListSchema = z.object({ keys: z.array(ApiKeySchema) }).meta({ id: 'ApiKeyList' });

// Success bodies of the account routes: the same {"success": true, "data": …} envelope as every route.
const ok = <T extends z.ZodType>(data: T, id: string) => z.object({ success: z.literal(true), data }).meta({ id });
export const AccountEnvelopeSchema = ok(AccountSchema, 'AccountEnvelope');
export const ApiKeyEnvelopeSchema = ok(ApiKeySchema, 'ApiKeyEnvelope');
export const CreatedApiKeyEnvelopeSchema = ok(CreatedApiKeySchema, 'CreatedApiKeyEnvelope');
export const ApiKeyListEnvelopeSchema = ok(ApiKeyListSchema, 'ApiKeyListEnvelope');
