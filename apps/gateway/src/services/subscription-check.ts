// A subscription's check (DESIGN.md "Subscriptions"): list the collection fresh through the egress
// guard, page by page until a page holds an entry already in the archive (bounded), start a one-step
// job for each entry not yet in it (at most MAX_ITEMS_PER_CHECK, the oldest first), record them. It runs in the gateway, where listCollection and the download
// planner live: each replica runs a BullMQ worker on SUBSCRIPTION_QUEUE, and the queue's job
// scheduler hands each due check to exactly one of them. Entries are claimed with HSETNX, so even a
// "check now" racing a scheduled check starts each entry once.
import { createHash } from 'node:crypto';
import { Worker } from 'bullmq';
import type { RedisClient } from '@reelay/redis';
import {
  chooseSource,
  JobPayloadSchema,
  ReelayError,
  type ChosenSource,
  type CollectionEntry,
  type DownloadRequest,
} from '@reelay/contracts';
import { countWorkerErrors, type Logger, type prom } from '@reelay/observability';
import type { DownloadService } from './download.js';
import type { ExtractService } from './extract.js';
import { resolvePageUrl } from './one-step.js';
import { SUBSCRIPTION_QUEUE, type SubscriptionRecord, type SubscriptionStore } from './subscriptions.js';
import { duplicateRedis } from '@reelay/redis';

export interface CheckDeps {
  store: SubscriptionStore;
  extracts: Pick<ExtractService, 'listCollection' | 'extract'>;
  downloads: Pick<DownloadService, 'plan' | 'enqueue'>;
  maxItemsPerCheck: number;
  /** MAX_COLLECTION_ENTRIES: most entries one check lists across its pages (default 200). */
  maxEntries?: number;
  logger: Logger;
}

/** Most pages one check lists (each page of a listing is at most 100 entries; some sites give 20). */
export const MAX_CHECK_PAGES = 10;

/** An entry not yet in the archive, with the extraction its page's files were recorded under. */
interface FreshEntry {
  entry: CollectionEntry;
  extractionId: string;
}

/** The archive's key of an entry: its id on the site when it has one, else its URL. */
export function entryKey(entry: Pick<CollectionEntry, 'id' | 'url'>): string {
  return entry.id ? `id:${entry.id}` : `url:${entry.url}`;
}

