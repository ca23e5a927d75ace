// Deleting an account removes everything that hangs off it, in an order that shuts doors first: its
// keys (they answer 401 at once on every gateway, since each lookup reads Redis), its sessions, its
// record (no new sign-in), then its social identities, its usage history, its known browsers and
// whatever other parts registered a hook (subscriptions, passkeys).
import type { Account, AccountStore } from './accounts.js';
import type { KnownDevices } from './devices.js';
import type { IdentityIndex } from './identities.js';
import type { KeyStore } from './keys.js';
import type { SessionStore } from './sessions.js';
import type { UsageCounter } from './usage.js';

/** Called with an account being deleted, after its keys, sessions and record are gone. */
export type AccountDeletionHook = (account: Account) => Promise<void>;

export interface DeletionParts {
  accounts: AccountStore;
  keys: KeyStore;
  sessions: SessionStore;
  usage: UsageCounter;
  identities: IdentityIndex;
  devices: KnownDevices;
  hooks: AccountDeletionHook[];
}

export async function deleteAccount(parts: DeletionParts, account: Account): Promise<void> {
  const stored = await parts.accounts.get(account);
  const keyHashes = await parts.keys.deleteAll(account.id);
  await parts.sessions.destroyAll(account.id);
  await parts.accounts.remove(account);
  for (const identity of stored.identities ?? [])
    await parts.identities.release(identity.provider, identity.subject, account);
  for (const hash of keyHashes) await parts.usage.forget(hash);
  await parts.devices.forgetAll(account.id);
  for (const hook of parts.hooks) await hook(account);
}
