// Address verification and passwords: confirm the address from a mailed link, ask for a new link,
// forget and reset a password by mail, and change it while signed in. Every answer is the same
// whether or not an address has an account; tokens are single use (see @reelay/accounts tokens.ts).
// Without SMTP the mail routes answer 503 mail_not_configured; changing a password still works.
import {
  AccountEnvelopeSchema,
  ChangePasswordRequestSchema,
  DEVICE_COOKIE,
  ForgotPasswordRequestSchema,
  hashPassword,
  MAILED_TOKEN_RULE,
  ResetPasswordRequestSchema,
  VerifiedEnvelopeSchema,
  VerifyRequestSchema,
  type AccountServices,
} from '@reelay/accounts';
import { ReelayError } from '@reelay/contracts';
import { parseBody, type RouteSpec } from '../http/route.js';
import { sameOrigin } from '../http/same-origin.js';
import { noStore, readCookie, requireSession } from '../http/session.js';
import type { GatewayMetrics } from '../metrics.js';
import type { AccountMail } from '../services/account-mail.js';
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
  UNAVAILABLE,
} from './account-common.js';
import { FRESH_SIGN_IN_MS } from './account-lifecycle.js';

const NO_MAIL = { 503: error('mail_not_configured: this deployment has no SMTP_URL; or service_unavailable') };
const BAD_TOKEN = () => new ReelayError('invalid_request', MAILED_TOKEN_RULE.message);