/** The error a check records: the code and message of a ReelayError, else a plain one. */
function describe(err: unknown): string {
  if (err instanceof ReelayError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

export class SubscriptionChecker {
  constructor(private readonly deps: CheckDeps) {}

  /** Runs one check; a failure is recorded on the subscription (never thrown), a missing one is skipped. */
  async check(id: string, options: { manual?: boolean } = {}): Promise<{ started: number; seen: number }> {
    const { store, logger } = this.deps;
    const record = await store.get(id);
    if (!record || (record.status === 'paused' && !options.manual)) return { started: 0, seen: 0 };
    try {
      const { fresh: all, listed } = await this.list(record);
      // The oldest first (listings are newest first): what is left for the next check is then always
      // above what is in the archive, so the next check's listing, which stops at the archive, reaches it.
      const fresh = all.slice(-this.deps.maxItemsPerCheck).reverse();
      let started = 0;
      for (const [at, { entry, extractionId }] of fresh.entries()) {
        const key = entryKey(entry);
        if (!(await store.claim(id, key, entry))) continue;
        try {
          const jobId = await this.start(record, entry, extractionId);
          await store.recordItem(id, key, { url: entry.url, title: entry.title, seen_at: Date.now(), job_id: jobId });
          started++;
        } catch (err) {
          if (err instanceof ReelayError && err.code === 'too_many_jobs') {
            // The owner's slots are full (their subscriptions' jobs count against them as one
            // client): this entry and the rest wait, unclaimed, for a later check.
            await store.unclaim(id, key);
            logger.info({ subscription: id, waiting: fresh.length - at }, 'subscription entries wait for a free slot');
            break;
          }
          // One entry that cannot be downloaded is that item's failure, not the check's.
          if (!(err instanceof ReelayError) || err.code === 'service_unavailable') throw err;
          await store.recordItem(id, key, {
            url: entry.url,
            title: entry.title,
            seen_at: Date.now(),
            status: 'failed',
          });
          logger.warn({ subscription: id, entry: entry.url, error: err.code }, 'subscription entry not started');
        }
      }
      await store.checked(record);
      return { started, seen: listed };
    } catch (err) {
      const message = describe(err);
      const after = await store.checked(record, message);
      logger.warn({ subscription: id, failures: after.failures, error: message }, 'subscription check failed');
      if (options.manual) throw err;
      return { started: 0, seen: 0 };
    }
  }

  /**
   * The entries not yet in the archive, in listing order: pages are listed until one holds an entry
   * already in the archive (past it, a newest-first listing holds what earlier checks saw), the
   * listing ends, or MAX_COLLECTION_ENTRIES entries or MAX_CHECK_PAGES pages are listed. `listed`:
   * how many entries were read. A listing that adds its entries at its end is read as far as its
   * first page, as before paging: its first page is already in the archive.
   */
  private async list(record: SubscriptionRecord): Promise<{ fresh: FreshEntry[]; listed: number }> {
    const maxEntries = this.deps.maxEntries ?? 200;
    const fresh: FreshEntry[] = [];
    let listed = 0;
    let cursor: string | undefined;
    for (let pages = 0; pages < MAX_CHECK_PAGES && listed < maxEntries; pages++) {
      const page = await this.deps.extracts.listCollection(record.url, cursor, undefined, { fresh: true });
      if (!page) throw new ReelayError('invalid_request', 'The URL no longer lists a collection.');
      const entries = page.entries.slice(0, maxEntries - listed);
      listed += entries.length;
      const known = await this.deps.store.known(record.id, entries.map(entryKey));
      entries.forEach((entry, i) => known[i] || fresh.push({ entry, extractionId: page.extraction_id }));
      cursor = page.collection.next_cursor;
      if (!cursor || known.some(Boolean)) break;
    }
    return { fresh, listed };
  }

  /** Starts the entry's job with the preset: the collection's own files when it names them, else the entry's page. */
  private async start(record: SubscriptionRecord, entry: CollectionEntry, extractionId: string): Promise<string> {
    const preset = record.preset;
    const common = {
      format: preset.format,
      metadata: preset.metadata,
      subtitles: preset.subtitles,
      webhook_url: record.webhook_url,
      webhook_secret: record.webhook_secret,
    };
    let body: DownloadRequest;
    let chosen: ChosenSource | undefined;
    const item = entry.media?.[0];
    if (item) {
      const choice = chooseSource(item, {
        quality: preset.quality,
        audio_only: preset.audio_only,
        format: preset.format,
      });
      if (choice.kind === 'none')
        throw new ReelayError('no_matching_source', `No source of ${entry.url} fits: ${choice.reason}`);
      const urls =
        choice.kind === 'source'
          ? { url: choice.source.url }
          : { video_url: choice.video.url, audio_url: choice.audio.url };
      body = { ...common, ...urls, extraction_id: extractionId } as DownloadRequest;
      chosen = { quality: choice.quality, ...urls };
    } else {
      ({ body, chosen } = await resolvePageUrl(
        this.deps.extracts as ExtractService,
        { ...common, page_url: entry.url, quality: preset.quality, audio_only: preset.audio_only } as DownloadRequest,
      ));
    }
    const plan = await this.deps.downloads.plan(body, chosen, { job: true });
    if (plan.kind !== 'job') throw new ReelayError('invalid_request', 'The entry could not become a job.');
    // Each subscription's item is its own job: another subscription (or client) asking for the same file
    // does not swallow this one's webhook.
    const request_key = createHash('sha256').update(`${plan.payload.request_key}:sub:${record.id}`).digest('base64url');
    const payload = JobPayloadSchema.parse({ ...plan.payload, request_key });
    const webhook = record.webhook_url
      ? { url: record.webhook_url, secret: record.webhook_secret, subscription_id: record.id }
      : undefined;
    // Its owner controls it (their key or session) and its slot counts against them.
    return (await this.deps.downloads.enqueue(payload, { accountId: record.account_id, subscription: true }, webhook))
      .id;
  }
}

/** How long a stop waits for BullMQ's close before dropping the checks' connection. */
const CLOSE_WAIT_MS = 3_000;

/**
 * This process's share of the scheduled checks: a BullMQ worker on SUBSCRIPTION_QUEUE. Every replica
 * runs one; the scheduler's single delayed job goes to one of them. Its connection is its own, one
 * that waits through a Redis outage (the gateway's client fails fast); it keeps the command timeout,
 * and BullMQ's blocking fetch runs on a duplicate of it that has none (@reelay/redis).
 */

export function startSubscriptionChecks(
  checker: SubscriptionChecker,
  options: {
    redis: RedisClient;
    prefix?: string;
    logger: Logger;
    concurrency?: number;
    /** reelay_queue_worker_errors_total: each error the worker reports counts under its queue. */
    errors?: prom.Counter<'queue'>;
  },
): { worker: Worker; close(): Promise<void> } {
  const connection = duplicateRedis(options.redis, { maxRetriesPerRequest: null, enableOfflineQueue: true });
  connection.on('error', (err: Error) =>
    options.logger.warn({ err: err.message }, 'subscription checks: redis connection problem'),
  );
  const worker = new Worker<{ id: string }>(SUBSCRIPTION_QUEUE, async (job) => checker.check(job.data.id), {
    connection,
    prefix: options.prefix,
    concurrency: options.concurrency ?? 2,
  });
  worker.on('error', (err: Error) => options.logger.warn({ err: err.message }, 'subscription checks: worker problem'));
  if (options.errors) countWorkerErrors(worker, SUBSCRIPTION_QUEUE, options.errors);
  return {
    worker,
    close: async () => {
      // With Redis gone BullMQ's close waits for it forever (this connection retries without end):
      // give it a few seconds, then drop the connection, so a gateway always stops.
      let timer: NodeJS.Timeout | undefined;
      const gaveUp = new Promise<'gave up'>((resolve) => (timer = setTimeout(() => resolve('gave up'), CLOSE_WAIT_MS)));
      const outcome = await Promise.race([worker.close().then(() => 'closed' as const), gaveUp]);
      clearTimeout(timer);
      if (outcome === 'gave up') {
        options.logger.warn('subscription checks: Redis did not answer the close; dropping the connection');
        connection.disconnect();
        return;
      }
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
