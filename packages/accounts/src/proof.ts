// "An address is proven before it is trusted" (DESIGN.md "Trust at the public edge"): what happens when
// a mailed token proves that whoever holds it reads the account's mailbox. Before that proof anyone
// could have made the account with someone else's address (a pre-hijacked account: Sudhodanan and
// Paverd, USENIX Security 2022) and added ways back in. So the first proof removes what could have
// been added by another hand: every session, every passkey, and the provider identities whose e-mail
// the provider did not verify. A password reset is also a proof, and more: it ends every session and
// removes every identity that never vouched for the account's address, however long the address has
// been proven. Both forget the browsers signed in so far (devices.ts). The password itself stays at a confirmation (a confirmed sign-up keeps working) and is
// replaced at a reset.
import type { Account, AccountStore, LinkedIdentity, StoredAccount } from './accounts.js';
import type { KnownDevices } from './devices.js';
import type { IdentityIndex } from './identities.js';
import type { SessionStore } from './sessions.js';

/** Called when an address is first proven by mail: remove what the part keeps that anyone could add (passkeys). */
export type ProofHook = (account: Account) => Promise<void>;

export interface ProofParts {
  accounts: AccountStore;
  identities: IdentityIndex;
  sessions: SessionStore;
  devices: KnownDevices;
  hooks: ProofHook[];
}

/** The identity's provider verified that very address: it vouches for the account. */
export function vouches(identity: LinkedIdentity, email: string): boolean {
  return identity.email_verified === true && identity.email === email;
}

export interface Proof {
  stored: StoredAccount;
  /** The address was not proven before this token. */
  first: boolean;
  /** Identities unlinked by it. */
  removed: LinkedIdentity[];
}

/**
 * Records the proof by a mailed token: `verify` (the confirmation link) or `reset` (the reset link,
 * with the new password's hash). The record changes in one compare-and-set; then the sessions end
 * (before the rest, so a request of a session that was checked before the proof and writes after it
 * finds its session gone), the removed identities are released, and the first proof runs the hooks.
 */
export async function proveByMail(
  parts: ProofParts,
  account: Account,
  how: { verify: true } | { reset: string },
): Promise<Proof> {
  let first = false;
  let removed: LinkedIdentity[] = [];
  const reset = 'reset' in how;
  const stored = await parts.accounts.update(account, (s) => {
    first = !s.email_verified;
    const keep = (i: LinkedIdentity) => (reset ? vouches(i, s.email) : !first || i.email_verified === true);
    const mine = s.identities ?? [];
    removed = mine.filter((i) => !keep(i));
    return {
      ...s,
      email_verified: true,
      identities: mine.filter(keep),
      ...(reset ? { password_hash: how.reset } : {}),
    };
  });
  if (first || reset) {
    await parts.sessions.destroyAll(account.id);
    // Browsers signed in so far are no longer the owner's to the mail budget (devices.ts).
    await parts.devices.forgetAll(account.id);
  }
  for (const identity of removed) await parts.identities.release(identity.provider, identity.subject, account);
  if (first) for (const hook of parts.hooks) await hook(account);
  return { stored, first, removed };
}
