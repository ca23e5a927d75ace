// Sign-in sessions: a random 32-byte id in the cookie, its SHA-256 as the Redis key (a copy of Redis
// holds no usable session), expiring after `ttlSeconds` without use — each use slides it (GETEX).
// Each account keeps an index of its sessions (hash field = the session's key hash, value = device,
// address and last use), so it can list them and end the others or all of them (a password reset,
// a deletion). Every use of a session, on any route, puts it on the index and keeps the index alive
// past the session (INDEX_MARGIN_SECONDS beyond the session's own expiry), so no live session is ever
// off its account's list; entries of lapsed sessions are pruned on read. A session whose account was
// deleted (or whose address now belongs to another account) is refused and ended on use.
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@reelay/redis';
import { z } from 'zod';
import { checkResults, guarded, sha256Hex } from './redis-calls.js';

export const SESSION_TTL_SECONDS = 7 * 24 * 3600;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
/** Last-seen times are written at most this often per session, so browsing costs no extra write each time. */
const LAST_SEEN_RESOLUTION_MS = 60_000;
/**
 * How much longer than its sessions an account's index lives: more than the last-seen resolution (a use
 * within it writes nothing) and any clock difference between gateway replicas, so the index always
 * outlives the sessions it lists.
 */
export const INDEX_MARGIN_SECONDS = 3600;

const SessionSchema = z.object({ account_id: z.string(), email: z.string(), created_at: z.number() });
export type Session = z.infer<typeof SessionSchema>;

const EntrySchema = z.object({
  created_at: z.number(),
  last_seen_at: z.number(),
  ip: z.string().optional(),
  device: z.string().optional(),
});

/** Who is behind a request: what the session list shows. */
export interface ClientInfo {
  ip?: string;
  userAgent?: string;
}

export interface SessionView {
  /** A handle for the list (not the session id, which stays a secret). */
  id: string;
  current: boolean;
  device: string;
  ip: string | null;
  created_at: string;
  last_seen_at: string;
}

function sessionIndex(accountId: string): string {
  return `reelay:account-sessions:${accountId}`;
}

/** A short, readable device name from a User-Agent: browser and system, never the whole header. */
export function describeDevice(userAgent: string | undefined): string {
  if (!userAgent) return 'Unknown device';
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(userAgent)
        ? 'Chrome'
        : /Safari\//.test(userAgent)
          ? 'Safari'
          : /curl\//.test(userAgent)
            ? 'curl'
            : undefined;
  const system = /Android/.test(userAgent)
    ? 'Android'
    : /iPhone|iPad/.test(userAgent)
      ? 'iOS'
      : /Windows/.test(userAgent)
        ? 'Windows'
        : /Mac OS X/.test(userAgent)
          ? 'macOS'
          : /Linux/.test(userAgent)
            ? 'Linux'
            : undefined;
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? userAgent.replace(/\p{Cc}/gu, '').slice(0, 60);
}

/** Whether the account a session was made for still exists (and is still that account). */
export type AccountLive = (session: Session) => Promise<boolean>;

export class SessionStore {
  constructor(
    private readonly redis: RedisClient,
    readonly ttlSeconds = SESSION_TTL_SECONDS,
    private readonly prefix = 'reelay:session:',
    private readonly accountLive?: AccountLive,
  ) {}

  private get indexTtl(): number {
    return this.ttlSeconds + INDEX_MARGIN_SECONDS;
  }

  private key(id: string): string {
    return this.prefix + sha256Hex(id);
  }

