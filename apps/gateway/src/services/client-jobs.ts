// Live jobs per client (MAX_ACTIVE_JOBS_PER_CLIENT), the same for every gateway replica. A client is
// its address, or for a subscription's jobs the subscription's owner (no address asks for those).
// Each client has a sorted set of its job ids in Redis (score: when the slot was taken). Nothing has
// to hand a slot back when a job ends: each check reads the states of the set's ids from BullMQ, the
// one store of job state, and drops the ids that completed, failed or are gone before counting. So a
// job frees its slot however it ends (done, failed, its artifact expired and removed, its worker
// killed and its attempts used up) with no loop per client; an id whose job never reached the queue
// (a gateway that crashed in between) is dropped after a grace period, and a set whose client stops
// sending jobs expires as a whole. A cancelled job frees its slot the same way: failed with the cancel
// code when it was running, or gone from the queue with a cancelled record when it was queued.
import type { Queue } from 'bullmq';
import { ipBucket } from '@reelay/accounts';
import { cancelledJobKey, ReelayError } from '@reelay/contracts';
import { luaScript, runScript, type RedisClient } from '@reelay/redis';

/** BullMQ states of a job that still holds a slot: queued (in any form) or processing. */
const LIVE = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);
/** An id still unknown to the queue this long after its slot was taken was never enqueued. */
const ENQUEUE_GRACE_MS = 60_000;
/** A client over its limit waits for one of its jobs to end: there is no window that resets. */
const RETRY_AFTER_SECONDS = 15;

// KEYS: the client's set. ARGV: job id, now ms, limit, expiry s, then the ids found dead.
// Returns 1 when the id took a slot, 0 when the client's slots are all taken.
const ADMIT = luaScript(
  `for i = 5, #ARGV do redis.call('ZREM', KEYS[1], ARGV[i]) end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1`,
  1,
);

/** Whose slots a job takes: a client address, or the account a subscription's jobs count against. */
export type SlotHolder = { ip: string | undefined } | { account: string };

export interface ClientJobsOptions {
  limit: number;
  /** Further queues whose jobs hold a slot (collection parents). */
  others?: Queue[];
  /** How long the set is kept after its last new job: past any job's life (queue wait, attempts, timeouts). */
  expirySeconds: number;
  prefix?: string;
}

export class ClientJobs {
  private readonly prefix: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly queue: Queue,
    private readonly options: ClientJobsOptions,
  ) {
    this.prefix = options.prefix ?? 'reelay:client-jobs:';
  }

  private key(client: SlotHolder): string {
    return 'account' in client ? `${this.prefix}account:${client.account}` : `${this.prefix}${ipBucket(client.ip)}`;
  }

  /** Takes a slot for a new job, or throws too_many_jobs when the client's jobs fill them all. */
  async admit(client: SlotHolder, jobId: string): Promise<void> {
    const key = this.key(client);
    const now = Date.now();
    const held = (await this.redis.zrange(key, '0', '-1', 'WITHSCORES')) as string[];
    const dead: string[] = [];
    await Promise.all(
      Array.from({ length: held.length / 2 }, async (_, i) => {
        const [id, since] = [held[2 * i], Number(held[2 * i + 1])];
        let state = await this.queue.getJobState(id);
        // A collection counts as one job: its parent, in its own queue.
        for (const other of this.options.others ?? []) if (state === 'unknown') state = await other.getJobState(id);
        // A job cancelled while queued is unknown to the queue at once: its cancelled record frees it.
        if (
          LIVE.has(state) ||
          (state === 'unknown' && now - since < ENQUEUE_GRACE_MS && !(await this.redis.exists(cancelledJobKey(id))))
        )
          return;
        dead.push(id);
      }),
    );
    const admitted = await runScript(
      this.redis,
      ADMIT,
      [key],
      [jobId, now, this.options.limit, this.options.expirySeconds, ...dead],
    );
    if (admitted === 1) return;
    throw new ReelayError(
      'too_many_jobs',
      'account' in client
        ? `This account's subscriptions already have ${this.options.limit} jobs queued or processing; the next check starts more.`
        : `This client already has ${this.options.limit} jobs queued or processing; try again when one of them has finished.`,
      {
        headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      },
    );
  }

  /** Hands a slot back at once, for a job that could not be enqueued after all. */
  async release(client: SlotHolder, jobId: string): Promise<void> {
    await this.redis.zrem(this.key(client), jobId);
  }
}
