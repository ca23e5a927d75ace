// Collection downloads: the gateway lists the collection (page by page, bounded by
// MAX_COLLECTION_ENTRIES), resolves each selected entry to a one-step download job, and writes the
// parent and its children as ONE BullMQ flow, so Redis alone carries it from there: the parent moves
// to the worker in the same step that ends its last child, whatever process dies in between.
import { randomBytes } from 'node:crypto';
import type { FlowJob, FlowProducer, JobsOptions, Queue } from 'bullmq';
import type { RequestedWebhook } from './webhooks.js';
import type { RedisClient } from '@reelay/redis';
import {
  archiveKey,
  chooseSource,
  COLLECTION_QUEUE,
  describePick,
  collectionChildrenKey,
  collectionGateKey,
  CollectionPayloadSchema,
  DOWNLOAD_QUEUE,
  JobPayloadSchema,
  parseEntrySelection,
  ReelayError,
  type ChildRecord,
  type CollectionEntry,
  type DownloadRequest,
  type JobPayload,
  type MediaItem,
  WEBHOOK_ATTEMPTS,
  WEBHOOK_QUEUE,
  type WebhookJob,
} from '@reelay/contracts';
import type { ClientJobs } from './client-jobs.js';
import { slotHolder, type DownloadService, type JobRequester } from './download.js';
import type { JobGrants } from './job-grants.js';
import type { CollectionPage, ExtractService } from './extract.js';
import { itemOf } from './one-step.js';

export interface CollectionDownloadDeps {
  extracts: Pick<ExtractService, 'listCollection' | 'extract'>;
  downloads: Pick<DownloadService, 'planJob'>;
  flows: FlowProducer;
  queue: Queue;
  redis: RedisClient;
  prefix?: string;
  maxEntries: number;
  jobTimeoutSeconds: number;
  artifactTtlSeconds: number;
  attempts?: number;
  clientJobs?: ClientJobs;
  /** Who may cancel the collection: its token and account, which control its entries' jobs too. */
  grants: JobGrants;
  /** COLLECTION_CONCURRENCY: children of one collection in flight at once (default 4). */
  concurrency?: number;
  /**
   * Entries without files of their own are extracted at the request, within this budget (default
   * 60 s); those not resolved by then are failed entries (upstream_timeout), so a huge playlist of
   * slow pages answers in bounded time.
   */
  resolveBudgetMs?: number;
  /** Entries without files of their own are extracted this many at a time. */
  resolveConcurrency?: number;
}

/** The key an archive remembers an entry by: platform and id, else its canonical URL. */
export function entryKey(platform: string, entry: Pick<CollectionEntry, 'id' | 'url'>): string {
  if (entry.id) return `${platform}:${entry.id}`;
  try {
    const u = new URL(entry.url);
    u.hash = '';
    return u.href;
  } catch {
    return entry.url;
  }
}

/** Runs `fn` over `items`, at most `n` at a time, in order of the results. */
async function pool<T, R>(items: T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, run));
  return out;
}

const asError = (err: unknown) =>
  err instanceof ReelayError
    ? { code: err.code, message: err.message }
    : { code: 'internal_error', message: 'The entry could not be resolved.' };

export class CollectionDownloads {
  constructor(private readonly deps: CollectionDownloadDeps) {}

  /** The collection's first page, or undefined when the URL is not a collection. */
  firstPage(url: string, signal?: AbortSignal): Promise<CollectionPage | undefined> {
    return this.deps.extracts.listCollection(url, undefined, signal);
  }

  /** The entries to download: the pages needed for the selection, never more than MAX_COLLECTION_ENTRIES. */
  private async list(
    first: CollectionPage,
    wanted: number[] | undefined,
    signal?: AbortSignal,
  ): Promise<{ entries: CollectionEntry[]; extraction: Map<number, string> }> {
    const { maxEntries } = this.deps;
    const last = wanted ? wanted[wanted.length - 1] : maxEntries;
    const entries: CollectionEntry[] = [];
    const extraction = new Map<number, string>();
    let page: CollectionPage | undefined = first;
    let truncated = false;
    // Each page is at most 100 entries and the listing stops at the last entry wanted; the page
    // count is bounded again in case a listing returns empty pages with cursors.
    for (let pages = 0; page && pages < Math.ceil(maxEntries / 100) + 50; pages++) {
      for (const e of page.entries) {
        entries.push(e);
        extraction.set(e.index, page.extraction_id);
      }
      truncated ||= page.collection.truncated === true;
      const biggest = entries.length ? entries[entries.length - 1].index : 0;
      if (!page.collection.next_cursor || biggest >= last) break;
      page = await this.deps.extracts.listCollection(first.url, page.collection.next_cursor, signal);
    }
    if (!wanted && (truncated || Math.max(entries.length, first.collection.entry_count ?? 0) > maxEntries)) {
      throw new ReelayError(
        'invalid_request',
        `This collection has more than MAX_COLLECTION_ENTRIES (${maxEntries}) entries: select at most ${maxEntries} with entries, e.g. "1-${maxEntries}".`,
      );
    }
    return { entries, extraction };
  }