export function accountPasswordRoutes(
  services: AccountServices,
  metrics: GatewayMetrics,
  mail: AccountMail | undefined,
): RouteSpec[] {
  const { accounts, sessions, tokens, limits, devices } = services;
  const session = requireSession(sessions);
  const needMail = (): AccountMail => {
    if (!mail)
      throw new ReelayError(
        'mail_not_configured',
        'This reelay sends no mail (no SMTP_URL is configured); ask its operator.',
      );
    return mail;
  };
  const limited = countRateLimited.bind(undefined, metrics);
  return [
    {
      method: 'post',
      path: '/account/verify',
      tag: 'Account',
      summary:
        'Confirm the e-mail address with the token of the mailed link (works once, for 24 hours); the first confirmation signs out every session',
      description:
        'The first proof of an address removes what anyone could have added to the account before it: every session ends, passkeys are removed, and sign-in providers whose e-mail was not verified are unlinked.',
      body: VerifyRequestSchema,
      bodyExample: { token: 'q3Jt3mV0mJ6m0YV3cYQH6m0a0x9b3l3m2cUq1xJqXxE' },
      responses: {
        200: { description: 'The address is confirmed', schema: VerifiedEnvelopeSchema },
        ...BAD_BODY,
        ...CROSS_SITE,
        ...RATE_LIMITED,
        ...NO_MAIL,
      },
      before: [noStore, sameOrigin],
      handler: async (req, res) => {
        const { token } = parseBody(VerifyRequestSchema, req.body);
        needMail();
        await limits.token.charge(req.ip).catch(limited('token'));
        const data = await tokens.take('verify', token);
        if (!data) throw BAD_TOKEN();
        // The first proof of the address ends every session and removes the passkeys and unverified
        // provider identities anyone could have added before it (@reelay/accounts proof.ts).
        const { stored } = await services
          .proveByMail({ id: data.account_id, email: data.email }, { verify: true })
          .catch((err: unknown) => {
            if (err instanceof ReelayError && err.code === 'not_signed_in') throw BAD_TOKEN(); // deleted since
            throw err;
          });
        res.json(ok({ email: stored.email, email_verified: true as const }));
      },
    },
    {
      method: 'post',
      path: '/account/verify/resend',
      tag: 'Account',
      summary: 'Mail a new confirmation link to the signed-in account (at most 3 an hour)',
      auth: 'session',
      responses: {
        202: { description: 'A link is on its way (none when the address is confirmed already)' },
        ...NOT_SIGNED_IN,
        ...CROSS_SITE,
        ...RATE_LIMITED,
        ...NO_MAIL,
      },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) => {
        const sender = needMail();
        const account = accountOf(req);
        // A budget of its own: strangers' forgotten-password requests cannot use it up.
        await limits.verifyMail.charge(req.ip, account.email).catch(limited('verify'));
        if (!(await accounts.get(account)).email_verified) sender.verification(account);
        res.status(202).end();
      },
    },
    {
      method: 'post',
      path: '/account/password/forgot',
      tag: 'Account',
      summary: 'Mail a password reset link; the answer is the same whether or not the address has an account',
      body: ForgotPasswordRequestSchema,
      bodyExample: { email: 'ada@example.com' },
      responses: {
        202: { description: 'If the address has an account, a link is on its way' },
        ...BAD_BODY,
        ...CROSS_SITE,
        ...RATE_LIMITED,
        ...NO_MAIL,
      },
      before: [noStore, sameOrigin],
      handler: async (req, res) => {
        const { email } = parseBody(ForgotPasswordRequestSchema, req.body);
        const sender = needMail();
        // Charged for any address, known or not: being refused tells nothing either. A browser that signed
        // in to the address's account since the address was proven counts apart (@reelay/accounts
        // mail-budget.ts); the same lookups run whether or not the address has an account.
        const device = readCookie(req, DEVICE_COOKIE);
        const stored = await accounts.find(email);
        const known = await devices.known(stored?.id ?? 'none', device);
        const owner = known && stored?.email_verified === true;
        await limits.forgot
          .charge({ ip: req.ip, email, ownerDevice: owner ? device : undefined })
          .catch(limited('forgot'));
        sender.reset(email);
        res.status(202).end();
      },
    },
    {
      method: 'post',
      path: '/account/password/reset',
      tag: 'Account',
      summary: 'Set a new password with the token of the mailed link (works once, for 1 hour); signs out every session',
      description:
        'Also proves the address: sign-in providers that never vouched for this very address are unlinked, and on the first proof passkeys are removed too.',
      body: ResetPasswordRequestSchema,
      bodyExample: { token: 'q3Jt3mV0mJ6m0YV3cYQH6m0a0x9b3l3m2cUq1xJqXxE', password: 'a new long passphrase' },
      responses: {
        204: {
          description:
            'The password is set; every session has ended and providers that never vouched for the address are unlinked: sign in with it',
        },
        ...BAD_BODY,
        ...CROSS_SITE,
        ...RATE_LIMITED,
        ...NO_MAIL,
      },
      before: [noStore, sameOrigin],
      handler: async (req, res) => {
        const { token, password } = parseBody(ResetPasswordRequestSchema, req.body);
        const sender = needMail();
        await limits.token.charge(req.ip).catch(limited('token'));
        const data = await tokens.take('reset', token);
        if (!data) throw BAD_TOKEN();
        const account = { id: data.account_id, email: data.email };
        // The mailbox answered: the address is proven too. Every session ends, and every provider
        // identity that never vouched for the address is unlinked (@reelay/accounts proof.ts).
        await services.proveByMail(account, { reset: await hashPassword(password) }).catch((err: unknown) => {
          if (err instanceof ReelayError && err.code === 'not_signed_in') throw BAD_TOKEN(); // deleted since
          throw err;
        });
        sender.passwordChanged(account.email);
        res.status(204).end();
      },
    },
    {
      method: 'post',
      path: '/account/password',
      tag: 'Account',
      summary: 'Change (or first set) the password; other sessions are signed out and a notice is mailed',
      description:
        'Give `current_password` when the account has one; an account made by social login sets its first password within 10 minutes of signing in.',
      auth: 'session',
      body: ChangePasswordRequestSchema,
      bodyExample: { current_password: 'correct horse battery', password: 'a new long passphrase' },
      responses: {
        200: { description: 'The account, with its password set', schema: AccountEnvelopeSchema },
        ...BAD_BODY,
        401: error('invalid_credentials: the current password is wrong or missing; not_signed_in'),
        ...CROSS_SITE,
        ...RATE_LIMITED,
        ...UNAVAILABLE,
      },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) => {
        const { current_password: current, password } = parseBody(ChangePasswordRequestSchema, req.body);
        const account = accountOf(req);
        const stored = await accounts.get(account);
        if (stored.password_hash) {
          if (
            current === undefined ||
            !(await accounts.checkPassword(account, current, req.ip).catch(limited('login')))
          ) {
            throw new ReelayError('invalid_credentials', 'The current password is wrong.');
          }
        } else if (Date.now() - signedIn(req).signedInAt > FRESH_SIGN_IN_MS) {
          throw new ReelayError('invalid_credentials', 'Sign in again, then set a password within 10 minutes.');
        }
        await accounts.setPassword(account, password);
        await sessions.destroyAll(account.id, signedIn(req).sessionId);
        mail?.passwordChanged(account.email);
        res.json(ok({ email: account.email, has_password: true }));
      },
    },
  ];
}
