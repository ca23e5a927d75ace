// Job events for every open event stream of this gateway process, from one reader: BullMQ already
// appends each job change (active, progress, completed, failed, ...) to the queue's Redis stream in
// the same script that makes it, so one QueueEvents (one blocking XREAD) per process sees the changes
// of the jobs any worker runs, and fans them out in-process. A change of a job that has listeners is
// read once (JobService.snapshot), whatever the number of listeners; progress at most 4 times a second.
import { QueueEvents, type Queue } from 'bullmq';
import type { RedisClient } from '@reelay/redis';
import { ReelayError } from '@reelay/contracts';
import { logRef, type Logger } from '@reelay/observability';
import type { JobService, JobSnapshot } from './jobs.js';
import { duplicateRedis } from '@reelay/redis';

/** What a listener is told: the job's current state, or undefined: no more (the job was removed, or the gateway stops). */
export type JobListener = (snapshot: JobSnapshot | undefined) => void;

// Events after which a job reads differently. 'added' is followed by 'waiting'; 'drained' names no job.
const CHANGES = ['waiting', 'active', 'progress', 'completed', 'failed', 'delayed', 'removed', 'stalled'] as const;
const PROGRESS_GAP_MS = 250;

interface Watched {
  listeners: Set<JobListener>;
  reading: boolean;
  /** A change arrived during a read: read again after it (at once unless it was progress only). */
  again?: 'progress' | 'status';
  lastReadAt: number;
  timer?: NodeJS.Timeout;
}

export class JobEventHub {
  private readonly watched = new Map<string, Watched>();
  private reader?: Promise<{ events: QueueEvents; connection: RedisClient }>;
  private closed = false;
  /** Child job → the collection parent whose stream is open: a child's change is a change of its parent. */
  private readonly parentOf = new Map<string, string>();
  private collectionReader?: Promise<{ events: QueueEvents; connection: RedisClient }>;

  constructor(
    private readonly queue: Queue,
    private readonly redis: RedisClient,
    private readonly jobs: JobService,
    private readonly logger: Logger,
    /** COLLECTION_QUEUE: a collection parent's own changes (its end) come from its queue's events. */
    private readonly collections?: Queue,
  ) {}

  /** Number of open listeners (metrics and tests). */
  get listeners(): number {
    let n = 0;
    for (const w of this.watched.values()) n += w.listeners.size;
    return n;
  }

  /**
   * Listens to a job's changes. Resolves once the reader is running, so a state read after it can
   * miss no change: any change after that read is delivered (perhaps also one before; ids sort it out).
   */
  async listen(id: string, listener: JobListener): Promise<() => void> {
    await this.start();
    let watched = this.watched.get(id);
    if (!watched) this.watched.set(id, (watched = { listeners: new Set(), reading: false, lastReadAt: 0 }));
    watched.listeners.add(listener);
    // A collection parent: its children's changes, and its own queue's, are its events.
    const children = await this.jobs.collectionChildIds(id).catch(() => [] as string[]);
    if (children.length && this.collections) {
      this.collectionReader ??= this.open(this.collections).catch((err: unknown) => {
        this.collectionReader = undefined;
        throw new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', {
          cause: err,
        });
      });
      await this.collectionReader;
      for (const child of children) this.parentOf.set(child, id);
    }
    return () => {
      watched.listeners.delete(listener);
      if (watched.listeners.size === 0 && this.watched.get(id) === watched) {
        clearTimeout(watched.timer);
        this.watched.delete(id);
        for (const child of children) if (this.parentOf.get(child) === id) this.parentOf.delete(child);
      }
    };
  }

  /** Ends every stream (their clients reconnect, with Last-Event-ID, to another replica). */
  async close(): Promise<void> {
    this.closed = true;
    const watched = [...this.watched.values()];
    this.watched.clear();
    for (const w of watched) {
      clearTimeout(w.timer);
      for (const listener of w.listeners) listener(undefined);
    }
    for (const pending of [this.reader, this.collectionReader]) {
      const reader = await pending?.catch(() => undefined);
      if (!reader) continue;
      await reader.events.close().catch(() => undefined);
      await reader.connection.quit().catch(() => reader.connection.disconnect());
    }
  }

  private start(): Promise<{ events: QueueEvents; connection: RedisClient }> {
    if (this.closed)
      return Promise.reject(new ReelayError('service_unavailable', 'The gateway is stopping; reconnect to another.'));
    this.reader ??= this.open(this.queue).catch((err: unknown) => {
      this.reader = undefined; // the next stream tries again
      throw new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', {
        cause: err,
      });
    });
    return this.reader;
  }

  private async open(queue: Queue): Promise<{ events: QueueEvents; connection: RedisClient }> {
    // Start after the stream's current last entry, read before the reader exists, so nothing between
    // the first listener's state read and the reader's first XREAD is lost.
    const last = (await this.redis.xrevrange(queue.keys.events, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
    // A blocking XREAD needs its own connection that waits out outages (BullMQ requires
    // maxRetriesPerRequest: null); it resumes from its last id when Redis is back. No command
    // timeout: the XREAD blocks for blockingTimeout on purpose, and a shorter timeout would cut it.
    const connection = duplicateRedis(this.redis, {
      maxRetriesPerRequest: null,
      enableOfflineQueue: true,
      commandTimeout: undefined,
    });
    connection.on('error', () => {}); // reported by the queue's own client; reconnects by itself
    const events = new QueueEvents(queue.name, {
      connection,
      prefix: queue.opts.prefix,
      lastEventId: last,
      blockingTimeout: 5_000,
    });
    events.on('error', (err: Error) => this.logger.warn({ err: err.message }, 'job events: redis connection problem'));
    for (const name of CHANGES)
      events.on(name, ({ jobId }: { jobId: string }) => this.changed(jobId, name === 'progress'));
    return { events, connection };
  }

  private changed(jobId: string, progressOnly: boolean): void {
    const id = this.watched.has(jobId) ? jobId : (this.parentOf.get(jobId) ?? jobId);
    const watched = this.watched.get(id);
    if (!watched) return;
    if (watched.reading)
      return void (watched.again = progressOnly && watched.again !== 'status' ? 'progress' : 'status');
    const wait = progressOnly ? watched.lastReadAt + PROGRESS_GAP_MS - Date.now() : 0;
    if (wait > 0) {
      watched.timer ??= setTimeout(() => {
        watched.timer = undefined;
        this.changed(id, false);
      }, wait);
      return;
    }
    clearTimeout(watched.timer);
    watched.timer = undefined;
    void this.read(id, watched);
  }

  private async read(id: string, watched: Watched): Promise<void> {
    watched.reading = true;
    watched.again = undefined;
    watched.lastReadAt = Date.now();
    let snapshot: JobSnapshot | undefined;
    try {
      snapshot = await this.jobs.snapshot(id);
    } catch (err) {
      if (!(err instanceof ReelayError && err.code === 'job_not_found')) {
        this.logger.warn({ err: (err as Error).message, job: logRef(id) }, 'job events: could not read the job');
        watched.reading = false;
        // Redis blinked: try again shortly rather than wait for a change that may have been the last.
        watched.timer ??= setTimeout(() => {
          watched.timer = undefined;
          if (this.watched.get(id) === watched) this.changed(id, false);
        }, 1_000);
        return;
      }
    }
    watched.reading = false;
    for (const listener of [...watched.listeners]) listener(snapshot);
    if (watched.again && this.watched.get(id) === watched) this.changed(id, watched.again === 'progress');
  }
}