  /** The item an entry downloads: the files the collection named, else its own page's first item. */
  private async itemOf(
    entry: CollectionEntry,
    extractionId: string,
    signal?: AbortSignal,
  ): Promise<{ item: MediaItem; extraction_id: string }> {
    if (entry.media?.length) return { item: entry.media[0], extraction_id: extractionId };
    const { result } = await this.deps.extracts.extract(entry.url, signal);
    return { item: itemOf(result, 0), extraction_id: result.extraction_id! };
  }

  private async child(
    entry: CollectionEntry,
    extractionId: string,
    body: DownloadRequest,
    signal?: AbortSignal,
  ): Promise<JobPayload> {
    const { item, extraction_id } = await this.itemOf(entry, extractionId, signal);
    const choice = chooseSource(item, { quality: body.quality, audio_only: body.audio_only, format: body.format });
    if (choice.kind === 'none')
      throw new ReelayError(
        'no_matching_source',
        `No source of entry ${entry.index} fits: ${choice.reason} It has: ${choice.available.join(', ')}.`,
      );
    const urls =
      choice.kind === 'source'
        ? { url: choice.source.url }
        : { video_url: choice.video.url, audio_url: choice.audio.url };
    const request: DownloadRequest = {
      ...urls,
      extraction_id,
      format: body.format,
      metadata: body.metadata,
      subtitles: body.subtitles,
    };
    return this.deps.downloads.planJob(request, {
      quality: choice.quality,
      ...urls,
      description: describePick(choice),
    });
  }

