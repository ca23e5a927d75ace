// Accounts and API keys under /account, for the web app: sign-up, sign-in and sign-out by session
// cookie, and the signed-in account's keys. Routes that change state refuse cross-site requests.
import {
  AccountEnvelopeSchema,
  ApiKeyEnvelopeSchema,
  ApiKeyListEnvelopeSchema,
  CreatedApiKeyEnvelopeSchema,
  CreateKeyRequestSchema,
  LoginRequestSchema,
  MAX_KEYS_PER_ACCOUNT,
  SignupRequestSchema,
  type Account,
  type AccountServices,
} from '@reelay/accounts';
import { ReelayError } from '@reelay/contracts';
import { parseBody, type RouteSpec } from '../http/route.js';
import { sameOrigin } from '../http/same-origin.js';
import { clearSessionCookie, noStore, readCookie, requireSession, SESSION_COOKIE } from '../http/session.js';
import type { GatewayMetrics } from '../metrics.js';
import {
  accountOf,
  BAD_BODY,
  countRateLimited as countLimited,
  CROSS_SITE,
  error,
  KEY_ID,
  KEY_NOT_FOUND,
  NOT_SIGNED_IN,
  ok,
  signedIn,
  startSession as start,
  UNAVAILABLE,
} from './account-common.js';

/** What the account routes need beyond the stores: whether mail is on, and the social providers' names. */
export interface AccountRouteOptions {
  /** SMTP is configured: creating a key needs a verified address. */
  mailEnabled?: boolean;
  /** After a sign-up, e.g. to send the verification mail; failures are the hook's to log. */
  onSignup?: (account: Account) => void;
  providerName?: (id: string) => string;
}

