// Accounts, sessions, API keys, usage and surface A's limits, all kept in Redis so every gateway
// replica sees the same state.
import { type RedisClient } from '@reelay/redis';
import { AccountStore } from './accounts.js';
import { deleteAccount, type AccountDeletionHook } from './deletion.js';
import { KnownDevices } from './devices.js';
import { EntryLimit } from './entry-limit.js';
import { IdentityIndex } from './identities.js';
import { KeyStore } from './keys.js';
import { SurfaceGate, type SurfaceLimits } from './limits.js';
import { LoginThrottle, type LoginThrottleOptions } from './login-throttle.js';
import { MailBudget } from './mail-budget.js';
import { SessionStore } from './sessions.js';
import { SignupLimit, type SignupLimitOptions } from './signup-limit.js';
import { proveByMail, type Proof, type ProofHook } from './proof.js';
import { OneTimeTokens } from './tokens.js';
import { UsageCounter } from './usage.js';
import type { Account } from './accounts.js';

export * from './accounts.js';
export * from './deletion.js';
export * from './devices.js';
export * from './entry-limit.js';
export * from './identities.js';
export * from './keys.js';
export * from './limits.js';
export * from './login-throttle.js';
export * from './mail-budget.js';
export * from './mail-messages.js';
export * from './mailer.js';
export * from './passkeys.js';
export * from './password.js';
export * from './proof.js';
// The gateway's other Redis limits (jobs per client) run their scripts the same way.
export * from './schemas.js';
export * from './sessions.js';
export * from './signup-limit.js';
export * from './social.js';
export * from './social-github.js';
export * from './social-oidc.js';
export * from './tokens.js';
export * from './usage.js';

/** The throttles of the entry points beside the password sign-in, by name. */
export interface EntryLimits {
  /** Forgotten-password mails: per requester, per requester and address, per address; the owner apart. */
  forgot: MailBudget;
  /** New confirmation links, asked by the signed-in account: per client address and per account. */
  verifyMail: EntryLimit;
  /** Token redemptions (verify, reset). */
  token: EntryLimit;
  /** Social sign-in starts and callbacks. */
  oauth: EntryLimit;
}

export interface AccountServices {
  accounts: AccountStore;
  sessions: SessionStore;
  keys: KeyStore;
  usage: UsageCounter;
  gate: SurfaceGate;
  tokens: OneTimeTokens;
  identities: IdentityIndex;
  /** Browsers the account was signed in on: they are recognised as its owner's (devices.ts). */
  devices: KnownDevices;
  limits: EntryLimits;
  /** Parts that keep data of an account (subscriptions, …) register here to be told of its deletion. */
  deletionHooks: AccountDeletionHook[];
  deleteAccount(account: Account): Promise<void>;
  /** Parts that keep ways to sign in anyone signed in could add (passkeys) register here (proof.ts). */
  proofHooks: ProofHook[];
  /** A mailed token proved the address (proof.ts): `reset` carries the new password's hash. */
  proveByMail(account: Account, how: { verify: true } | { reset: string }): Promise<Proof>;
}

export function createAccountServices(
  redis: RedisClient,
  options: {
    limits: SurfaceLimits;
    login?: LoginThrottleOptions;
    signup?: SignupLimitOptions;
    sessionTtlSeconds?: number;
  },
): AccountServices {
  const hour = 3600;
  const accounts = new AccountStore(
    redis,
    new LoginThrottle(redis, options.login),
    new SignupLimit(redis, options.signup),
  );
  const parts = {
    accounts,
    // A session acts for its account only while that account exists: deletion cannot be outrun.
    sessions: new SessionStore(redis, options.sessionTtlSeconds, undefined, async (session) => {
      return (await accounts.find(session.email))?.id === session.account_id;
    }),
    keys: new KeyStore(redis),
    usage: new UsageCounter(redis),
    identities: new IdentityIndex(redis),
    devices: new KnownDevices(redis),
    hooks: [] as AccountDeletionHook[],
    proofHooks: [] as ProofHook[],
  };
  return {
    ...parts,
    gate: new SurfaceGate(redis, options.limits),
    tokens: new OneTimeTokens(redis),
    limits: {
      forgot: new MailBudget(redis),
      verifyMail: new EntryLimit(redis, 'verify-mail', { perIp: 20, perAccount: 3, windowSeconds: hour }),
      token: new EntryLimit(redis, 'token', { perIp: 30, windowSeconds: 15 * 60 }),
      oauth: new EntryLimit(redis, 'oauth', { perIp: 60, windowSeconds: 15 * 60 }),
    },
    deletionHooks: parts.hooks,
    deleteAccount: (account) => deleteAccount(parts, account),
    proveByMail: (account, how) => proveByMail({ ...parts, hooks: parts.proofHooks }, account, how),
  };
}
