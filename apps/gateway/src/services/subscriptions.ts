// Subscriptions (DESIGN.md "Subscriptions"): their records in Redis, per account, and their schedule.
// The schedule is a BullMQ job scheduler per subscription on SUBSCRIPTION_QUEUE: Redis holds the one
// next check, so every replica's checker shares it, a restart finds it where it was, and only the
// replica whose worker takes the job runs that check (subscription-check.ts).
import { randomBytes } from 'node:crypto';
import type { JobType, Queue } from 'bullmq';
import { luaScript, runScript, type RedisClient } from '@reelay/redis';
import {
  FAILING_AFTER,
  ReelayError,
  SUBSCRIPTION_EVERY_MAX,
  type Subscription,
  type SubscriptionItem,
  type SubscriptionPreset,
  type SubscriptionUpdate,
} from '@reelay/contracts';
import type { JobService } from './jobs.js';

export const SUBSCRIPTION_QUEUE = 'subscription-checks';

const recordKey = (id: string) => `reelay:sub:${id}`;
const ownerKey = (accountId: string) => `reelay:subs:${accountId}`;
const itemsKey = (id: string) => `reelay:sub:${id}:items`;

// Takes a place in the account's index if it holds fewer than the limit: the check and the write in one
// step (one key, one hash slot on a Redis Cluster). KEYS: the index. ARGV: limit, id. 1 taken, 0 full.
const TAKE_PLACE = luaScript(
  `if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
return redis.call('SADD', KEYS[1], ARGV[2])`,
  1,
);

/** What Redis holds of one subscription (the webhook secret never leaves the gateway). */
export interface SubscriptionRecord {
  id: string;
  account_id: string;
  name: string;
  url: string;
  every: number;
  since: 'now' | 'all';
  preset: SubscriptionPreset;
  status: 'active' | 'paused' | 'failing';
  created_at: number;
  last_checked_at?: number;
  failures: number;
  last_error?: string;
  webhook_url?: string;
  webhook_secret?: string;
}

interface StoredItem {
  url: string;
  title?: string;
  seen_at: number;
  job_id?: string;
  /** Recorded once the job has ended (completed, failed, cancelled, expired); else looked up. */
  status?: SubscriptionItem['status'];
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'expired', 'seen']);

/** Seconds to the next check: `every`, or while failing a doubling interval (at most 7 days). */
export function checkInterval(every: number, failures: number): number {
  if (failures < FAILING_AFTER) return every;
  return Math.min(every * 2 ** (failures - FAILING_AFTER + 1), Math.max(every, SUBSCRIPTION_EVERY_MAX));
}

function toRecord(fields: Record<string, string>): SubscriptionRecord | undefined {
  if (!fields.id) return undefined;
  return {
    id: fields.id,
    account_id: fields.account_id,
    name: fields.name,
    url: fields.url,
    every: Number(fields.every),
    since: fields.since === 'all' ? 'all' : 'now',
    preset: JSON.parse(fields.preset ?? '{}') as SubscriptionPreset,
    status: fields.status as SubscriptionRecord['status'],
    created_at: Number(fields.created_at),
    last_checked_at: fields.last_checked_at ? Number(fields.last_checked_at) : undefined,
    failures: Number(fields.failures ?? 0),
    last_error: fields.last_error || undefined,
    webhook_url: fields.webhook_url || undefined,
    webhook_secret: fields.webhook_secret || undefined,
  };
}

async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ReelayError) throw err;
    throw new ReelayError('service_unavailable', 'Subscriptions are unavailable (Redis); try again shortly.', {
      cause: err,
    });
  }
}

