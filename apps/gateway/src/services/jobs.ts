// Job records as clients see them (DESIGN.md's Job), read from BullMQ, which is the one store of
// job state: status, progress, timestamps, error and artifact.
import { Job, type Queue } from 'bullmq';
import type { ArtifactStore, StoredArtifact } from '@reelay/artifacts';
import { decodeJobError, JOB_ID_PATTERN, JobResultSchema, ReelayError, type JobPayload, type JobView } from '@reelay/contracts';

const iso = (ms: number | undefined): string | undefined => (ms ? new Date(ms).toISOString() : undefined);

export class JobService {
  constructor(
    private readonly queue: Queue,
    private readonly artifacts: ArtifactStore,
  ) {}

  /**
   * The job and its state. The state is read first: BullMQ writes a job's result before it marks it
   * completed, so a job read after a 'completed' state always has its result. (Read the other way
   * round, a job finishing in between looked completed without a result, i.e. expired.)
   */
  private async find(id: string): Promise<{ job: Job<JobPayload>; state: string } | undefined> {
    if (!JOB_ID_PATTERN.test(id)) return undefined;
    try {
      const state = await this.queue.getJobState(id);
      if (state === 'unknown') return undefined;
      const job = await Job.fromId<JobPayload>(this.queue, id);
      return job ? { job, state } : undefined;
    } catch (err) {
      throw new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', { cause: err });
    }
  }

  /** Whether a job exists and can still give its artifact (for de-duplication). */
  async alive(id: string): Promise<boolean> {
    const view = await this.view(id).catch(() => undefined);
    return view !== undefined && view.status !== 'failed' && view.status !== 'expired';
  }

  async view(id: string): Promise<JobView> {
    const found = await this.find(id);
    if (!found) throw new ReelayError('job_not_found', 'There is no job with this id.');
    const { job, state } = found;
    const view: JobView = {
      id,
      status: 'queued',
      operation: job.data.operation,
      progress: typeof job.progress === 'number' ? Math.max(0, Math.min(100, Math.round(job.progress))) : 0,
      created_at: iso(job.timestamp)!,
      started_at: iso(job.processedOn),
    };
    if (state === 'active') view.status = 'processing';
    else if (state === 'completed') {
      view.finished_at = iso(job.finishedOn);
      const result = JobResultSchema.safeParse(job.returnvalue);
      if (result.success && result.data.expires_at > Date.now()) {
        view.status = 'completed';
        view.progress = 100;
        view.artifact = {
          url: `/api/v1/jobs/${id}/artifact`,
          filename: result.data.filename,
          content_type: result.data.content_type,
          size: result.data.size,
          expires_at: new Date(result.data.expires_at).toISOString(),
        };
      } else {
        view.status = 'expired';
      }
    } else if (state === 'failed') {
      view.status = 'failed';
      view.finished_at = iso(job.finishedOn);
      view.error = decodeJobError(job.failedReason);
    }
    if (!view.started_at) delete view.started_at;
    return view;
  }

  /** The stored artifact of a completed job; 410 once expired, 409 while not finished. */
  async artifact(id: string): Promise<StoredArtifact> {
    const view = await this.view(id);
    if (view.status === 'expired') throw new ReelayError('artifact_expired', 'The artifact has expired; request the download again.');
    if (view.status === 'failed') throw new ReelayError('artifact_not_ready', 'The job failed, so it has no artifact; see the job for its error.');
    if (view.status !== 'completed') throw new ReelayError('artifact_not_ready', 'The job has not finished yet; poll the job until it is completed.');
    const stored = await this.artifacts.get(id).catch((err: unknown) => {
      // The store itself (S3) is unreachable: a temporary outage, not a server fault.
      throw new ReelayError('service_unavailable', 'The artifact store is unavailable; try again shortly.', { cause: err });
    });
    if (!stored || stored.meta.expires_at <= Date.now()) throw new ReelayError('artifact_expired', 'The artifact has expired; request the download again.');
    return stored;
  }
}