  /** Starts a session and returns its id, the cookie's value. */
  async create(account: { id: string; email: string }, client: ClientInfo = {}): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    const now = Date.now();
    const session: Session = { account_id: account.id, email: account.email, created_at: now };
    const entry = { created_at: now, last_seen_at: now, ip: client.ip, device: describeDevice(client.userAgent) };
    // The index first: a session is never live without its entry (the two keys may sit in different
    // cluster slots, so they are written one after the other, not in one transaction).
    await guarded(async () =>
      checkResults(
        await this.redis
          .multi()
          .hset(sessionIndex(account.id), sha256Hex(id), JSON.stringify(entry))
          .expire(sessionIndex(account.id), this.indexTtl)
          .exec(),
      ),
    );
    await guarded(() => this.redis.set(this.key(id), JSON.stringify(session), 'EX', this.ttlSeconds));
    return id;
  }

  /**
   * The live session for an id, its expiry pushed back and its entry on the account's index renewed
   * (whichever route it is used on); undefined when unknown, expired, malformed, or of an account that
   * no longer exists (such a session is ended here).
   */
  async get(id: string | undefined, client: ClientInfo = {}): Promise<Session | undefined> {
    if (!id || !SESSION_ID.test(id)) return undefined;
    const raw = await guarded(() => this.redis.getex(this.key(id), 'EX', this.ttlSeconds));
    if (!raw) return undefined;
    const parsed = SessionSchema.safeParse(JSON.parse(raw));
    if (!parsed.success) return undefined;
    const [live] = await Promise.all([
      this.accountLive ? this.accountLive(parsed.data) : true,
      this.touch(parsed.data.account_id, sha256Hex(id), client),
    ]);
    if (!live) {
      await this.destroy(id);
      return undefined;
    }
    return parsed.data;
  }

  /**
   * Records the session's use (when, and from where when known) in the account's index and keeps the
   * index alive past it. Skipped within LAST_SEEN_RESOLUTION_MS of the last write from the same
   * address: the index's margin covers that.
   */
  private async touch(accountId: string, hash: string, client: ClientInfo): Promise<void> {
    const index = sessionIndex(accountId);
    const raw = await guarded(() => this.redis.hget(index, hash));
    const entry = raw ? EntrySchema.safeParse(JSON.parse(raw)) : undefined;
    const now = Date.now();
    const ip = client.ip ?? (entry?.success ? entry.data.ip : undefined);
    if (entry?.success && now - entry.data.last_seen_at < LAST_SEEN_RESOLUTION_MS && entry.data.ip === ip) return;
    const base = entry?.success ? entry.data : { created_at: now, device: describeDevice(client.userAgent) };
    await guarded(async () =>
      checkResults(
        await this.redis
          .multi()
          .hset(index, hash, JSON.stringify({ ...base, last_seen_at: now, ip }))
          .expire(index, this.indexTtl)
          .exec(),
      ),
    );
  }

  async destroy(id: string | undefined): Promise<void> {
    if (!id || !SESSION_ID.test(id)) return;
    const raw = await guarded(() => this.redis.getdel(this.key(id)));
    const parsed = raw ? SessionSchema.safeParse(JSON.parse(raw)) : undefined;
    if (parsed?.success) await guarded(() => this.redis.hdel(sessionIndex(parsed.data.account_id), sha256Hex(id)));
  }

  /** The account's live sessions, most recently used first; `currentId` is marked. */
  async list(accountId: string, currentId?: string): Promise<SessionView[]> {
    const entries = await this.liveEntries(accountId);
    const current = currentId ? sha256Hex(currentId) : undefined;
    return entries
      .map(({ hash, entry }) => ({
        id: sha256Hex(hash).slice(0, 16),
        current: hash === current,
        device: entry.device ?? 'Unknown device',
        ip: entry.ip ?? null,
        created_at: new Date(entry.created_at).toISOString(),
        last_seen_at: new Date(entry.last_seen_at).toISOString(),
      }))
      .sort((a, b) => b.last_seen_at.localeCompare(a.last_seen_at));
  }

  /** Ends every session of the account but `keepId` (all of them without one); returns how many ended. */
  async destroyAll(accountId: string, keepId?: string): Promise<number> {
    const index = sessionIndex(accountId);
    const hashes = Object.keys(await guarded(() => this.redis.hgetall(index)));
    const keep = keepId ? sha256Hex(keepId) : undefined;
    const ending = hashes.filter((h) => h !== keep);
    if (ending.length === 0) return 0;
    await guarded(() => Promise.all(ending.map((hash) => this.redis.del(this.prefix + hash))));
    await guarded(() => this.redis.hdel(index, ...ending));
    return ending.length;
  }

  private async liveEntries(accountId: string): Promise<{ hash: string; entry: z.infer<typeof EntrySchema> }[]> {
    const index = sessionIndex(accountId);
    const all = await guarded(() => this.redis.hgetall(index));
    const hashes = Object.keys(all);
    if (hashes.length === 0) return [];
    const alive = await guarded(() => Promise.all(hashes.map((hash) => this.redis.exists(this.prefix + hash))));
    const entries = hashes.map((hash) => {
      const parsed = EntrySchema.safeParse(JSON.parse(all[hash]));
      return parsed.success ? parsed.data : undefined;
    });
    // An entry is written just before its session: one younger than the resolution may be a session
    // being made right now, and is left alone.
    const lapsed = hashes.filter(
      (_, i) => alive[i] !== 1 && Date.now() - (entries[i]?.last_seen_at ?? 0) >= LAST_SEEN_RESOLUTION_MS,
    );
    if (lapsed.length) await guarded(() => this.redis.hdel(index, ...lapsed));
    return hashes.flatMap((hash, i) => (alive[i] === 1 && entries[i] ? [{ hash, entry: entries[i] }] : []));
  }
}
