// Accounts and API keys under /account, for the web app: sign-up, sign-in and sign-out by session
// cookie, and the signed-in account's keys. Routes that change state refuse cross-site requests.
import type { Request, Response } from 'express';
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
import { ErrorEnvelopeSchema, ReelayError } from '@reelay/contracts';
import { parseBody, type RouteSpec } from '../http/route.js';
import { sameOrigin } from '../http/same-origin.js';
import { clearSessionCookie, noStore, readCookie, requireSession, SESSION_COOKIE, setSessionCookie, type SignedIn } from '../http/session.js';
import type { GatewayMetrics } from '../metrics.js';

const error = (description: string) => ({ description, schema: ErrorEnvelopeSchema });
const CROSS_SITE = { 403: error('cross_site_request: the Origin or Sec-Fetch-Site is another site') };
const NOT_SIGNED_IN = { 401: error('not_signed_in: no live session cookie') };
const KEY_NOT_FOUND = { 400: error('invalid_request: malformed percent-encoding in the id'), 404: error('not_found: no key with this id in the account') };
const BAD_BODY = { 400: error('invalid_request'), 413: error('payload_too_large: the body is over 16 KiB'), 415: error('unsupported_media_type') };
const KEY_ID = { id: 'The key id' };
const UNAVAILABLE = { 503: error('service_unavailable: Redis cannot be reached') };
/** The success envelope every route answers with. */
const ok = <T>(data: T) => ({ success: true as const, data });

function signedIn(req: Request): SignedIn {
  if (!req.signedIn) throw new Error('route registered without requireSession');
  return req.signedIn;
}

export function accountRoutes(services: AccountServices, metrics: GatewayMetrics): RouteSpec[] {
  const { accounts, sessions, keys } = services;
  const session = requireSession(sessions);

  /** Signs the client in with a fresh session id (any session it had before is ended). */
  async function startSession(req: Request, res: Response, account: Account): Promise<void> {
    await sessions.destroy(readCookie(req, SESSION_COOKIE));
    setSessionCookie(req, res, await sessions.create(account), sessions.ttlSeconds);
  }

  /** Counts a refusal for being over a limit in the metrics, then lets the error answer. */
  const countRateLimited = (surface: 'signup' | 'login') => (err: unknown): never => {
    if (err instanceof ReelayError && err.code === 'rate_limited') metrics.rateLimited.inc({ surface });
    throw err;
  };
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
        429: { ...error('rate_limited: too many sign-ups from this address'), headers: { 'Retry-After': 'Seconds to wait' } },
        ...UNAVAILABLE,
      },
      before: [noStore, sameOrigin],
      handler: async (req, res) => {
        const { email, password } = parseBody(SignupRequestSchema, req.body);
        const account = await accounts.signup(email, password, req.ip).catch(countRateLimited('signup'));
        await startSession(req, res, account);
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
      handler: (req, res) => res.json(ok({ email: signedIn(req).email })),
    },
    {
      method: 'get',
      path: '/account/keys',
      tag: 'Account',
      summary: "The account's API keys with their usage (never their secrets)",
      auth: 'session',
      responses: { 200: { description: 'The keys, oldest first', schema: ApiKeyListEnvelopeSchema }, ...NOT_SIGNED_IN, ...UNAVAILABLE },
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
        ...CROSS_SITE,
        409: error(`key_limit_reached: the account holds ${MAX_KEYS_PER_ACCOUNT} keys already; delete one first`),
        ...UNAVAILABLE,
      },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) => {
        const { name } = parseBody(CreateKeyRequestSchema, req.body);
        res.status(201).json(ok(await keys.create(signedIn(req).accountId, name)));
      },
    },
    ...(['disable', 'enable'] as const).map(
      (action): RouteSpec => ({
        method: 'post',
        path: `/account/keys/{id}/${action}`,
        tag: 'Account',
        summary: action === 'disable' ? 'Disable a key: it is kept, and refused with 403 api_key_disabled' : 'Enable a disabled key again',
        auth: 'session',
        params: KEY_ID,
        responses: { 200: { description: 'The key', schema: ApiKeyEnvelopeSchema }, ...NOT_SIGNED_IN, ...CROSS_SITE, ...KEY_NOT_FOUND, ...UNAVAILABLE },
        before: [noStore, sameOrigin, session],
        handler: async (req, res) => res.json(ok(await keys.setEnabled(signedIn(req).accountId, String(req.params.id), action === 'enable'))),
      }),
    ),
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
        await keys.delete(signedIn(req).accountId, String(req.params.id));
        res.status(204).end();
      },
    },
  ];
}
