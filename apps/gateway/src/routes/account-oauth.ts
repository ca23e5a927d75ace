// Social sign-in under /account/oauth: start (302 to the provider, with a flow cookie binding the
// flow to this browser), callback (checks, then sign-in, sign-up or link, then 302 back into the app),
// and link/unlink from the settings. The rules, each with a test that tries to break it:
// - state: the callback's state must equal the browser's flow cookie (compared in constant time) and
//   name a live flow, which is taken once, so a callback URL cannot be replayed or planted;
// - nonce and PKCE S256 are checked by openid-client against the flow's stored values;
// - an existing e-mail account is linked only when the provider says the address is verified and the
//   account's address is proven already (a mailed token, or a provider that vouched for it);
// - the browser is sent back only to a path of this app (safeReturnTo);
// - linking and unlinking change state, so they are same-origin POST/DELETE with a session;
// - an account keeps at least one way to sign in.
import { timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import {
  AccountFeaturesEnvelopeSchema,
  LinkStartEnvelopeSchema,
  ProviderListEnvelopeSchema,
  providerRefusal,
  safeReturnTo,
  SocialFlows,
  vouches,
  FLOW_TTL_SECONDS,
  type Account,
  type AccountServices,
  type LinkedIdentity,
  type SocialProfile,
  type SocialProvider,
  type StoredAccount,
} from '@reelay/accounts';
import { ReelayError } from '@reelay/contracts';
import type { Logger } from '@reelay/observability';
import type { RouteSpec } from '../http/route.js';
import { sameOrigin } from '../http/same-origin.js';
import { noStore, readCookie, requireSession, SESSION_COOKIE } from '../http/session.js';
import type { GatewayMetrics } from '../metrics.js';
import type { AccountMail } from '../services/account-mail.js';
import {
  accountOf,
  countRateLimited,
  CROSS_SITE,
  error,
  NOT_SIGNED_IN,
  ok,
  RATE_LIMITED,
  startSession,
  UNAVAILABLE,
} from './account-common.js';

export const FLOW_COOKIE = 'reelay_oauth';
const FLOW_COOKIE_PATH = '/account/oauth';
const PROVIDER_ID = { id: 'The provider id, as GET /account/providers lists it' };
const UNKNOWN_PROVIDER = { 404: error('not_found: no provider with this id') };

export interface OauthRouteDeps {
  services: AccountServices;
  providers: SocialProvider[];
  flows: SocialFlows;
  publicUrl: string;
  metrics: GatewayMetrics;
  logger: Logger;
  mail?: AccountMail;
  /** How many passkeys an account has (a way to sign in, like a password or a provider). */
  passkeyCount?: (accountId: string) => Promise<number>;
  /** What this deployment offers, for GET /account/features. */
  features?: { mail: boolean; passkeys: boolean };
}

function sameValue(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Why a callback was refused, for the log: the error's name and message, the provider's OAuth error
 * code and the claim that failed. Never the error's cause object, which may hold a token response.
 */
function describeRefusal(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  type Described = Error & { code?: unknown; error?: unknown; cause?: unknown };
  const parts: string[] = [];
  // openid-client wraps the check that failed (oauth4webapi's) as its cause: one level down is enough.
  for (
    let e: Described | undefined = err, depth = 0;
    e && depth < 2;
    e = e.cause instanceof Error ? (e.cause as Described) : undefined, depth++
  ) {
    parts.push(`${e.name}: ${e.message.slice(0, 200)}`);
    if (typeof e.code === 'string') parts.push(`code ${e.code}`);
    if (typeof e.error === 'string') parts.push(`provider error ${e.error.slice(0, 64)}`);
    const claim = (e.cause as { claim?: unknown } | undefined)?.claim;
    if (typeof claim === 'string') parts.push(`claim ${claim.slice(0, 32)}`);
  }
  return parts.join('; ');
}

const badFlow = () =>
  new ReelayError(
    'invalid_request',
    'This sign-in was not started in this browser, was used already or expired; start it again.',
  );

export function oauthRoutes(deps: OauthRouteDeps): RouteSpec[] {
  const { services, providers, flows, publicUrl, metrics, logger, mail } = deps;
  const { accounts, identities, sessions, limits } = services;
  const session = requireSession(sessions);
  const byId = new Map(providers.map((p) => [p.id, p]));
  const redirectUri = (p: SocialProvider) => `${publicUrl}/account/oauth/${p.id}/callback`;
  const limited = countRateLimited(metrics, 'oauth');

  function provider(req: Request): SocialProvider {
    const found = byId.get(String(req.params.id));
    if (!found) throw new ReelayError('not_found', 'No sign-in provider with this id.');
    return found;
  }

  /** Starts a flow and sets the cookie that binds it to this browser; returns the provider's page. */
  async function begin(
    req: Request,
    res: Response,
    p: SocialProvider,
    flow: { return_to: string; link_account_id?: string; link_email?: string },
  ): Promise<string> {
    await limits.oauth.charge(req.ip).catch(limited);
    const { state, nonce, verifier } = await flows.start({ provider: p.id, ...flow });
    const url = await p
      .authorizationUrl({ state, nonce, verifier, redirectUri: redirectUri(p) })
      .catch((err: unknown) => {
        if (err instanceof ReelayError) throw err;
        logger.warn(
          { provider: p.id, err: err instanceof Error ? err.message : String(err) },
          'identity provider discovery failed',
        );
        throw new ReelayError('upstream_error', `${p.name} cannot be reached for sign-in right now; try again later.`);
      });
    res.cookie(FLOW_COOKIE, state, {
      httpOnly: true,
      sameSite: 'lax',
      path: FLOW_COOKIE_PATH,
      secure: req.secure,
      maxAge: FLOW_TTL_SECONDS * 1000,
    });
    return url.href;
  }

  /** The verified profile of a callback; every check failure is one clear refusal. */
  async function finish(
    req: Request,
    p: SocialProvider,
    state: string,
    flow: { nonce: string; verifier: string },
  ): Promise<SocialProfile> {
    const current = new URL(req.originalUrl, publicUrl);
    try {
      return await p.finish(current, {
        state,
        nonce: flow.nonce,
        verifier: flow.verifier,
        redirectUri: redirectUri(p),
      });
    } catch (err) {
      if (err instanceof ReelayError) throw err;
      // The reason (not the response body or any token) goes to the log; the client gets one answer.
      logger.warn({ provider: p.id, err: describeRefusal(err) }, 'social sign-in refused');
      const refusal = providerRefusal(err);
      if (refusal)
        throw new ReelayError('invalid_credentials', `${p.name} did not sign you in (${refusal.slice(0, 64)}).`);
      throw new ReelayError('invalid_credentials', `The sign-in with ${p.name} could not be verified; start it again.`);
    }
  }

  /** The record with the profile as the provider's identity (one per provider); the one it replaces, if any. */
  function addIdentity(
    stored: StoredAccount,
    p: SocialProvider,
    profile: SocialProfile,
  ): { next: StoredAccount; replaced: LinkedIdentity[] } {
    const mine = stored.identities ?? [];
    const identity: LinkedIdentity = {
      provider: p.id,
      subject: profile.subject,
      email: profile.email,
      email_verified: profile.emailVerified,
      linked_at: Date.now(),
    };
    return {
      next: {
        ...stored,
        email_verified: stored.email_verified || vouches(identity, stored.email),
        identities: [...mine.filter((i) => i.provider !== p.id), identity],
      },
      replaced: mine.filter((i) => i.provider === p.id && i.subject !== profile.subject),
    };
  }

  /**
   * Links the profile to an account: the index first (one owner per identity), then the record; an
   * identity of the same provider it replaces is released, so it signs in no more. A link asked for by
   * a session (from the settings) is kept only if that session still lives once it is written: a proof
   * of the address that ended the session meanwhile must not be outrun (@reelay/accounts proof.ts).
   */
  async function link(account: Account, p: SocialProvider, profile: SocialProfile, sessionId?: string): Promise<void> {
    if (!(await identities.claim(p.id, profile.subject, account))) {
      throw new ReelayError('email_taken', `This ${p.name} account is linked to another reelay account already.`);
    }
    let replaced: LinkedIdentity[] = [];
    await accounts.update(account, (s) => {
      const change = addIdentity(s, p, profile);
      replaced = change.replaced;
      return change.next;
    });
    for (const old of replaced) await identities.release(old.provider, old.subject, account);
    if (sessionId !== undefined && !(await sessions.get(sessionId))) {
      await accounts
        .update(account, (s) => ({
          ...s,
          identities: (s.identities ?? []).filter((i) => !(i.provider === p.id && i.subject === profile.subject)),
        }))
        .catch(() => undefined); // deleted meanwhile: nothing to undo
      await identities.release(p.id, profile.subject, account);
      throw new ReelayError('not_signed_in', `You were signed out while linking ${p.name}; sign in and link it again.`);
    }
    mail?.providerLinked(account.email, p.name);
  }

  /** The account a sign-in callback is for: known identity, verified e-mail match, or a new account. */
  async function accountFor(p: SocialProvider, profile: SocialProfile): Promise<Account> {
    const owner = await identities.owner(p.id, profile.subject);
    if (owner) {
      const stored = await accounts.find(owner.email);
      const linked = stored?.identities?.some((i) => i.provider === p.id && i.subject === profile.subject);
      if (stored?.id === owner.id && linked) return owner;
      await identities.release(p.id, profile.subject, owner); // its account was deleted, or unlinked it
    }
    if (!profile.email)
      throw new ReelayError(
        'invalid_request',
        `${p.name} did not share an e-mail address; allow it to, or sign up with e-mail and link ${p.name} from the settings.`,
      );
    const existing = await accounts.find(profile.email);
    if (existing) {
      // Linking on an address the provider does not vouch for would let anyone who types a victim's
      // address at some provider take the victim's account.
      if (!profile.emailVerified) {
        throw new ReelayError(
          'email_taken',
          `An account with this e-mail address exists. Sign in with your password first, then link ${p.name} from the settings.`,
        );
      }
      // Nor into an account whose address nobody proved: whoever made it with this address (and a
      // password, passkeys, sessions of theirs) would share the real owner's account (pre-hijacking).
      if (!existing.email_verified) {
        throw new ReelayError(
          'email_taken',
          `An account with this e-mail address exists, but its address is not confirmed. Sign in with its password and link ${p.name} from the settings` +
            (mail
              ? '; if you did not make it, reset its password with "Forgot your password?" to make it yours.'
              : '.'),
        );
      }
      const account = { id: existing.id, email: existing.email };
      await link(account, p, profile);
      return account;
    }
    const identity: LinkedIdentity = {
      provider: p.id,
      subject: profile.subject,
      email: profile.email,
      email_verified: profile.emailVerified,
      linked_at: Date.now(),
    };
    const created = await accounts.createLinked(profile.email, identity, profile.emailVerified);
    if (!created)
      throw new ReelayError('email_taken', 'An account with this e-mail address was just made; sign in again.');
    const account = { id: created.id, email: created.email };
    if (!(await identities.claim(p.id, profile.subject, account))) {
      await accounts.remove(account);
      throw new ReelayError('email_taken', `This ${p.name} account is linked to another reelay account already.`);
    }
    if (!profile.emailVerified) mail?.verification(account);
    return account;
  }

  /** The provider sent the browser back: check the flow, then sign in (making the account) or link. */
  async function callback(req: Request, res: Response): Promise<void> {
    const p = provider(req);
    await limits.oauth.charge(req.ip).catch(limited);
    const state = typeof req.query.state === 'string' ? req.query.state : '';
    const cookie = readCookie(req, FLOW_COOKIE) ?? '';
    res.clearCookie(FLOW_COOKIE, { httpOnly: true, sameSite: 'lax', path: FLOW_COOKIE_PATH, secure: req.secure });
    if (!state || !cookie || !sameValue(state, cookie)) throw badFlow();
    const flow = await flows.take(state);
    if (!flow || flow.provider !== p.id) throw badFlow();
    if (flow.link_account_id) {
      // Linking: the browser must still be signed in as the account that asked.
      const current = await sessions.get(readCookie(req, SESSION_COOKIE));
      if (current?.account_id !== flow.link_account_id) throw badFlow();
      const profile = await finish(req, p, state, flow);
      const owner = await identities.owner(p.id, profile.subject);
      if (owner && owner.id !== current.account_id)
        throw new ReelayError('email_taken', `This ${p.name} account is linked to another reelay account already.`);
      await link({ id: current.account_id, email: current.email }, p, profile, readCookie(req, SESSION_COOKIE));
      res.redirect(302, safeReturnTo(flow.return_to, publicUrl));
      return;
    }
    const profile = await finish(req, p, state, flow);
    const account = await accountFor(p, profile);
    await startSession(services, req, res, account);
    // Judged again on the way out: a flow stored by an older version went by the older rule.
    res.redirect(302, safeReturnTo(flow.return_to, publicUrl));
  }

  return [
    {
      method: 'get',
      path: '/account/providers',
      tag: 'Account',
      summary: 'The social sign-in providers this deployment offers',
      responses: {
        200: {
          description: 'Providers, in the order configured',
          schema: ProviderListEnvelopeSchema,
          example: { success: true, data: [{ id: 'github', name: 'GitHub' }] },
        },
      },
      handler: (_req, res) => res.json(ok(providers.map((p) => ({ id: p.id, name: p.name })))),
    },
    {
      method: 'get',
      path: '/account/features',
      tag: 'Account',
      summary:
        'What this deployment offers for accounts (mail, passkeys, sign-in providers), so a client shows only what works',
      responses: {
        200: {
          description: 'The features',
          schema: AccountFeaturesEnvelopeSchema,
          example: {
            success: true,
            data: { mail: true, passkeys: true, providers: [{ id: 'github', name: 'GitHub' }] },
          },
        },
      },
      handler: (_req, res) =>
        res.json(
          ok({
            mail: deps.features?.mail ?? false,
            passkeys: deps.features?.passkeys ?? false,
            providers: providers.map((p) => ({ id: p.id, name: p.name })),
          }),
        ),
    },
    {
      method: 'get',
      path: '/account/oauth/{id}/start',
      tag: 'Account',
      summary: 'Sign in with a provider: 302 to its page (authorization code with PKCE S256, state and nonce)',
      params: PROVIDER_ID,
      query: {
        return_to: 'A path of this app to land on afterwards (default /settings/api-keys); anything else is ignored',
      },
      responses: {
        302: {
          description: "To the provider's authorization page; sets the reelay_oauth flow cookie",
          headers: { Location: 'The provider page' },
        },
        ...UNKNOWN_PROVIDER,
        ...RATE_LIMITED,
        502: error('upstream_error: the provider cannot be reached'),
        ...UNAVAILABLE,
      },
      before: [noStore],
      handler: async (req, res) => {
        const p = provider(req);
        res.redirect(302, await begin(req, res, p, { return_to: safeReturnTo(req.query.return_to, publicUrl) }));
      },
    },
    {
      method: 'get',
      path: '/account/oauth/{id}/callback',
      tag: 'Account',
      summary:
        'Where the provider sends the browser back: signs in (making the account on first use) or links, then 302 into the app',
      params: PROVIDER_ID,
      query: { code: 'From the provider', state: 'From the provider; must match this browser’s flow' },
      responses: {
        302: {
          description: 'Signed in (or linked): to the return_to path',
          headers: { Location: 'A path of this app' },
        },
        303: {
          description:
            'A browser (HTML preferred over JSON) whose sign-in failed: back to the settings page, the reason in the fragment (#sign-in-error=CODE&message=…); other clients get the error envelope below',
          headers: { Location: '/settings/api-keys#sign-in-error=…' },
        },
        400: error(
          'invalid_request: no flow of this browser, state mismatch, used or expired flow, or no e-mail address shared',
        ),
        401: error(
          'invalid_credentials: the provider refused, or the code, PKCE verifier, nonce or ID token did not check out; not_signed_in: a link whose session was signed out meanwhile',
        ),
        ...UNKNOWN_PROVIDER,
        409: error(
          'email_taken: an account with this e-mail address exists and the provider does not vouch for the address, or the account’s address is not confirmed yet (by a mailed link or reset): sign in with the password and link the provider from the settings; or the provider’s account is linked to another account',
        ),
        ...RATE_LIMITED,
        502: error('upstream_error: the provider cannot be reached'),
        ...UNAVAILABLE,
      },
      before: [noStore],
      handler: async (req, res) => {
        try {
          await callback(req, res);
        } catch (err) {
          // A person's browser lands back in the app with the reason, never on a page of raw JSON; the
          // fragment stays in the browser, so the reason reaches no server log.
          if (!(err instanceof ReelayError) || req.accepts(['application/json', 'text/html']) !== 'text/html')
            throw err;
          res.redirect(
            303,
            `/settings/api-keys#${new URLSearchParams({ 'sign-in-error': err.code, message: err.message })}`,
          );
        }
      },
    },
    {
      method: 'post',
      path: '/account/oauth/{id}/link',
      tag: 'Account',
      summary: 'Link a provider to the signed-in account: answers the provider page to send the browser to',
      auth: 'session',
      params: PROVIDER_ID,
      responses: {
        200: { description: 'Send the browser to data.url', schema: LinkStartEnvelopeSchema },
        ...NOT_SIGNED_IN,
        ...CROSS_SITE,
        ...UNKNOWN_PROVIDER,
        ...RATE_LIMITED,
        502: error('upstream_error: the provider cannot be reached'),
        ...UNAVAILABLE,
      },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) => {
        const p = provider(req);
        const account = accountOf(req);
        res.json(
          ok({
            url: await begin(req, res, p, {
              return_to: '/settings/api-keys',
              link_account_id: account.id,
              link_email: account.email,
            }),
          }),
        );
      },
    },
    {
      method: 'delete',
      path: '/account/oauth/{id}',
      tag: 'Account',
      summary: 'Unlink a provider; refused when it is the account’s last way to sign in',
      auth: 'session',
      params: PROVIDER_ID,
      responses: {
        204: { description: 'Unlinked (also when it was not linked)' },
        400: error('invalid_request: it is the last way to sign in; set a password first'),
        ...NOT_SIGNED_IN,
        ...CROSS_SITE,
        ...UNAVAILABLE,
      },
      before: [noStore, sameOrigin, session],
      handler: async (req, res) => {
        const account = accountOf(req);
        const id = String(req.params.id);
        let removed: StoredAccount['identities'] = [];
        const hasPasskey = ((await deps.passkeyCount?.(account.id)) ?? 0) > 0;
        await accounts.update(account, (s) => {
          const mine = s.identities ?? [];
          removed = mine.filter((i) => i.provider === id);
          const left = mine.filter((i) => i.provider !== id);
          if (removed.length && !s.password_hash && left.length === 0 && !hasPasskey) {
            throw new ReelayError(
              'invalid_request',
              'This is the last way to sign in to this account: set a password (or link another provider) first.',
            );
          }
          return { ...s, identities: left };
        });
        for (const identity of removed ?? []) await identities.release(identity.provider, identity.subject, account);
        res.status(204).end();
      },
    },
  ];
}
