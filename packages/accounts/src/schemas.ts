// The request and response schemas of the account and key routes; the gateway validates with them
// and its OpenAPI document is generated from them.
import { z } from 'zod';

export const MIN_PASSWORD_LENGTH = 10;
const MAX_PASSWORD_LENGTH = 1024;

/** E-mail addresses are compared trimmed and lower-cased: `Ann@Example.com ` signs in as ann@example.com. */
export const EmailSchema = z.string().trim().toLowerCase().max(254).pipe(z.email());

export const SignupRequestSchema = z
  .object({
    email: EmailSchema,
    password: z.string().min(MIN_PASSWORD_LENGTH, `Passwords need at least ${MIN_PASSWORD_LENGTH} characters.`).max(MAX_PASSWORD_LENGTH),
  })
  .meta({ id: 'SignupRequest' });

// Sign-in does not judge the address's form: anything that is not an account is invalid_credentials.
export const LoginRequestSchema = z
  .object({ email: z.string().trim().toLowerCase().min(1).max(254), password: z.string().min(1).max(MAX_PASSWORD_LENGTH) })
  .meta({ id: 'LoginRequest' });

export const AccountSchema = z.object({ email: z.string() }).meta({ id: 'Account' });

export const CreateKeyRequestSchema = z
  .object({
    name: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .regex(/^\P{Cc}+$/u, 'Key names cannot hold control characters.')
      .describe('A label, e.g. the application that uses the key'),
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
