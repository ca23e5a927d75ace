// Passkeys under /account/passkeys: a signed-in account asks for creation options, registers the
// browser's answer (under a name), lists, renames and removes its passkeys; anyone asks for sign-in
// options and signs in with a passkey's answer. Every ceremony's challenge works once (see
// @reelay/accounts passkeys.ts). Routes that change state are same-origin; sign-in is throttled like
// the other entry points. Passkeys need PUBLIC_URL (the relying party id and origin).
import {
  PasskeyEnvelopeSchema,
  PasskeyListEnvelopeSchema,
  PasskeyLoginRequestSchema,
  RegisterPasskeyRequestSchema,
  RenamePasskeyRequestSchema,
  WebauthnOptionsEnvelopeSchema,
  AccountEnvelopeSchema,
  type AccountServices,
  type AuthenticationResponseJSON,
  type PasskeyStore,
  type RegistrationResponseJSON,
} from '@reelay/accounts';
import { ReelayError } from '@reelay/contracts';
import { parseBody, type RouteSpec } from '../http/route.js';
import { sameOrigin } from '../http/same-origin.js';
import { noStore, requireSession } from '../http/session.js';
import type { GatewayMetrics } from '../metrics.js';
import {
  accountOf,
  BAD_BODY,
  countRateLimited,
  CROSS_SITE,
  error,
  NOT_SIGNED_IN,
  ok,
  RATE_LIMITED,
  signedIn,
  startSession,
  UNAVAILABLE,
} from './account-common.js';

const PASSKEY_ID = { id: 'The credential id, as the list gives it' };
const NOT_FOUND = { 404: error('not_found: no passkey with this id in the account') };
const NO_RP = { 503: error('service_unavailable: PUBLIC_URL is not set, or Redis cannot be reached') };

