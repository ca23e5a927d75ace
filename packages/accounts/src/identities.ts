// Which account a social-login identity belongs to: `identity:<provider>:<sha256(subject)>` holds the
// account's id and e-mail. Claimed with SET NX, so one identity can never be linked to two accounts.
// The account's record lists its identities too (for the settings); this index is the lookup.
import { z } from 'zod';
import { luaScript, type RedisClient } from '@reelay/redis';
import { guarded, guardedScript, sha256Hex } from './redis-calls.js';
import type { Account } from './accounts.js';

const OwnerSchema = z.object({ id: z.string(), email: z.string() });

// Releases an identity only if it still belongs to the account. KEYS: the index entry. ARGV: account id.
const RELEASE = luaScript(
  `local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
if cjson.decode(raw).id ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`,
  1,
);

export class IdentityIndex {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = 'reelay:identity:',
  ) {}

  private key(provider: string, subject: string): string {
    return `${this.prefix}${provider}:${sha256Hex(subject)}`;
  }

  async owner(provider: string, subject: string): Promise<Account | undefined> {
    const raw = await guarded(() => this.redis.get(this.key(provider, subject)));
    const parsed = raw ? OwnerSchema.safeParse(JSON.parse(raw)) : undefined;
    return parsed?.success ? parsed.data : undefined;
  }

  /** Links the identity to the account; false when another account has it already. */
  async claim(provider: string, subject: string, account: Account): Promise<boolean> {
    const set = await guarded(() =>
      this.redis.set(this.key(provider, subject), JSON.stringify({ id: account.id, email: account.email }), 'NX'),
    );
    if (set === 'OK') return true;
    return (await this.owner(provider, subject))?.id === account.id;
  }

  async release(provider: string, subject: string, account: Account): Promise<void> {
    await guardedScript(this.redis, RELEASE, [this.key(provider, subject)], [account.id]);
  }
}
