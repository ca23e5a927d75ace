// Passkeys (WebAuthn) through @simplewebauthn/server: register several per account (discoverable
// credentials, so signing in needs no e-mail first), name and remove them, and sign in with one.
// A ceremony's challenge is 32 random bytes kept in Redis for 5 minutes under its hash and taken
// once when the answer comes back (GETDEL), so an answer cannot be replayed. The relying party id and
// origin come from PUBLIC_URL. The per-account limit is checked and taken on that index in one script
// (one key: one hash slot on a Redis Cluster), so concurrent registrations cannot pass it. A passkey signs in alone, without a password, so it must be two factors
// in one: the device and its user's PIN or biometrics. User verification is asked for and required
// (an answer without the UV flag is refused), at registration and at every sign-in. Each credential is `passkey:<credential id>` (its public key, counter,
// owner, name); each account keeps an index of its credential ids.
import { type RedisClient, luaScript } from '@reelay/redis';
import { guarded, guardedScript, sha256Hex } from './redis-calls.js';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { ReelayError } from '@reelay/contracts';
import type { Account } from './accounts.js';

export type { AuthenticationResponseJSON, RegistrationResponseJSON };

const CHALLENGE_TTL_SECONDS = 300;
/** A bound on passkeys per account, far above one per device. */
export const MAX_PASSKEYS_PER_ACCOUNT = 20;

const StoredPasskeySchema = z.object({
  account_id: z.string(),
  email: z.string(),
  public_key: z.string(),
  counter: z.number(),
  transports: z.array(z.string()).optional(),
  name: z.string(),
  created_at: z.number(),
  last_used_at: z.number().optional(),
});
type StoredPasskey = z.infer<typeof StoredPasskeySchema>;

