// The request and response schemas of the account and key routes; the gateway validates with them
// and its OpenAPI document is generated from them.
import { z } from 'zod';
import { withRules } from '@reelay/contracts';

export const MIN_PASSWORD_LENGTH = 10;
const MAX_PASSWORD_LENGTH = 1024;

/**
 * The e-mail addresses sign-up takes: a local part of letters, digits and _ ' + - in dot-separated
 * runs; a domain of two or more labels, each 1–63 letters, digits and hyphens that starts and ends with
 * a letter or digit, the last one 2+ letters. White space around it is allowed (it is trimmed). ECMA-262
 * with no flags, as the OpenAPI document states it.
 */
export const EMAIL_PATTERN =
  /^\s*[A-Za-z0-9_'+-]+(?:\.[A-Za-z0-9_'+-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}\s*$/;

/** E-mail addresses are compared trimmed and lower-cased: `Ann@Example.com ` signs in as ann@example.com. */
export const EmailSchema = z
  .string()
  .max(254)
  .regex(
    EMAIL_PATTERN,
    'Not an e-mail address this service takes (name@example.com; no label of the domain starts or ends with a hyphen).',
  )
  .trim()
  .toLowerCase()
  .describe('An e-mail address, at most 254 characters: compared trimmed and lower-cased');

export const SignupRequestSchema = z
  .object({
    email: EmailSchema,
    password: z
      .string()
      .min(MIN_PASSWORD_LENGTH, `Passwords need at least ${MIN_PASSWORD_LENGTH} characters.`)
      .max(MAX_PASSWORD_LENGTH),
  })
  .meta({ id: 'SignupRequest' });

// Sign-in does not judge the address's form: anything that is not an account is invalid_credentials.
export const LoginRequestSchema = z
  .object({
    email: z
      .string()
      .min(1)
      .max(254)
      .regex(/\S/, 'The e-mail address is empty.')
      .trim()
      .toLowerCase()
      .describe('The address signed up with (compared trimmed and lower-cased)'),
    password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
  })
  .meta({ id: 'LoginRequest' });

export const AccountSchema = z
  .object({
    email: z.string(),
    email_verified: z
      .boolean()
      .optional()
      .describe('Whether the address was confirmed (by a mailed link, a reset or a provider that vouches for it)'),
    has_password: z
      .boolean()
      .optional()
      .describe('False for an account made by social login that never set a password'),
    identities: z
      .array(z.object({ provider: z.string(), name: z.string(), email: z.string().nullable() }))
      .optional()
      .describe('Linked social sign-ins'),
  })
  .meta({ id: 'Account' });

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
      success_rate: z
        .number()
        .min(0)
        .max(1)
        .nullable()
        .describe('successful_requests / total_requests; null before the first request'),
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

export const SessionSchema = z
  .object({
    id: z.string().describe('A handle for this list; not the session secret'),
    current: z.boolean().describe('The session of this request'),
    device: z.string().describe('Browser and system, from the User-Agent at sign-in'),
    ip: z.string().nullable().describe('The client address of the last use'),
    created_at: z.iso.datetime().describe('When this session signed in'),
    last_seen_at: z.iso.datetime(),
  })
  .meta({ id: 'Session' });
export const SessionListEnvelopeSchema = ok(z.object({ sessions: z.array(SessionSchema) }), 'SessionListEnvelope');
export const SessionsEndedEnvelopeSchema = ok(z.object({ ended: z.number().int().min(0) }), 'SessionsEndedEnvelope');

export const DeleteAccountRequestSchema = z
  .object({
    password: z
      .string()
      .min(1)
      .max(MAX_PASSWORD_LENGTH)
      .optional()
      .describe('Needed unless this session signed in within the last 10 minutes'),
  })
  .meta({ id: 'DeleteAccountRequest' });

export const UsageDaySchema = z
  .object({
    date: z.iso.date().describe('The day, UTC'),
    requests: z.number().int().min(0),
    successful: z.number().int().min(0).describe('Requests answered with a 2xx status'),
  })
  .meta({ id: 'UsageDay' });
export const UsageEnvelopeSchema = ok(z.array(UsageDaySchema), 'UsageEnvelope');
/** ?days=N: 1 to 90, default 30. */
export const UsageDaysSchema = z
  .string()
  // 1 to 90 as the pattern states it, so the OpenAPI document says exactly what is refused.
  .regex(/^(?:[1-9]|[1-8][0-9]|90)$/, 'days must be a whole number from 1 to 90.')
  .transform(Number);