export class SubscriptionStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly schedule: Queue,
    private readonly jobs: Pick<JobService, 'view'>,
  ) {}

  newId(): string {
    return `sub_${randomBytes(12).toString('base64url')}`;
  }

  async count(accountId: string): Promise<number> {
    return guarded(() => this.redis.scard(ownerKey(accountId)));
  }

  /**
   * Saves a new subscription with the entries to treat as seen, then schedules it; 409
   * subscription_limit_reached when the account holds `limit` already (checked and taken at once).
   */
  async create(
    record: SubscriptionRecord,
    seen: { key: string; url: string; title?: string }[],
    limit: number,
  ): Promise<void> {
    const fields: Record<string, string> = {
      id: record.id,
      account_id: record.account_id,
      name: record.name,
      url: record.url,
      every: String(record.every),
      since: record.since,
      preset: JSON.stringify(record.preset),
      status: record.status,
      created_at: String(record.created_at),
      failures: '0',
    };
    if (record.webhook_url) fields.webhook_url = record.webhook_url;
    if (record.webhook_secret) fields.webhook_secret = record.webhook_secret;
    // Three keys in three slots on a Redis Cluster, so three commands, in the order that leaves only
    // harmless remains if one fails: the owner's index first (an id without a record is not listed),
    // then the seen entries, then the record, which makes the subscription exist.
    const now = Date.now();
    if ((await runScript(this.redis, TAKE_PLACE, [ownerKey(record.account_id)], [limit, record.id])) !== 1)
      throw new ReelayError(
        'subscription_limit_reached',
        `An account can hold at most ${limit} subscriptions; delete one first.`,
      );
    if (seen.length)
      await guarded(() =>
        this.redis.hset(
          itemsKey(record.id),
          Object.fromEntries(
            seen.map((e) => [
              e.key,
              JSON.stringify({ url: e.url, title: e.title, seen_at: now, status: 'seen' } satisfies StoredItem),
            ]),
          ),
        ),
      );
    await guarded(() => this.redis.hset(recordKey(record.id), fields));
    await this.reschedule(record);
  }

  async get(id: string): Promise<SubscriptionRecord | undefined> {
    return toRecord(await guarded(() => this.redis.hgetall(recordKey(id))));
  }

  /** The caller's subscription, or 404 subscription_not_found (another owner's id included). */
  async owned(accountId: string, id: string): Promise<SubscriptionRecord> {
    const record = id.length <= 100 ? await this.get(id) : undefined;
    if (!record || record.account_id !== accountId)
      throw new ReelayError('subscription_not_found', 'No subscription of yours has this id.');
    return record;
  }

  async list(accountId: string): Promise<SubscriptionRecord[]> {
    const ids = await guarded(() => this.redis.smembers(ownerKey(accountId)));
    const records = await Promise.all(ids.map((id) => this.get(id)));
    return records
      .filter((r): r is SubscriptionRecord => r !== undefined && r.account_id === accountId)
      .sort((a, b) => a.created_at - b.created_at);
  }

  async update(record: SubscriptionRecord, change: SubscriptionUpdate): Promise<SubscriptionRecord> {
    const next: SubscriptionRecord = { ...record, ...change, preset: change.preset ?? record.preset };
    // Resuming clears the failure count: a paused failing subscription comes back as active.
    if (change.status === 'active' && record.status !== 'active')
      Object.assign(next, { failures: 0, last_error: undefined });
    const fields: Record<string, string> = {
      name: next.name,
      every: String(next.every),
      preset: JSON.stringify(next.preset),
      status: next.status,
      failures: String(next.failures),
    };
    await guarded(() =>
      this.redis
        .multi()
        .hset(recordKey(record.id), fields)
        .hdel(recordKey(record.id), ...(next.last_error ? [] : ['last_error']))
        .exec(),
    );
    await this.reschedule(next);
    return next;
  }

  async delete(record: SubscriptionRecord): Promise<void> {
    // The record first (the subscription is gone from then on), then what hangs off it: one slot each.
    await guarded(() => this.redis.del(recordKey(record.id)));
    await guarded(() =>
      Promise.all([this.redis.del(itemsKey(record.id)), this.redis.srem(ownerKey(record.account_id), record.id)]),
    );
    await guarded(() => this.schedule.removeJobScheduler(record.id));
  }

  /** Removes every subscription of an account (the account's deletion calls this). */
  async deleteForAccount(accountId: string): Promise<number> {
    const records = await this.list(accountId);
    for (const record of records) await this.delete(record);
    await guarded(() => this.redis.del(ownerKey(accountId)));
    return records.length;
  }

  /** Puts the subscription's one scheduler in step with its status and interval (idempotent). */
  async reschedule(record: SubscriptionRecord): Promise<void> {
    if (record.status === 'paused') {
      await guarded(() => this.schedule.removeJobScheduler(record.id));
      return;
    }
    const every = checkInterval(record.every, record.failures) * 1000;
    await guarded(() =>
      this.schedule.upsertJobScheduler(
        record.id,
        { every, startDate: new Date(Date.now() + every) },
        { name: 'check', data: { id: record.id }, opts: { removeOnComplete: 100, removeOnFail: 100 } },
      ),
    );
  }

  /** Records a check's outcome; returns the record as it now stands (rescheduled when its interval changed). */
  async checked(record: SubscriptionRecord, error?: string): Promise<SubscriptionRecord> {
    const failures = error === undefined ? 0 : record.failures + 1;
    const status: SubscriptionRecord['status'] =
      failures >= FAILING_AFTER ? 'failing' : record.status === 'failing' ? 'active' : record.status;
    const next: SubscriptionRecord = { ...record, failures, status, last_checked_at: Date.now(), last_error: error };
    // Only fields a check owns: a PATCH meanwhile keeps its name, preset and pause.
    const multi = this.redis
      .multi()
      .hset(recordKey(record.id), { failures: String(failures), last_checked_at: String(next.last_checked_at) });
    if (error === undefined) multi.hdel(recordKey(record.id), 'last_error');
    else multi.hset(recordKey(record.id), { last_error: error });
    if (record.status !== 'paused') multi.hset(recordKey(record.id), { status });
    const exists = await guarded(() => this.redis.exists(recordKey(record.id)));
    if (!exists) return next; // deleted while checking
    await guarded(() => multi.exec());
    if (
      record.status !== 'paused' &&
      checkInterval(record.every, failures) !== checkInterval(record.every, record.failures)
    )
      await this.reschedule(next);
    return next;
  }

  /** The scheduled check jobs in these states, with their state (for operators and tests). */
  async checkJobs(states: JobType[]): Promise<{ id: string; subscription: string; state: string }[]> {
    const jobs = await guarded(() => this.schedule.getJobs(states));
    return Promise.all(
      jobs.map(async (job) => ({
        id: job.id ?? '',
        subscription: String((job.data as { id?: string }).id),
        state: await job.getState(),
      })),
    );
  }

  /** Whether the entry is in the archive. */
  async known(id: string, keys: string[]): Promise<boolean[]> {
    if (keys.length === 0) return [];
    const values = await guarded(() => this.redis.hmget(itemsKey(id), ...keys));
    return values.map((v) => v !== null);
  }

  /** Claims an entry for this check: false when another check got it first. */
  async claim(id: string, key: string, entry: { url: string; title?: string }): Promise<boolean> {
    const item: StoredItem = { url: entry.url, title: entry.title, seen_at: Date.now() };
    return (await guarded(() => this.redis.hsetnx(itemsKey(id), key, JSON.stringify(item)))) === 1;
  }

  /** Gives a claimed entry back unstarted, for a later check to take. */
  async unclaim(id: string, key: string): Promise<void> {
    await guarded(() => this.redis.hdel(itemsKey(id), key));
  }

  async recordItem(id: string, key: string, item: StoredItem): Promise<void> {
    if (!(await guarded(() => this.redis.exists(recordKey(id))))) return;
    await guarded(() => this.redis.hset(itemsKey(id), key, JSON.stringify(item)));
  }

  /** The entries seen, newest first, with each job's status (recorded once it has ended). */
  async items(id: string): Promise<SubscriptionItem[]> {
    const all = await guarded(() => this.redis.hgetall(itemsKey(id)));
    const out: SubscriptionItem[] = [];
    for (const [key, raw] of Object.entries(all)) {
      const item = JSON.parse(raw) as StoredItem;
      let status = item.status ?? 'queued';
      if (item.job_id && !TERMINAL.has(status)) {
        status = await this.jobs.view(item.job_id).then(
          (view) => view.status,
          (err: unknown) => (err instanceof ReelayError && err.code === 'job_not_found' ? 'expired' : status),
        );
        if (TERMINAL.has(status)) await this.recordItem(id, key, { ...item, status });
      }
      out.push({
        url: item.url,
        title: item.title,
        seen_at: new Date(item.seen_at).toISOString(),
        job_id: item.job_id,
        status,
      });
    }
    return out.sort((a, b) => b.seen_at.localeCompare(a.seen_at));
  }

  async view(record: SubscriptionRecord): Promise<Subscription> {
    const items = await this.items(record.id);
    const scheduler =
      record.status === 'paused' ? undefined : await guarded(() => this.schedule.getJobScheduler(record.id));
    return {
      id: record.id,
      name: record.name,
      url: record.url,
      every: record.every,
      since: record.since,
      preset: record.preset,
      status: record.status,
      created_at: new Date(record.created_at).toISOString(),
      ...(record.last_checked_at ? { last_checked_at: new Date(record.last_checked_at).toISOString() } : {}),
      ...(scheduler?.next ? { next_check_at: new Date(scheduler.next).toISOString() } : {}),
      items: {
        completed: items.filter((i) => i.status === 'completed').length,
        failed: items.filter((i) => i.status === 'failed' || i.status === 'cancelled').length,
      },
      ...(record.last_error ? { last_error: record.last_error } : {}),
      ...(record.webhook_url ? { webhook_url: record.webhook_url } : {}),
    };
  }
}
