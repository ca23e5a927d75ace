// The parent Job of a collection download as clients (and its webhook) see it, from the parent's
// BullMQ state and its children's: counted (entries), averaged (progress), listed in entry order.
import {
  ChildRecordsSchema,
  CollectionResultSchema,
  type ChildStatus,
  type CollectionPayload,
} from './collection-download.js';
import { decodeJobError, type JobView } from './download.js';
import { isCancelledReason } from './job-signals.js';

export interface ChildView {
  index: number;
  url: string;
  title?: string;
  status: ChildStatus;
  job_id?: string;
  error?: { code: string; message: string };
  progress: number;
}

const iso = (ms: number | undefined): string | undefined => (ms ? new Date(ms).toISOString() : undefined);

/** A child job's status as its own Job view would say (expired counts as completed: its file was made). */
export function childStatus(state: string, job: { failedReason?: string } | undefined): ChildStatus {
  if (state === 'active') return 'processing';
  if (state === 'completed') return 'completed';
  if (state === 'failed') return isCancelledReason(job?.failedReason) ? 'cancelled' : 'failed';
  if (state === 'unknown') return 'cancelled';
  return 'queued';
}

/** The parent's Job: `state` is the parent's BullMQ state, `children` its entries now. */
export function collectionView(
  id: string,
  job: {
    data: Pick<CollectionPayload, 'title'>;
    timestamp: number;
    processedOn?: number;
    finishedOn?: number;
    returnvalue: unknown;
    failedReason?: string;
  },
  state: string,
  children: ChildView[],
  now = Date.now(),
): JobView {
  const count = (s: ChildStatus[]) => children.filter((c) => s.includes(c.status)).length;
  const entries = {
    total: children.length,
    queued: count(['queued']),
    running: count(['processing']),
    completed: count(['completed', 'expired']),
    failed: count(['failed', 'cancelled']),
    skipped: count(['skipped']),
  };
  const counted = children.filter((c) => c.status !== 'skipped');
  const progress = counted.length ? Math.round(counted.reduce((sum, c) => sum + c.progress, 0) / counted.length) : 100;
  // Once a child has started the parent is processing until it ends (never queued again between
  // children: its event ids only grow).
  const begun = children.some((c) => c.job_id && c.status !== 'queued');
  const view: JobView = {
    id,
    status: begun ? 'processing' : 'queued',
    operation: 'collection',
    progress: Math.max(0, Math.min(100, progress)),
    created_at: iso(job.timestamp)!,
    title: job.data.title,
    entries,
  };
  const started = begun ? job.timestamp : job.processedOn;
  if (started) view.started_at = iso(started);
  if (state === 'active') view.status = 'processing';
  else if (state === 'completed') {
    view.finished_at = iso(job.finishedOn);
    const result = CollectionResultSchema.safeParse(job.returnvalue);
    view.status = 'completed';
    view.progress = 100;
    if (result.success && result.data.artifact) {
      if (result.data.artifact.expires_at > now) {
        const a = result.data.artifact;
        view.artifact = {
          url: `/api/v1/jobs/${id}/artifact`,
          filename: a.filename,
          content_type: a.content_type,
          size: a.size,
          expires_at: new Date(a.expires_at).toISOString(),
        };
      } else view.status = 'expired';
    }
    if (entries.failed > 0) view.partial = true;
  } else if (state === 'failed' && isCancelledReason(job.failedReason)) {
    view.status = 'cancelled';
    view.finished_at = iso(job.finishedOn);
  } else if (state === 'failed') {
    view.status = 'failed';
    view.finished_at = iso(job.finishedOn);
    view.error = decodeJobError(job.failedReason);
  }
  return view;
}

/** The children from their records (`raw`, as stored) and each child job's state (`lookup`). */
export async function readChildren(
  raw: string | null | undefined,
  lookup: (jobId: string) => Promise<{ state: string; job?: { progress: unknown; failedReason?: string } }>,
): Promise<ChildView[]> {
  const records = raw ? ChildRecordsSchema.parse(JSON.parse(raw)) : [];
  return Promise.all(
    records.map(async (r): Promise<ChildView> => {
      const base = { index: r.index, url: r.url, ...(r.title ? { title: r.title } : {}) };
      if (!r.job_id)
        return { ...base, status: r.status ?? 'failed', ...(r.error ? { error: r.error } : {}), progress: 100 };
      const { state, job } = await lookup(r.job_id);
      const status = childStatus(state, job);
      const view: ChildView = {
        ...base,
        status,
        job_id: r.job_id,
        progress:
          status === 'queued'
            ? 0
            : status === 'processing'
              ? typeof job?.progress === 'number'
                ? job.progress
                : 0
              : 100,
      };
      if (status === 'failed') view.error = decodeJobError(job?.failedReason);
      return view;
    }),
  );
}
