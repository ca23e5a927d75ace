// The parent of a collection download (COLLECTION_QUEUE). BullMQ hands it to a worker only once no
// child is left waiting or running (the flow), so its one run sums up: which entries completed,
// which failed (ignored failures: a child's failure never fails its siblings), the archive updated.
import { UnrecoverableError, type Job } from 'bullmq';
import type { RedisClient } from '@reelay/redis';
import {
  CANCELLED_CODE,
  CANCELLED_MESSAGE,
  jobSignalKey,
  archiveKey,
  ChildRecordsSchema,
  collectionChildrenKey,
  CollectionPayloadSchema,
  decodeJobError,
  encodeJobError,
  JobResultSchema,
  type CollectionResult,
} from '@reelay/contracts';
import type { ArtifactStore } from '@reelay/artifacts';
import { logRef, type Logger } from '@reelay/observability';
import { writeBundle, type BundleEntry } from './bundle.js';
import type { WorkerMetrics } from './metrics.js';
import { bundleIdentity, type ArtifactReuse } from './reuse.js';

export interface CollectionProcessorDeps {
  /** The ZIP bundle's bound (MAX_MEDIA_BYTES). */
  maxBundleBytes?: number;
  redis: RedisClient;
  prefix?: string;
  logger: Logger;
  /** Where the bundle goes (bundle "zip"), and how long it lives (ARTIFACT_TTL_SECONDS). */
  artifacts: ArtifactStore;
  artifactTtlSeconds: number;
  /** How long an archive is kept after its last addition (seconds). */
  archiveTtlSeconds?: number;
  /** A ZIP of the same entries that still lives is copied, not written again (reuse.ts). */
  reuse?: Pick<ArtifactReuse, 'takeBundle' | 'keepBundle'>;
  metrics?: Pick<WorkerMetrics, 'artifactsReused'>;
}

/** The child job's id from BullMQ's key of it (`<prefix>:<queue>:<id>`). */
const idOfKey = (key: string) => key.slice(key.lastIndexOf(':') + 1);

export function createCollectionProcessor(deps: CollectionProcessorDeps): (job: Job) => Promise<CollectionResult> {
  return async (job) => {
    const parsed = CollectionPayloadSchema.safeParse(job.data);
    if (!parsed.success || parsed.data.id !== job.id)
      throw new UnrecoverableError(
        encodeJobError({ code: 'invalid_request', message: 'The collection payload is invalid.' }),
      );
    const payload = parsed.data;
    // Cancelled (DELETE on the parent): its children were cancelled with it; it ends cancelled too.
    if (await deps.redis.exists(jobSignalKey('cancel', payload.id)))
      throw new UnrecoverableError(encodeJobError({ code: CANCELLED_CODE, message: CANCELLED_MESSAGE }));
    const raw = await deps.redis.get(collectionChildrenKey(deps.prefix, payload.id));
    const records = raw ? ChildRecordsSchema.parse(JSON.parse(raw)) : [];
    const values = await job.getChildrenValues();
    const failures = await job.getIgnoredChildrenFailures();
    const done = new Set(
      Object.entries(values)
        .filter(([, v]) => JobResultSchema.safeParse(v).success)
        .map(([k]) => idOfKey(k)),
    );
    const failed = new Map(Object.entries(failures).map(([k, reason]) => [idOfKey(k), reason]));
    let completed = 0;
    let skipped = 0;
    let firstError: string | undefined;
    const archived: string[] = [];
    const bundled: BundleEntry[] = [];
    for (const r of records) {
      if (r.status === 'skipped') skipped++;
      else if (r.job_id && done.has(r.job_id)) {
        completed++;
        if (r.key) archived.push(r.key);
        bundled.push({ index: r.index, title: r.title, job_id: r.job_id, request_key: r.request_key });
      } else firstError ??= r.job_id ? failed.get(r.job_id) : r.error && encodeJobError(r.error);
    }
    if (payload.archive && archived.length) {
      const key = archiveKey(payload.archive);
      await deps.redis
        .multi()
        .sadd(key, ...archived)
        .expire(key, deps.archiveTtlSeconds ?? 365 * 86_400)
        .exec();
    }
    const result: CollectionResult = { completed, failed: records.length - completed - skipped, skipped };
    if (payload.bundle === 'zip' && bundled.length) {
      // The same entries (each the same request) under the same title make the same ZIP.
      const identity = bundleIdentity(payload.title, deps.maxBundleBytes ?? Infinity, bundled);
      const reused =
        identity &&
        (await deps.reuse?.takeBundle(identity, payload.id).catch((err: unknown) => {
          deps.logger.warn({ jobId: job.id, err: (err as Error).message }, 'could not reuse a bundle; writing it');
          return undefined;
        }));
      if (reused) {
        deps.metrics?.artifactsReused.inc({ kind: 'bundle' });
        deps.logger.info(
          { jobId: job.id, reused_from: reused.reused_from },
          'collection bundle reused: the same entries',
        );
      }
      const meta =
        reused ||
        (await writeBundle(
          deps.artifacts,
          payload.id,
          payload.title,
          bundled,
          Date.now() + deps.artifactTtlSeconds * 1000,
          deps.maxBundleBytes,
        ));
      if (meta && identity)
        await deps.reuse
          ?.keepBundle(identity, meta)
          .catch((err: unknown) => deps.logger.warn({ err: (err as Error).message }, 'could not remember the bundle'));
      if (meta?.left_out)
        deps.logger.warn(
          { job: logRef(String(job.id)), leftOut: meta.left_out },
          'collection bundle: entries past MAX_MEDIA_BYTES left out of the ZIP',
        );
      if (meta)
        result.artifact = {
          filename: meta.filename,
          content_type: meta.content_type,
          size: meta.size,
          expires_at: meta.expires_at,
        };
    }
    deps.logger.info({ job: logRef(String(job.id)), ...result }, 'collection finished');
    if (completed === 0 && skipped < records.length) {
      const cause = decodeJobError(firstError);
      throw new UnrecoverableError(
        encodeJobError({ code: cause.code, message: `Every entry failed; the first: ${cause.message}` }),
      );
    }
    return result;
  };
}
