// Who may cancel or stop a job (DESIGN.md "Trust at the public edge"). The job id is shared: it
// reads the job and fetches its file. Control is a separate capability: each 202 hands out a
// control token (256 random bits), of which Redis keeps only the SHA-256, beside the account that
// asked (its API key's or session's), if any. A collection's entries point at their parent, whose
// tokens and account control them; a subscription's job has its owner and no token.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RedisClient } from '@reelay/redis';
import { luaScript, runScript } from '@reelay/redis';
import { CONTROL_TOKEN_PATTERN, ReelayError } from '@reelay/contracts';

/**
 * Tokens kept per job: every 202 of a repeated request hands out one more (the earlier ones are
 * stored hashed, so they cannot be handed out again). Past this many the oldest stops working, so a
 * client polling by re-posting cannot grow a record without bound.
 */
export const MAX_TOKENS_PER_JOB = 32;
const TOKEN_FIELD = 't:';

/** What a request to control a job shows: a bearer token, and the account behind its key or session. */
export interface ControlCredentials {
  token?: string;
  accountId?: string;
}

// KEYS: the job's record. ARGV: token field ('' for none), now ms, ttl s, most tokens, owner ('' for
// none), parent ('' for none). Adds the token, drops the oldest past the bound, keeps the record at
// least ttl seconds.
const GRANT = luaScript(
  `if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'owner', ARGV[5]) end
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'parent', ARGV[6]) end
local all = redis.call('HGETALL', KEYS[1])
local tokens = {}
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 2) == '${TOKEN_FIELD}' then table.insert(tokens, { all[i], tonumber(all[i + 1]) }) end
end
local most = tonumber(ARGV[4])
if #tokens > most then
  table.sort(tokens, function(a, b) return a[2] < b[2] end)
  for i = 1, #tokens - most do redis.call('HDEL', KEYS[1], tokens[i][1]) end
end
if redis.call('TTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return 1`,
  1,
);

const digest = (token: string) => createHash('sha256').update(token).digest();

const unavailable = (cause: unknown) =>
  new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', { cause });

export class JobGrants {
  constructor(
    private readonly redis: RedisClient,
    /** How long a record is kept: past the longest life of any job (queue wait, recording, attempts). */
    private readonly ttlSeconds: number,
    private readonly prefix = 'reelay:job-control:',
  ) {}

  private key(id: string): string {
    return `${this.prefix}${id}`;
  }

  private async grant(id: string, fields: { token?: string; owner?: string; parent?: string }): Promise<void> {
    const field = fields.token ? `${TOKEN_FIELD}${digest(fields.token).toString('base64url')}` : '';
    try {
      await runScript(
        this.redis,
        GRANT,
        [this.key(id)],
        [field, Date.now(), this.ttlSeconds, MAX_TOKENS_PER_JOB, fields.owner ?? '', fields.parent ?? ''],
      );
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** A new control token for the job (just made, or reused by the same client); `owner`: the asking account. */
  async issue(id: string, owner?: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.grant(id, { token, owner });
    return token;
  }

  /** A job no one holds a token for (a subscription's): its owner's key or session controls it. */
  async own(id: string, owner: string): Promise<void> {
    await this.grant(id, { owner });
  }

  /** A collection's entries: controlled by whoever controls the collection. */
  async adopt(parent: string, children: string[]): Promise<void> {
    // One command each (each key has its own slot on a cluster); ioredis sends them as one batch.
    await Promise.all(children.map((child) => this.grant(child, { parent })));
  }

  private async record(id: string): Promise<Record<string, string>> {
    try {
      return await this.redis.hgetall(this.key(id));
    } catch (err) {
      throw unavailable(err);
    }
  }

  /**
   * Whether these credentials control the job: a token it (or its collection) handed out, or the
   * account that asked for it. Every stored token is compared in constant time, all of them, so the
   * time taken says nothing about which matched. A job with no record (made before control tokens,
   * or long gone) is controlled by no one.
   */
  async allows(id: string, credentials: ControlCredentials): Promise<boolean> {
    const own = await this.record(id);
    const records = [own];
    if (own.parent) records.push(await this.record(own.parent));
    const token =
      credentials.token !== undefined && CONTROL_TOKEN_PATTERN.test(credentials.token)
        ? digest(credentials.token)
        : undefined;
    let allowed = false;
    for (const record of records) {
      if (credentials.accountId !== undefined && record.owner === credentials.accountId) allowed = true;
      if (!token) continue;
      for (const field of Object.keys(record)) {
        if (!field.startsWith(TOKEN_FIELD)) continue;
        const stored = Buffer.from(field.slice(TOKEN_FIELD.length), 'base64url');
        if (stored.length === token.length && timingSafeEqual(stored, token)) allowed = true;
      }
    }
    return allowed;
  }

  /** Throws job_control_forbidden unless the credentials control the job. */
  async check(id: string, credentials: ControlCredentials): Promise<void> {
    if (await this.allows(id, credentials)) return;
    throw new ReelayError(
      'job_control_forbidden',
      'Only the client that started this job can cancel or stop it: send its control_token (from the 202 answer) as "Authorization: Bearer <token>", or the API key or web app session that started it.',
    );
  }
}

/** The bearer token of an Authorization header, if it has one (any other scheme is no token). */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+([^\s]{1,200})[ \t]*$/i.exec(header ?? '');
  return match?.[1];
}