export interface PasskeyView {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

const view = (id: string, p: StoredPasskey): PasskeyView => ({
  id,
  name: p.name,
  created_at: new Date(p.created_at).toISOString(),
  last_used_at: p.last_used_at ? new Date(p.last_used_at).toISOString() : null,
});
const record = (id: string) => `reelay:passkey:${sha256Hex(id)}`;
const index = (accountId: string) => `reelay:account-passkeys:${accountId}`;
const challengeKey = (purpose: string, challenge: string) =>
  `reelay:webauthn-challenge:${purpose}:${sha256Hex(challenge)}`;
const notFound = () => new ReelayError('not_found', 'No such passkey.');
const refused = () => new ReelayError('invalid_credentials', 'The passkey could not be verified; try again.');

// Takes a place in the account's index for a credential. KEYS: the index. ARGV: limit, credential id,
// the time (ms). 1 when taken, 0 when the account is full, -1 when the credential is on it already.
const TAKE_PLACE = luaScript(
  `if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then return -1 end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
return 1`,
  1,
);
/** A place is taken just before its record is written: one younger than this may be a registration under way. */
const PLACE_GRACE_MS = 60_000;
const full = () =>
  new ReelayError(
    'invalid_request',
    `An account can have at most ${MAX_PASSKEYS_PER_ACCOUNT} passkeys; remove one first.`,
  );
const registered = () => new ReelayError('invalid_request', 'This passkey is registered already.');

export interface RelyingParty {
  /** e.g. reelay.example.org (PUBLIC_URL's host name) */
  id: string;
  /** e.g. https://reelay.example.org */
  origin: string;
  name: string;
}

export function relyingParty(publicUrl: string): RelyingParty {
  const url = new URL(publicUrl);
  return { id: url.hostname, origin: url.origin, name: 'reelay' };
}

export class PasskeyStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly rp: RelyingParty,
  ) {}

  private async keepChallenge(purpose: string, challenge: string, owner: string): Promise<void> {
    await guarded(() => this.redis.set(challengeKey(purpose, challenge), owner, 'EX', CHALLENGE_TTL_SECONDS));
  }

  /** True when the challenge was issued for this purpose (and owner) and not used yet; it is used now. */
  private async takeChallenge(purpose: string, challenge: string, owner: string): Promise<boolean> {
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(challenge)) return false;
    const stored = await guarded(() => this.redis.getdel(challengeKey(purpose, challenge)));
    return stored !== null && stored === owner;
  }

  async count(accountId: string): Promise<number> {
    return guarded(() => this.redis.hlen(index(accountId)));
  }

  async list(accountId: string): Promise<PasskeyView[]> {
    const places = await guarded(() => this.redis.hgetall(index(accountId)));
    const ids = Object.keys(places);
    if (ids.length === 0) return [];
    const raws = await guarded(() => Promise.all(ids.map((id) => this.redis.get(record(id)))));
    // A place whose record never came (a registration that failed half-way) is given back.
    const stray = ids.filter((id, i) => !raws[i] && Date.now() - Number(places[id]) >= PLACE_GRACE_MS);
    if (stray.length) await guarded(() => this.redis.hdel(index(accountId), ...stray));
    return ids
      .flatMap((id, i) => {
        const parsed = raws[i] ? StoredPasskeySchema.safeParse(JSON.parse(raws[i]!)) : undefined;
        return parsed?.success && parsed.data.account_id === accountId ? [view(id, parsed.data)] : [];
      })
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /** Options for navigator.credentials.create(): a discoverable credential, its existing ones excluded. */
  async registrationOptions(account: Account): Promise<PublicKeyCredentialCreationOptionsJSON> {
    if ((await this.count(account.id)) >= MAX_PASSKEYS_PER_ACCOUNT) throw full();
    const existing = Object.keys(await guarded(() => this.redis.hgetall(index(account.id))));
    const options = await generateRegistrationOptions({
      rpName: this.rp.name,
      rpID: this.rp.id,
      userName: account.email,
      userID: new TextEncoder().encode(account.id),
      challenge: randomBytes(32),
      attestationType: 'none',
      excludeCredentials: existing.map((id) => ({ id })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    await this.keepChallenge('register', options.challenge, account.id);
    return options;
  }

  /** Checks a new credential against the challenge this account was given and stores it. */
  async register(account: Account, response: RegistrationResponseJSON, name: string): Promise<PasskeyView> {
    const verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: (challenge) => this.takeChallenge('register', challenge, account.id),
      expectedOrigin: this.rp.origin,
      expectedRPID: this.rp.id,
      requireUserVerification: true,
    }).catch(() => ({ verified: false as const }));
    if (!verification.verified) throw refused();
    const { credential } = verification.registrationInfo;
    const stored: StoredPasskey = {
      account_id: account.id,
      email: account.email,
      public_key: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: credential.transports,
      name,
      created_at: Date.now(),
    };
    // The place first (the limit, atomically), then the record (another slot on a cluster). A place
    // without its record is not listed and is released below or by a removal.
    const place = await guardedScript(
      this.redis,
      TAKE_PLACE,
      [index(account.id)],
      [MAX_PASSKEYS_PER_ACCOUNT, credential.id, Date.now()],
    );
    if (place === 0) throw full();
    if (place === -1) throw registered();
    const created = await guarded(() => this.redis.set(record(credential.id), JSON.stringify(stored), 'NX'));
    if (created !== 'OK') {
      await guarded(() => this.redis.hdel(index(account.id), credential.id));
      throw registered();
    }
    return view(credential.id, stored);
  }

  /** Options for navigator.credentials.get(): no allow-list, the authenticator offers its passkeys. */
  async authenticationOptions(): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const options = await generateAuthenticationOptions({
      rpID: this.rp.id,
      challenge: randomBytes(32),
      userVerification: 'required',
      allowCredentials: [],
    });
    await this.keepChallenge('login', options.challenge, '-');
    return options;
  }

  /** The account a signed assertion belongs to; invalid_credentials when anything does not check out. */
  async authenticate(response: AuthenticationResponseJSON): Promise<Account> {
    const id = typeof response?.id === 'string' ? response.id : '';
    const raw = /^[A-Za-z0-9_-]{1,1400}$/.test(id) ? await guarded(() => this.redis.get(record(id))) : null;
    const parsed = raw ? StoredPasskeySchema.safeParse(JSON.parse(raw)) : undefined;
    if (!parsed?.success) throw refused();
    const passkey = parsed.data;
    const verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: (challenge) => this.takeChallenge('login', challenge, '-'),
      expectedOrigin: this.rp.origin,
      expectedRPID: this.rp.id,
      credential: {
        id,
        publicKey: Buffer.from(passkey.public_key, 'base64url'),
        counter: passkey.counter,
        transports: passkey.transports as RegistrationResponseJSON['response']['transports'],
      },
      requireUserVerification: true,
    }).catch(() => ({ verified: false as const }));
    if (!verification.verified) throw refused();
    const updated = { ...passkey, counter: verification.authenticationInfo.newCounter, last_used_at: Date.now() };
    await guarded(() => this.redis.set(record(id), JSON.stringify(updated), 'XX'));
    return { id: passkey.account_id, email: passkey.email };
  }

  async rename(accountId: string, id: string, name: string): Promise<PasskeyView> {
    const passkey = await this.owned(accountId, id);
    const updated = { ...passkey, name };
    await guarded(() => this.redis.set(record(id), JSON.stringify(updated), 'XX'));
    return view(id, updated);
  }

  async remove(accountId: string, id: string): Promise<void> {
    await this.owned(accountId, id);
    await guarded(() => this.redis.del(record(id)));
    await guarded(() => this.redis.hdel(index(accountId), id));
  }

  async removeAll(accountId: string): Promise<void> {
    const ids = Object.keys(await guarded(() => this.redis.hgetall(index(accountId))));
    await guarded(() => Promise.all(ids.map((id) => this.redis.del(record(id)))));
    await guarded(() => this.redis.del(index(accountId)));
  }

  private async owned(accountId: string, id: string): Promise<StoredPasskey> {
    if (!(await guarded(() => this.redis.hexists(index(accountId), id)))) throw notFound();
    const raw = await guarded(() => this.redis.get(record(id)));
    const parsed = raw ? StoredPasskeySchema.safeParse(JSON.parse(raw)) : undefined;
    if (!parsed?.success || parsed.data.account_id !== accountId) throw notFound();
    return parsed.data;
  }
}
