// Accounts: sign-up and sign-in by e-mail and password. An account is one Redis string keyed by the
// hash of its normalised e-mail, created with SET NX so two sign-ups for one address cannot both win.
// Sign-in answers the same, in about the same time, for an unknown address and a wrong password.
// An account made by social login has no password until a reset sets one; changes to a record are
// compare-and-set (a Lua script), so two concurrent changes cannot silently undo each other.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ReelayError } from '@reelay/contracts';
import type { LoginThrottle } from './login-throttle.js';
import { dummyHash, hashPassword, verifyPassword } from './password.js';
import { luaScript, type RedisClient } from '@reelay/redis';
import { guarded, guardedScript, sha256Hex } from './redis-calls.js';
import type { SignupLimit } from './signup-limit.js';

const IdentitySchema = z.object({
  provider: z.string(),
  subject: z.string(),
  email: z.string().optional(),
  /** The provider said its user controls `email` (absent in identities linked before this was kept: no). */
  email_verified: z.boolean().optional(),
  linked_at: z.number(),
});
export type LinkedIdentity = z.infer<typeof IdentitySchema>;

export const StoredAccountSchema = z.object({
  id: z.string(),
  email: z.string(),
  /** Absent for an account made by social login that never set a password. */
  password_hash: z.string().nullable().optional(),
  created_at: z.number(),
  /** The address is proven: by a mailed token (verify, reset) or a provider that vouched for it. */
  email_verified: z.boolean().optional(),
  identities: z.array(IdentitySchema).optional(),
});
export type StoredAccount = z.infer<typeof StoredAccountSchema>;

export interface Account {
  id: string;
  email: string;
}

// KEYS: the record. ARGV: the value read, the value to write. 1 when written, 0 when it changed meanwhile.
const COMPARE_AND_SET = luaScript(
  `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`,
  1,
);

const COMPARE_AND_DELETE = luaScript(
  `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`,
  1,
);

function notFound(): ReelayError {
  return new ReelayError('not_signed_in', 'This account no longer exists; sign in again.');
}

export class AccountStore {
  constructor(
    private readonly redis: RedisClient,
    readonly throttle: LoginThrottle,
    private readonly signupLimit?: SignupLimit,
    private readonly prefix = 'reelay:account:',
  ) {}

  private key(email: string): string {
    return this.prefix + sha256Hex(email);
  }

  /**
   * Creates an account for a normalised e-mail address; email_taken when it has one already,
   * rate_limited when the client address has signed up too often.
   */
  async signup(email: string, password: string, ip?: string): Promise<Account> {
    await this.signupLimit?.charge(ip);
    const stored: StoredAccount = {
      id: randomBytes(12).toString('base64url'),
      email,
      password_hash: await hashPassword(password),
      created_at: Date.now(),
      email_verified: false,
    };
    const created = await guarded(() => this.redis.set(this.key(email), JSON.stringify(stored), 'NX'));
    if (created !== 'OK')
      throw new ReelayError('email_taken', 'An account with this e-mail address exists already; sign in instead.');
    return { id: stored.id, email };
  }

  /** Creates an account without a password (social login); undefined when the address has one. */
  async createLinked(
    email: string,
    identity: LinkedIdentity,
    emailVerified: boolean,
  ): Promise<StoredAccount | undefined> {
    const stored: StoredAccount = {
      id: randomBytes(12).toString('base64url'),
      email,
      password_hash: null,
      created_at: Date.now(),
      email_verified: emailVerified,
      identities: [identity],
    };
    const created = await guarded(() => this.redis.set(this.key(email), JSON.stringify(stored), 'NX'));
    return created === 'OK' ? stored : undefined;
  }

  /** The account when the password is right; invalid_credentials otherwise, rate_limited when throttled. */
  async login(email: string, password: string, ip: string | undefined): Promise<Account> {
    await this.throttle.attempt(email, ip);
    const stored = await this.find(email);
    // Unknown addresses (and accounts without a password) are checked against a dummy hash: the same
    // scrypt work as a wrong password.
    const valid = await verifyPassword(password, stored?.password_hash ?? (await dummyHash()));
    // A failure keeps the place attempt() took: it is already counted.
    if (!stored?.password_hash || !valid) {
      throw new ReelayError('invalid_credentials', 'The e-mail address or the password is wrong.');
    }
    await this.throttle.succeeded(email, ip);
    return { id: stored.id, email: stored.email };
  }

  /** The stored account of an address, undefined when there is none. */
  async find(email: string): Promise<StoredAccount | undefined> {
    const raw = await guarded(() => this.redis.get(this.key(email)));
    return raw ? StoredAccountSchema.parse(JSON.parse(raw)) : undefined;
  }

  /** The signed-in account's record; not_signed_in when it was deleted (or is another account now). */
  async get(account: Account): Promise<StoredAccount> {
    const stored = await this.find(account.email);
    if (!stored || stored.id !== account.id) throw notFound();
    return stored;
  }

  /**
   * Applies a change to the account's record, retrying when another change landed in between.
   * Returns the record as written.
   */
  async update(account: Account, change: (stored: StoredAccount) => StoredAccount): Promise<StoredAccount> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const raw = await guarded(() => this.redis.get(this.key(account.email)));
      if (!raw) throw notFound();
      const stored = StoredAccountSchema.parse(JSON.parse(raw));
      if (stored.id !== account.id) throw notFound();
      const next = change(stored);
      if (
        (await guardedScript(this.redis, COMPARE_AND_SET, [this.key(account.email)], [raw, JSON.stringify(next)])) === 1
      )
        return next;
    }
    throw new ReelayError('service_unavailable', 'The account is being changed by another request; try again.');
  }

  async setPassword(account: Account, password: string): Promise<StoredAccount> {
    const hash = await hashPassword(password);
    return this.update(account, (s) => ({ ...s, password_hash: hash }));
  }

  /** Removes the record; the caller removes what hangs off it (keys, sessions, identities, …). */
  async remove(account: Account): Promise<void> {
    const raw = await guarded(() => this.redis.get(this.key(account.email)));
    if (!raw) return;
    if (StoredAccountSchema.parse(JSON.parse(raw)).id !== account.id) return;
    await guardedScript(this.redis, COMPARE_AND_DELETE, [this.key(account.email)], [raw]);
  }

  /** True when the password is the account's (throttled like a sign-in); false without a password. */
  async checkPassword(account: Account, password: string, ip: string | undefined): Promise<boolean> {
    await this.throttle.attempt(account.email, ip);
    const stored = await this.get(account);
    const valid = await verifyPassword(password, stored.password_hash ?? (await dummyHash()));
    if (valid && stored.password_hash) await this.throttle.succeeded(account.email, ip);
    return valid && Boolean(stored.password_hash);
  }
}