export function accountRoutes(
  services: AccountServices,
  metrics: GatewayMetrics,
  options: AccountRouteOptions = {},
): RouteSpec[] {
  const { accounts, sessions, keys } = services;
  const session = requireSession(sessions);
  const startSession = start.bind(undefined, services);
  const countRateLimited = (surface: 'signup' | 'login') => countLimited(metrics, surface);
  return [
    {
      method: 'post',
      path: '/account/signup',
      tag: 'Account',
      summary: 'Create an account and sign in (sets the reelay_session cookie)',
      body: SignupRequestSchema,
      responses: {
        201: { description: 'Signed in', schema: AccountEnvelopeSchema },
        ...BAD_BODY,
        ...CROSS_SITE,
        409: error('email_taken'),
        429: {
          ...error('rate_limited: too many sign-ups from this address'),
          headers: { 'Retry-After': 'Seconds to wait' },
        },
        ...UNAVAILABLE,
      },
      before: [noStore, sameOrigin],
      handler: async (req, res) => {
        const { email, password } = parseBody(SignupRequestSchema, req.body);
        const account = await accounts.signup(email, password, req.ip).catch(countRateLimited('signup'));
        await startSession(req, res, account);
        options.onSignup?.(account);
        res.status(201).json(ok({ email: account.email }));
      },
    },
    {
      method: 'post',
      path: '/account/login',
      tag: 'Account',
      summary: 'Sign in (sets the reelay_session cookie); failures are slowed per account and per address',
      body: LoginRequestSchema,
      responses: {
        200: { description: 'Signed in', schema: AccountEnvelopeSchema },
        ...BAD_BODY,
        401: error('invalid_credentials: unknown e-mail address or wrong password (the same answer for both)'),
        ...CROSS_SITE,
        429: { ...error('rate_limited: too many failed sign-ins'), headers: { 'Retry-After': 'Seconds to wait' } },
        ...UNAVAILABLE,
      },
      before: [noStore, sameOrigin],
      handler: async (req, res) => {
        const { email, password } = parseBody(LoginRequestSchema, req.body);
        const account = await accounts.login(email, password, req.ip).catch(countRateLimited('login'));
        await startSession(req, res, account);
        res.json(ok({ email: account.email }));
      },
    },
    {
      method: 'post',
      path: '/account/logout',
      tag: 'Account',
      summary: 'Sign out: ends the session and clears its cookie',
      responses: { 204: { description: 'Signed out (also when there was no session)' }, ...CROSS_SITE, ...UNAVAILABLE },
      before: [noStore, sameOrigin],
      handler: async (req, res) => {
        await sessions.destroy(readCookie(req, SESSION_COOKIE));
        clearSessionCookie(req, res);
        res.status(204).end();
      },
    },
    {
      method: 'get',
      path: '/account/me',
      tag: 'Account',
      summary: 'The signed-in account',
      auth: 'session',
      responses: { 200: { description: 'Signed in', schema: AccountEnvelopeSchema }, ...NOT_SIGNED_IN, ...UNAVAILABLE },
      before: [noStore, session],
      handler: async (req, res) => {
        const stored = await accounts.get(accountOf(req));
        const identities = (stored.identities ?? []).map((i) => ({
          provider: i.provider,
          name: options.providerName?.(i.provider) ?? i.provider,
          email: i.email ?? null,
        }));
        res.json(
          ok({
            email: stored.email,
            email_verified: stored.email_verified ?? false,
            has_password: Boolean(stored.password_hash),
            identities,
          }),
        );
      },
    },
    {
      method: 'get',
      path: '/account/keys',
      tag: 'Account',
      summary: "The account's API keys with their usage (never their secrets)",
      auth: 'session',
      responses: {
        200: { description: 'The keys, oldest first', schema: ApiKeyListEnvelopeSchema },
        ...NOT_SIGNED_IN,
        ...UNAVAILABLE,
      },
      before: [noStore, session],
      handler: async (req, res) => res.json(ok({ keys: await keys.list(signedIn(req).accountId) })),
    },
    {
      method: 'post',
      path: '/account/keys',
      tag: 'Account',
      summary: 'Create an API key; the response holds its secret, shown this once',
      auth: 'session',
      body: CreateKeyRequestSchema,
      responses: {
        201: { description: 'The new key with its secret', schema: CreatedApiKeyEnvelopeSchema },
        ...BAD_BODY,
        ...NOT_SIGNED_IN,
        403: error(
          'cross_site_request, or email_not_verified: mail is configured and the address is not confirmed yet',
        ),
        409: error(`key_limit_reached: the account holds ${MAX_KEYS_PER_ACCOUNT} keys already; delete one first`),
        ...UNAVAILABLE,
      },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) => {
        const { name } = parseBody(CreateKeyRequestSchema, req.body);
        if (options.mailEnabled && !(await accounts.get(accountOf(req))).email_verified) {
          throw new ReelayError(
            'email_not_verified',
            'Confirm your e-mail address first: open the link we mailed you (or ask for a new one in the settings).',
          );
        }
        res.status(201).json(ok(await keys.create(signedIn(req).accountId, name)));
      },
    },
    ...(['disable', 'enable'] as const).map((action): RouteSpec => ({
      method: 'post',
      path: `/account/keys/{id}/${action}`,
      tag: 'Account',
      summary:
        action === 'disable'
          ? 'Disable a key: it is kept, and refused with 403 api_key_disabled'
          : 'Enable a disabled key again',
      auth: 'session',
      params: KEY_ID,
      responses: {
        200: { description: 'The key', schema: ApiKeyEnvelopeSchema },
        ...NOT_SIGNED_IN,
        ...CROSS_SITE,
        ...KEY_NOT_FOUND,
        ...UNAVAILABLE,
      },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) =>
        res.json(ok(await keys.setEnabled(signedIn(req).accountId, String(req.params.id), action === 'enable'))),
    })),
    {
      method: 'delete',
      path: '/account/keys/{id}',
      tag: 'Account',
      summary: 'Delete a key for good: it is refused with 401 invalid_api_key from now on',
      auth: 'session',
      params: KEY_ID,
      responses: { 204: { description: 'Deleted' }, ...NOT_SIGNED_IN, ...CROSS_SITE, ...KEY_NOT_FOUND, ...UNAVAILABLE },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) => {
        const hash = await keys.delete(signedIn(req).accountId, String(req.params.id));
        await services.usage.forget(hash);
        res.status(204).end();
      },
    },
  ];
}