/** A mailed link's token is one this server issued, unused and unexpired: the document states it as a rule. */
export const MAILED_TOKEN_RULE = {
  rule: 'token is one this server mailed (after #verify= or #reset=), not used yet and not expired',
  code: 'invalid_request',
  message: 'This link is invalid, used already or expired; ask for a new one.',
} as const;
const TokenField = withRules(
  z.string().min(1).max(200).describe('The token from the mailed link (after #verify= or #reset=)'),
  [MAILED_TOKEN_RULE],
);
const NewPassword = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `Passwords need at least ${MIN_PASSWORD_LENGTH} characters.`)
  .max(MAX_PASSWORD_LENGTH);
export const VerifyRequestSchema = z.object({ token: TokenField }).meta({ id: 'VerifyRequest' });
export const ForgotPasswordRequestSchema = z
  .object({ email: z.string().max(254).regex(/\S/, 'The e-mail address is empty.').trim().toLowerCase() })
  .meta({ id: 'ForgotPasswordRequest' });
export const ResetPasswordRequestSchema = z
  .object({ token: TokenField, password: NewPassword })
  .meta({ id: 'ResetPasswordRequest' });
export const ChangePasswordRequestSchema = z
  .object({
    current_password: z
      .string()
      .min(1)
      .max(MAX_PASSWORD_LENGTH)
      .optional()
      .describe('Needed when the account has a password'),
    password: NewPassword,
  })
  .meta({ id: 'ChangePasswordRequest' });
export const VerifiedEnvelopeSchema = ok(
  z.object({ email: z.string(), email_verified: z.literal(true) }),
  'VerifiedEnvelope',
);

export const ProviderListEnvelopeSchema = ok(
  z.array(z.object({ id: z.string(), name: z.string() })),
  'ProviderListEnvelope',
);
export const LinkStartEnvelopeSchema = ok(
  z.object({ url: z.string().describe("The provider's authorization page: send the browser there") }),
  'LinkStartEnvelope',
);

export const PasskeySchema = z
  .object({
    id: z.string().describe('The credential id (base64url)'),
    name: z.string(),
    created_at: z.iso.datetime(),
    last_used_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Passkey' });
export const PasskeyEnvelopeSchema = ok(PasskeySchema, 'PasskeyEnvelope');
export const PasskeyListEnvelopeSchema = ok(z.object({ passkeys: z.array(PasskeySchema) }), 'PasskeyListEnvelope');
// Checked as sent, then trimmed: the length and the pattern are what the OpenAPI document states.
const PasskeyName = z
  .string()
  .max(64)
  .regex(/^\P{Cc}*[^\p{Cc}\s]\P{Cc}*$/u, 'Passkey names need a visible character and cannot hold control characters.')
  .trim();
/** A WebAuthn answer as the browser's PublicKeyCredential.toJSON() gives it; checked in depth by @simplewebauthn/server. */
const CredentialJson = z.looseObject({
  id: z.string().max(1400),
  rawId: z.string().max(1400),
  type: z.literal('public-key'),
  response: z.looseObject({ clientDataJSON: z.string().max(4096) }),
});
export const RegisterPasskeyRequestSchema = z
  .object({ name: PasskeyName.optional(), response: CredentialJson })
  .meta({ id: 'RegisterPasskeyRequest' });
export const PasskeyLoginRequestSchema = z.object({ response: CredentialJson }).meta({ id: 'PasskeyLoginRequest' });
export const RenamePasskeyRequestSchema = z.object({ name: PasskeyName }).meta({ id: 'RenamePasskeyRequest' });
export const WebauthnOptionsEnvelopeSchema = ok(z.looseObject({ challenge: z.string() }), 'WebauthnOptionsEnvelope');

export const AccountFeaturesEnvelopeSchema = ok(
  z.object({
    mail: z.boolean().describe('SMTP is configured: verification and password reset by mail'),
    passkeys: z.boolean().describe('PUBLIC_URL is set: passkeys can be registered and used'),
    providers: z.array(z.object({ id: z.string(), name: z.string() })).describe('As GET /account/providers'),
  }),
  'AccountFeaturesEnvelope',
);
