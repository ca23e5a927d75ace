// `reelay get`: extract, choose, then either save the direct stream or follow the job's events and
// save its artifact. Data (the saved path) goes to stdout; everything said along the way to stderr.
import type { Api, DownloadBody, JobView } from './api.js';
import { choose } from './choose.js';
import { CliError } from './errors.js';
import { followJob } from './events.js';
import { createProgress, type Progress } from './progress.js';
import { saveArtifact, saveStream } from './save.js';

export interface GetOptions {
  format?: string;
  quality?: string;
  clip?: { start: number; end: number };
  subs?: string[];
  output?: string;
}

/** Follows a job to its end with a progress bar; throws the job's error when it failed. */
export async function waitForJob(api: Api, id: string, progress: Progress): Promise<JobView> {
  let started = false;
  let job: JobView;
  try {
    job = await followJob(api, id, (j) => {
      if (!started) progress.start(`job ${id}`, 'percent', 100, j.progress);
      started = true;
      progress.update(j.progress, j.status);
    });
  } finally {
    // Also on Ctrl-C: the bar gives the terminal its cursor and line wrapping back.
    progress.stop();
  }
  if (job.status === 'failed') throw new CliError(job.error?.message ?? 'the job failed.', `See it with \`reelay job ${id}\`.`, job.error?.code);
  if (job.status === 'cancelled') throw new CliError(`job ${id} was cancelled (DELETE /api/v1/jobs/${id}, or \`reelay job ${id} --cancel\`).`, 'Run the same command again to start it anew.');
  if (job.status === 'expired') throw new CliError(`job ${id} has expired: its file was removed.`, 'Run the same command again to make it anew.');
  return job;
}

/** `stopped` holds what to tell the person if Ctrl-C comes now. */
export async function get(api: Api, url: string, options: GetOptions, say: (line: string) => void, stopped: { hint?: string } = {}): Promise<string> {
  const progress = createProgress();
  say(`extracting ${url}`);
  const result = await api.extract(url);
  const choice = choose(result, options);
  say(`picked ${choice.label}`);
  const body: DownloadBody = { ...choice.body, ...(result.extraction_id ? { extraction_id: result.extraction_id } : {}), ...(options.clip ? { clip: options.clip } : {}), ...(options.subs ? { subtitles: options.subs } : {}) };
  const started = await api.download(body);
  if ('stream' in started) return saveStream(started.stream, options.output, progress);
  say(`the server is making the file: job ${started.jobId}`);
  stopped.hint = `job ${started.jobId} goes on on the server; the same command picks it up again.`;
  const job = await waitForJob(api, started.jobId, progress);
  stopped.hint = 'the part file is kept; the same command again downloads only the rest.';
  return saveArtifact(api, job, options.output, progress);
}
