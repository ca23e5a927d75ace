// Accounts: sign-up and sign-in by e-mail and password. An account is one Redis string keyed by the
// hash of its normalised e-mail, created with SET NX so two sign-ups for one address cannot both win.
// Sign-in answers the same, in about the same time, for an unknown address and a wrong password.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { ReelayError } from '@reelay/contracts';
import type { LoginThrottle } from './login-throttle.js';
import { dummyHash, hashPassword, verifyPassword } from './password.js';
import { guarded, sha256Hex } from './redis.js';
import type { SignupLimit } from './signup-limit.js';

const StoredAccountSchema = z.object({ id: z.string(), email: z.string(), password_hash: z.string(), created_at: z.number() });

export interface Account {
  id: string;
  email: string;
}

export class AccountStore {
  constructor(
    private readonly redis: Redis,
    private readonly throttle: LoginThrottle,
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
    const stored = { id: randomBytes(12).toString('base64url'), email, password_hash: await hashPassword(password), created_at: Date.now() };
    const created = await guarded(() => this.redis.set(this.key(email), JSON.stringify(stored), 'NX'));
    if (created !== 'OK') throw new ReelayError('email_taken', 'An account with this e-mail address exists already; sign in instead.');
    return { id: stored.id, email };
  }

  /** The account when the password is right; invalid_credentials otherwise, rate_limited when throttled. */
  async login(email: string, password: string, ip: string | undefined): Promise<Account> {
    await this.throttle.attempt(email, ip);
    const raw = await guarded(() => this.redis.get(this.key(email)));
    const stored = raw ? StoredAccountSchema.parse(JSON.parse(raw)) : undefined;
    // Unknown addresses are checked against a dummy hash: the same scrypt work as a wrong password.
    const valid = await verifyPassword(password, stored?.password_hash ?? (await dummyHash()));
    // A failure keeps the place attempt() took: it is already counted.
    if (!stored || !valid) {
      throw new ReelayError('invalid_credentials', 'The e-mail address or the password is wrong.');
    }
    await this.throttle.succeeded(email, ip);
    return { id: stored.id, email: stored.email };
  }
}
