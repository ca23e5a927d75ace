// Sign-in sessions: a random 32-byte id in the cookie, its SHA-256 as the Redis key (a copy of Redis
// holds no usable session), expiring after `ttlSeconds` without use — each use slides it (GETEX).
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { guarded, sha256Hex } from './redis.js';

export const SESSION_TTL_SECONDS = 7 * 24 * 3600;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

const SessionSchema = z.object({ account_id: z.string(), email: z.string(), created_at: z.number() });
export type Session = z.infer<typeof SessionSchema>;

export class SessionStore {
  constructor(
    private readonly redis: Redis,
    readonly ttlSeconds = SESSION_TTL_SECONDS,
    private readonly prefix = 'reelay:session:',
  ) {}

  private key(id: string): string {
    return this.prefix + sha256Hex(id);
  }

  /** Starts a session and returns its id, the cookie's value. */
  async create(account: { id: string; email: string }): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    const session: Session = { account_id: account.id, email: account.email, created_at: Date.now() };
    await guarded(() => this.redis.set(this.key(id), JSON.stringify(session), 'EX', this.ttlSeconds));
    return id;
  }

  /** The live session for an id, its expiry pushed back; undefined when unknown, expired or malformed. */
  async get(id: string | undefined): Promise<Session | undefined> {
    if (!id || !SESSION_ID.test(id)) return undefined;
    const raw = await guarded(() => this.redis.getex(this.key(id), 'EX', this.ttlSeconds));
    if (!raw) return undefined;
    const parsed = SessionSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  }

  async destroy(id: string | undefined): Promise<void> {
    if (!id || !SESSION_ID.test(id)) return;
    await guarded(() => this.redis.del(this.key(id)));
  }
}