  /** Starts the parent and its children; answers the parent's id and its control token. */
  async start(
    body: DownloadRequest,
    first: CollectionPage,
    requester: JobRequester,
    signal?: AbortSignal,
    webhook?: RequestedWebhook,
  ): Promise<{ id: string; token: string }> {
    const { redis, maxEntries } = this.deps;
    const wanted = parseEntrySelection(body.entries, maxEntries);
    const { entries, extraction } = await this.list(first, wanted, signal);
    const byIndex = new Map(entries.map((e) => [e.index, e]));
    const selected: CollectionEntry[] = wanted
      ? wanted.map((n) => byIndex.get(n)).filter((e): e is CollectionEntry => e !== undefined)
      : entries;
    if (wanted && selected.length < wanted.length) {
      const missing = wanted.find((n) => !byIndex.has(n))!;
      throw new ReelayError(
        'invalid_request',
        `entry ${missing} is out of range: this collection lists ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}.`,
      );
    }
    if (selected.length === 0) throw new ReelayError('invalid_request', 'This collection has no entries to download.');
    const done = body.archive ? new Set(await redis.smembers(archiveKey(body.archive))) : new Set<string>();
    const records: ChildRecord[] = [];
    const children: JobPayload[] = [];
    const budgetMs = this.deps.resolveBudgetMs ?? 60_000;
    const budget = AbortSignal.timeout(budgetMs);
    const resolveSignal = signal ? AbortSignal.any([signal, budget]) : budget;
    const late = () => ({
      code: 'upstream_timeout',
      message: `This entry could not be resolved within the ${Math.round(budgetMs / 1000)} s a collection download may spend on its entries' pages; download it on its own.`,
    });
    await pool(selected, this.deps.resolveConcurrency ?? 4, async (entry) => {
      const key = entryKey(first.platform, entry);
      const record: ChildRecord = {
        index: entry.index,
        url: entry.url,
        ...(entry.title ? { title: entry.title.slice(0, 500) } : {}),
        key,
      };
      if (done.has(key)) record.status = 'skipped';
      else if (budget.aborted && !entry.media?.length) {
        record.status = 'failed';
        record.error = late();
      } else {
        try {
          const payload = await this.child(entry, extraction.get(entry.index)!, body, resolveSignal);
          // A file name that says which entry it is; the bundle names it again with the index.
          const named = JobPayloadSchema.parse({ ...payload, id: randomBytes(16).toString('base64url') });
          record.job_id = named.id;
          record.request_key = named.request_key;
          children.push(named);
        } catch (err) {
          if (signal?.aborted) throw err;
          record.status = 'failed';
          record.error = budget.aborted ? late() : asError(err);
        }
      }
      records.push(record);
    });
    records.sort((a, b) => a.index - b.index);
    const id = randomBytes(16).toString('base64url');
    const parent = CollectionPayloadSchema.parse({
      id,
      operation: 'collection',
      url: first.url,
      title: first.title.slice(0, 500),
      bundle: body.bundle ?? 'zip',
      archive: body.archive,
      webhook_url: body.webhook_url,
      created_at: Date.now(),
    });
    const keep = this.deps.jobTimeoutSeconds * 3 + this.deps.artifactTtlSeconds + 86_400;
    const slots = slotHolder(requester);
    let token: string;
    try {
      await this.deps.clientJobs?.admit(slots, id);
      // Granted before any of the jobs exists, so none is ever without its controller.
      token = await this.deps.grants.issue(id, requester.accountId);
      await this.deps.grants.adopt(
        id,
        children.map((c) => c.id),
      );
      // The first `concurrency` children wait in the queue at once; the rest are delayed behind the
      // gate, and each child's end releases the next (apps/worker/src/collection-gate.ts). Should a
      // release be lost with a dying process, the delay itself lets them go, a batch per job timeout.
      const concurrency = this.deps.concurrency ?? 4;
      const gated = children.slice(concurrency).map((c) => c.id);
      const multi = redis.multi().set(collectionChildrenKey(this.deps.prefix, id), JSON.stringify(records), 'EX', keep);
      if (gated.length)
        multi
          .rpush(collectionGateKey(this.deps.prefix, id), ...gated)
          .expire(collectionGateKey(this.deps.prefix, id), keep);
      await multi.exec();
      const fallbackMs = this.deps.jobTimeoutSeconds * 1000;
      const delayOf = (i: number) =>
        i < concurrency ? 0 : fallbackMs * (1 + Math.floor((i - concurrency) / concurrency));
      const options: JobsOptions = {
        attempts: this.deps.attempts ?? 3,
        backoff: { type: 'exponential', delay: 2_000 },
        removeOnComplete: { age: this.deps.artifactTtlSeconds + 86_400 },
        removeOnFail: { age: 86_400 },
      };
      const prefix = this.deps.prefix;
      const flow: FlowJob = {
        name: 'collection',
        queueName: COLLECTION_QUEUE,
        prefix: this.deps.prefix,
        data: parent,
        opts: { ...options, jobId: id },
        // A failed child neither fails its parent nor holds it: the parent runs when none is left.
        children: children.map((data, i) => ({
          name: 'download',
          queueName: DOWNLOAD_QUEUE,
          prefix: this.deps.prefix,
          data,
          opts: {
            ...options,
            jobId: data.id,
            ignoreDependencyOnFailure: true,
            ...(i >= concurrency ? { delay: delayOf(i) } : {}),
          },
        })),
      };
      // With a webhook the delivery (same id) is the flow's top: BullMQ releases it in the step that
      // ends the parent, completed or finally failed, as for any job's delivery (download.ts).
      const delivery: WebhookJob | undefined = webhook && {
        job_id: id,
        url: webhook.url,
        ...(webhook.secret ? { secret: webhook.secret } : {}),
      };
      await this.deps.flows
        .add(
          delivery
            ? {
                name: 'deliver',
                queueName: WEBHOOK_QUEUE,
                prefix,
                data: delivery,
                opts: {
                  jobId: id,
                  attempts: WEBHOOK_ATTEMPTS,
                  backoff: { type: 'webhook' },
                  removeOnComplete: options.removeOnComplete,
                  removeOnFail: { age: this.deps.artifactTtlSeconds + 86_400 },
                },
                children: [{ ...flow, opts: { ...flow.opts, ignoreDependencyOnFailure: true } }],
              }
            : flow,
        )
        .catch(async (err: unknown) => {
          await this.deps.clientJobs?.release(slots, id).catch(() => undefined);
          throw err;
        });
    } catch (err) {
      if (err instanceof ReelayError) throw err;
      throw new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', {
        cause: err,
      });
    }
    return { id, token };
  }
}