export function passkeyRoutes(
  services: AccountServices,
  metrics: GatewayMetrics,
  passkeys: PasskeyStore | undefined,
): RouteSpec[] {
  const { sessions, accounts, limits } = services;
  const session = requireSession(sessions);
  const limited = countRateLimited(metrics, 'passkey');
  const store = (): PasskeyStore => {
    if (!passkeys)
      throw new ReelayError(
        'service_unavailable',
        'Passkeys need PUBLIC_URL to be set on this reelay; ask its operator.',
      );
    return passkeys;
  };
  return [
    {
      method: 'get',
      path: '/account/passkeys',
      tag: 'Account',
      summary: "The account's passkeys, oldest first",
      auth: 'session',
      responses: {
        200: { description: 'The passkeys', schema: PasskeyListEnvelopeSchema },
        ...NOT_SIGNED_IN,
        ...NO_RP,
      },
      before: [noStore, session],
      handler: async (req, res) => res.json(ok({ passkeys: await store().list(signedIn(req).accountId) })),
    },
    {
      method: 'post',
      path: '/account/passkeys/register/options',
      tag: 'Account',
      summary:
        'Options for navigator.credentials.create() (a discoverable credential, user verification required; valid 5 minutes, once)',
      auth: 'session',
      responses: {
        200: { description: 'PublicKeyCredentialCreationOptionsJSON', schema: WebauthnOptionsEnvelopeSchema },
        400: error('invalid_request: the account has 20 passkeys'),
        ...NOT_SIGNED_IN,
        ...CROSS_SITE,
        ...NO_RP,
      },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) => res.json(ok(await store().registrationOptions(accountOf(req)))),
    },
    {
      method: 'post',
      path: '/account/passkeys/register',
      tag: 'Account',
      summary: "Register the browser's answer to the creation options as a passkey of the account",
      auth: 'session',
      body: RegisterPasskeyRequestSchema,
      bodyExample: {
        name: 'Laptop',
        response: {
          id: 'AbCd',
          rawId: 'AbCd',
          type: 'public-key',
          response: { clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0', attestationObject: 'o2NmbXRkbm9uZQ' },
        },
      },
      responses: {
        201: { description: 'The new passkey', schema: PasskeyEnvelopeSchema },
        ...BAD_BODY,
        400: error(
          'invalid_request: a malformed body, the account has 20 passkeys already, or this passkey is registered already',
        ),
        401: error(
          'invalid_credentials: the answer does not check out (challenge, origin, signature, or the authenticator did not verify its user); not_signed_in',
        ),
        ...CROSS_SITE,
        ...NO_RP,
      },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) => {
        const { name, response } = parseBody(RegisterPasskeyRequestSchema, req.body);
        const account = accountOf(req);
        const passkey = await store().register(
          account,
          response as unknown as RegistrationResponseJSON,
          name ?? 'Passkey',
        );
        // Kept only if the session that asked still lives now that it is written: a proof of the
        // address that ended the session while this request was read must not be outrun (proof.ts).
        if (!(await sessions.get(signedIn(req).sessionId))) {
          await store().remove(account.id, passkey.id);
          throw new ReelayError(
            'not_signed_in',
            'You were signed out while adding the passkey; sign in and add it again.',
          );
        }
        res.status(201).json(ok(passkey));
      },
    },
    {
      method: 'post',
      path: '/account/passkeys/{id}/name',
      tag: 'Account',
      summary: 'Rename a passkey',
      auth: 'session',
      params: PASSKEY_ID,
      body: RenamePasskeyRequestSchema,
      bodyExample: { name: 'Work laptop' },
      responses: {
        200: { description: 'The passkey', schema: PasskeyEnvelopeSchema },
        ...BAD_BODY,
        ...NOT_SIGNED_IN,
        ...CROSS_SITE,
        ...NOT_FOUND,
        ...NO_RP,
      },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) => {
        const { name } = parseBody(RenamePasskeyRequestSchema, req.body);
        res.json(ok(await store().rename(signedIn(req).accountId, String(req.params.id), name)));
      },
    },
    {
      method: 'delete',
      path: '/account/passkeys/{id}',
      tag: 'Account',
      summary: 'Remove a passkey; refused when it is the last way to sign in',
      auth: 'session',
      params: PASSKEY_ID,
      responses: {
        204: { description: 'Removed' },
        400: error('invalid_request: the last way to sign in, or a malformed id'),
        ...NOT_SIGNED_IN,
        ...CROSS_SITE,
        ...NOT_FOUND,
        ...NO_RP,
      },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) => {
        const account = accountOf(req);
        const stored = await accounts.get(account);
        if (!stored.password_hash && !(stored.identities ?? []).length && (await store().count(account.id)) <= 1) {
          throw new ReelayError(
            'invalid_request',
            'This is the last way to sign in to this account: set a password (or add another passkey) first.',
          );
        }
        await store().remove(account.id, String(req.params.id));
        res.status(204).end();
      },
    },
    {
      method: 'post',
      path: '/account/passkeys/login/options',
      tag: 'Account',
      summary:
        'Options for navigator.credentials.get() to sign in with a passkey (user verification required; valid 5 minutes, once)',
      responses: {
        200: { description: 'PublicKeyCredentialRequestOptionsJSON', schema: WebauthnOptionsEnvelopeSchema },
        ...CROSS_SITE,
        ...RATE_LIMITED,
        ...NO_RP,
      },
      before: [noStore, sameOrigin],
      handler: async (req, res) => {
        await limits.oauth.charge(req.ip).catch(limited);
        res.json(ok(await store().authenticationOptions()));
      },
    },
    {
      method: 'post',
      path: '/account/passkeys/login',
      tag: 'Account',
      summary: 'Sign in with a passkey: the browser’s answer to the sign-in options (sets the reelay_session cookie)',
      body: PasskeyLoginRequestSchema,
      bodyExample: {
        response: {
          id: 'AbCd',
          rawId: 'AbCd',
          type: 'public-key',
          response: {
            clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0',
            authenticatorData: 'SZYN5YgO',
            signature: 'MEUCIQ',
            userHandle: 'YWNjdA',
          },
        },
      },
      responses: {
        200: { description: 'Signed in', schema: AccountEnvelopeSchema },
        ...BAD_BODY,
        401: error(
          'invalid_credentials: unknown passkey, or the answer does not check out (signature, challenge, no user verification)',
        ),
        ...CROSS_SITE,
        ...RATE_LIMITED,
        ...NO_RP,
        ...UNAVAILABLE,
      },
      before: [noStore, sameOrigin],
      handler: async (req, res) => {
        const { response } = parseBody(PasskeyLoginRequestSchema, req.body);
        await limits.oauth.charge(req.ip).catch(limited);
        const account = await store().authenticate(response as unknown as AuthenticationResponseJSON);
        // The passkey's account may have been deleted since (its passkeys go with it, but a race is cheap to close).
        const stored = await accounts.find(account.email);
        if (stored?.id !== account.id)
          throw new ReelayError('invalid_credentials', 'The passkey could not be verified; try again.');
        await startSession(services, req, res, account);
        res.json(ok({ email: account.email }));
      },
    },
  ];
}
