// The signed-in account's sessions (list them, end the others), its deletion, and each key's usage
// day by day. Deletion asks for the password, or a sign-in within the last 10 minutes (an account
// made by social login has no password: it signs in again).
import {
  DeleteAccountRequestSchema,
  MAX_USAGE_DAYS,
  SessionListEnvelopeSchema,
  SessionsEndedEnvelopeSchema,
  UsageDaysSchema,
  UsageEnvelopeSchema,
  type AccountServices,
} from '@reelay/accounts';
import { ReelayError } from '@reelay/contracts';
import { parseBody, type RouteSpec } from '../http/route.js';
import { sameOrigin } from '../http/same-origin.js';
import { clearSessionCookie, noStore, requireSession } from '../http/session.js';
import type { GatewayMetrics } from '../metrics.js';
import {
  accountOf,
  BAD_BODY,
  countRateLimited,
  CROSS_SITE,
  error,
  KEY_ID,
  KEY_NOT_FOUND,
  NOT_SIGNED_IN,
  ok,
  RATE_LIMITED,
  signedIn,
  UNAVAILABLE,
} from './account-common.js';

/** How recent a sign-in must be to delete the account without the password. */
export const FRESH_SIGN_IN_MS = 10 * 60_000;
const DEFAULT_USAGE_DAYS = 30;

export function accountLifecycleRoutes(services: AccountServices, metrics: GatewayMetrics): RouteSpec[] {
  const { sessions, accounts, keys, usage } = services;
  const session = requireSession(sessions);
  return [
    {
      method: 'get',
      path: '/account/sessions',
      tag: 'Account',
      summary: "The account's signed-in sessions: device, address, when each signed in and was last seen",
      auth: 'session',
      responses: {
        200: { description: 'The sessions, most recently used first', schema: SessionListEnvelopeSchema },
        ...NOT_SIGNED_IN,
        ...UNAVAILABLE,
      },
      before: [noStore, session],
      handler: async (req, res) => {
        const { accountId, sessionId } = signedIn(req);
        res.json(ok({ sessions: await sessions.list(accountId, sessionId) }));
      },
    },
    {
      method: 'delete',
      path: '/account/sessions',
      tag: 'Account',
      summary: 'Sign out everywhere else: ends every session of the account but this one',
      auth: 'session',
      responses: {
        200: { description: 'How many sessions ended', schema: SessionsEndedEnvelopeSchema },
        ...NOT_SIGNED_IN,
        ...CROSS_SITE,
        ...UNAVAILABLE,
      },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) => {
        const { accountId, sessionId } = signedIn(req);
        res.json(ok({ ended: await sessions.destroyAll(accountId, sessionId) }));
      },
    },
    {
      method: 'delete',
      path: '/account',
      tag: 'Account',
      summary: 'Delete the account with its keys (refused at once), sessions, sign-in links and usage',
      description:
        'Confirm with `password`, or sign in again first: a session that signed in within the last 10 minutes needs none. The body may be left out then.',
      auth: 'session',
      body: DeleteAccountRequestSchema,
      bodyExample: { password: 'correct horse battery' },
      responses: {
        204: { description: 'Deleted; the session cookie is cleared' },
        ...BAD_BODY,
        401: error(
          'invalid_credentials: wrong password, or none and the sign-in is older than 10 minutes; not_signed_in',
        ),
        ...CROSS_SITE,
        ...RATE_LIMITED,
        ...UNAVAILABLE,
      },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) => {
        const { password } = parseBody(DeleteAccountRequestSchema, req.body ?? {});
        const account = accountOf(req);
        if (password !== undefined) {
          const valid = await accounts
            .checkPassword(account, password, req.ip)
            .catch(countRateLimited(metrics, 'login'));
          if (!valid) throw new ReelayError('invalid_credentials', 'The password is wrong.');
        } else if (Date.now() - signedIn(req).signedInAt > FRESH_SIGN_IN_MS) {
          throw new ReelayError(
            'invalid_credentials',
            'Confirm with your password, or sign in again and delete the account within 10 minutes.',
          );
        }
        await services.deleteAccount(account);
        clearSessionCookie(req, res);
        res.status(204).end();
      },
    },
    {
      method: 'get',
      path: '/account/keys/{id}/usage',
      tag: 'Account',
      summary: "A key's requests day by day (UTC), oldest first, one row per day including days without any",
      auth: 'session',
      params: KEY_ID,
      query: {
        days: {
          description: `How many days back, today included: 1 to ${MAX_USAGE_DAYS} (default ${DEFAULT_USAGE_DAYS})`,
          schema: UsageDaysSchema,
        },
      },
      responses: {
        200: { description: 'One row per day', schema: UsageEnvelopeSchema },
        ...NOT_SIGNED_IN,
        ...KEY_NOT_FOUND,
        400: error(
          `invalid_request: days is not a whole number from 1 to ${MAX_USAGE_DAYS}, or given twice; or malformed percent-encoding in the id`,
        ),
        ...UNAVAILABLE,
      },
      before: [noStore, session],
      handler: async (req, res) => {
        const raw = req.query.days;
        if (raw !== undefined && typeof raw !== 'string')
          throw new ReelayError('invalid_request', 'days must be given once.');
        const parsed =
          raw === undefined ? { success: true as const, data: DEFAULT_USAGE_DAYS } : UsageDaysSchema.safeParse(raw);
        if (!parsed.success)
          throw new ReelayError('invalid_request', `days must be a whole number from 1 to ${MAX_USAGE_DAYS}.`);
        const hash = await keys.hashOf(signedIn(req).accountId, String(req.params.id));
        res.json(ok(await usage.history(hash, parsed.data)));
      },
    },
  ];
}
