// `reelay get`: one item is one request to the server's one-step download (page_url and a preset:
// the server extracts and chooses); several gallery items or --source N extract here and choose with
// the same shared function. Then either save the direct stream, or follow the job's events and save
// its artifact. Data (the saved paths) goes to stdout; everything said along the way to stderr.
import type { Quality } from '@reelay/contracts';
import type { Api, DownloadBody, ExtractResult, JobView } from './api.js';
import { chooseFor, pickSource } from './choose.js';
import { CliError } from './errors.js';
import { followJob } from './events.js';
import type { ClipOption, ItemSelection } from './options.js';
import { createProgress, formatBytes, type Progress } from './progress.js';
import { printable } from './show.js';
import { followCollection } from './collection.js';
import { saveArtifact, saveStream, type Saved } from './save.js';

export interface GetOptions {
  format?: string;
  quality: Quality;
  audioOnly?: boolean;
  clip?: ClipOption;
  subs?: string[];
  output?: string;
  /** --source N: this source of the extract table (from 1), not the preset's choice. */
  source?: number;
  /** --items: which items of a gallery (from 1); absent: the first. */
  items?: ItemSelection;
  /** The folder the command was run from: relative paths and saved files go there. */
  dir?: string;
  /** --duration and --from-start, for a live stream (sent as `live`). */
  duration?: number;
  fromStart?: boolean;
}

/** Follows a job to its end with a progress bar; throws the job's error when it failed. */
export async function waitForJob(
  api: Api,
  id: string,
  progress: Progress,
  onFirst?: (job: JobView) => void,
  until?: (job: JobView) => boolean,
): Promise<JobView> {
  let started = false;
  let job: JobView;
  try {
    job = await followJob(
      api,
      id,
      (j) => {
        if (!started) {
          onFirst?.(j);
          progress.start(j.operation === 'record' ? `recording ${id}` : `job ${id}`, 'percent', 100, j.progress);
        }
        started = true;
        const recorded = j.recording
          ? `${j.status}, ${Math.round(j.recording.seconds)} s recorded${j.recording.gaps.length ? `, ${j.recording.gaps.length} gap(s)` : ''}`
          : j.status;
        progress.update(j.progress, recorded);
      },
      until,
    );
  } finally {
    // Also on Ctrl-C: the bar gives the terminal its cursor and line wrapping back.
    progress.stop();
  }
  if (job.status === 'failed')
    throw new CliError(job.error?.message ?? 'the job failed.', `See it with \`reelay job ${id}\`.`, job.error?.code);
  if (job.status === 'cancelled')
    throw new CliError(
      `job ${id} was cancelled (DELETE /api/v1/jobs/${id}, or \`reelay job ${id} --cancel\`).`,
      'Run the same command again to start it anew.',
    );
  if (job.status === 'expired')
    throw new CliError(`job ${id} has expired: its file was removed.`, 'Run the same command again to make it anew.');
  return job;
}

/** What main.ts's Ctrl-C handler needs: a hint to print, or for a recording a graceful stop to ask for. */
export interface Interrupt {
  hint?: string;
  /** Set while a recording runs: the first Ctrl-C calls it instead of quitting. */
  onInterrupt?: () => void;
}

/**
 * What the server picked, in words: its description ("video (mp4) + audio (m4a), merged"), with the
 * conversion asked for; a server that sends only the quality label is quoted as it is.
 */
export function pickedText(quality: string, description: string | null | undefined, format?: string): string {
  const what = printable(description ?? (quality === 'original' ? 'the original file' : quality));
  return format ? `${what} → ${format}` : what;
}

/** What Ctrl-C leaves behind while a job runs on the server: how to come back to it, and how to end it. */
export function stillRunning(id: string, kind?: 'collection'): string {
  return kind === 'collection'
    ? `collection job ${id} is still running on the server: \`reelay job ${id}\` shows it, \`reelay job ${id} --cancel\` cancels it and its entries.`
    : `job ${id} is still running on the server: the same command picks it up again, \`reelay job ${id} --cancel\` cancels it.`;
}

/** One download request to its saved file. `picked` is told the server's choice, in words, once it is named. */
async function fetchOne(
  api: Api,
  body: DownloadBody,
  options: GetOptions,
  say: (line: string) => void,
  stopped: Interrupt,
  picked?: (quality: string) => void,
): Promise<Saved | Saved[]> {
  const progress = createProgress();
  const started = await api.download(body);
  if ('stream' in started) {
    const { headers } = started.stream;
    const quality = headers.get('reelay-source-quality');
    const bytes = Number(headers.get('content-length') ?? NaN);
    // Streamed as it is: no conversion to name, and its size is known.
    if (quality)
      picked?.(
        pickedText(quality, headers.get('reelay-source-description')) +
          (Number.isFinite(bytes) ? `, ${formatBytes(bytes)}` : ''),
      );
    return saveStream(started.stream, options.output, progress, options.dir);
  }
  say(`the server is making the file: job ${started.jobId}`);
  stopped.hint = stillRunning(started.jobId);
  const id = started.jobId;
  const isCollection = (j: JobView) => j.operation === 'collection';
  const job = await waitForJob(
    api,
    id,
    progress,
    (j) => {
      if (j.source) picked?.(pickedText(j.source.quality, j.source.description, options.format));
      if (j.operation !== 'record') return;
      say(
        `recording a live stream${body.live?.duration ? ` for ${body.live.duration} s` : ''}: Ctrl-C stops it and saves what was recorded (a second Ctrl-C quits without the file)`,
      );
      // Ctrl-C asks the server to stop and keeps following the job to its file.
      stopped.onInterrupt = () => {
        stopped.onInterrupt = undefined;
        say('stopping the recording…');
        api.stop(id).catch((err: unknown) => say(`could not stop the recording: ${(err as Error).message}`));
      };
    },
    isCollection,
  ).finally(() => (stopped.onInterrupt = undefined));
  if (isCollection(job)) {
    // A page_url that is a playlist or feed: the server started a collection job.
    stopped.hint = stillRunning(id, 'collection');
    return followCollection(api, id, { output: options.output, dir: options.dir }, say);
  }
  if (job.ended)
    say(
      `recording ended (${job.ended}): ${job.recording?.seconds ?? 0} s${job.recording?.gaps.length ? `, gaps at ${job.recording.gaps.map((g) => `${g.at} s (${g.seconds} s${g.track ? ` of ${g.track}` : ''} lost)`).join(', ')}` : ''}`,
    );
  stopped.hint = 'the part file is kept; the same command again downloads only the rest.';
  return saveArtifact(api, job, options.output, progress, options.dir);
}

/** The items a selection names, from 0; one out of range is an error naming how many there are. */
function selected(result: ExtractResult, items: ItemSelection | undefined): number[] {
  const count = result.media.length;
  if (items === 'all') return result.media.map((_, i) => i);
  const wanted = items ?? [1];
  const missing = wanted.find((n) => n > count);
  if (missing !== undefined)
    throw new CliError(
      `there is no item ${missing}: this page has ${count} item${count === 1 ? '' : 's'}.`,
      'See them with `reelay extract URL`.',
    );
  return wanted.map((n) => n - 1);
}

const extras = (options: GetOptions): DownloadBody => ({
  ...(options.clip ? { clip: options.clip } : {}),
  ...(options.subs ? { subtitles: options.subs } : {}),
  ...(options.duration !== undefined || options.fromStart
    ? {
        live: {
          ...(options.duration !== undefined ? { duration: options.duration } : {}),
          ...(options.fromStart ? { from_start: true } : {}),
        },
      }
    : {}),
});

/** `stopped` holds what to tell the person if Ctrl-C comes now. */
export async function get(
  api: Api,
  url: string,
  options: GetOptions,
  say: (line: string) => void,
  stopped: Interrupt = {},
): Promise<Saved[]> {
  const one = options.items === undefined || (options.items !== 'all' && options.items.length === 1);
  if (one && options.source === undefined) {
    const item = options.items === undefined ? 0 : (options.items as number[])[0] - 1;
    const body: DownloadBody = {
      page_url: url,
      // Named when --items gave it: a playlist or feed then answers that it selects entries (below).
      ...(item > 0 || options.items !== undefined ? { item } : {}),
      ...(options.quality !== 'best' ? { quality: options.quality } : {}),
      ...(options.audioOnly ? { audio_only: true } : {}),
      ...(options.format ? { format: options.format } : {}),
      ...extras(options),
    };
    say(`downloading ${url}`);
    try {
      return [await fetchOne(api, body, options, say, stopped, (what) => say(`the server picked ${what}`))].flat();
    } catch (err) {
      // --items N of a playlist or feed: it selects entries, which the extract below finds out.
      if (!(err instanceof CliError && /a collection selects with entries/.test(err.message))) throw err;
    }
  }
  say(`extracting ${url}`);
  const result = await api.extract(url);
  if (result.content_type === 'collection') {
    const entries = options.items === undefined || options.items === 'all' ? {} : { entries: options.items };
    const body = {
      collection_url: url,
      bundle: 'none',
      ...entries,
      ...(options.quality !== 'best' ? { quality: options.quality } : {}),
      ...(options.audioOnly ? { audio_only: true } : {}),
      ...(options.format ? { format: options.format } : {}),
      ...(options.subs ? { subtitles: options.subs } : {}),
    };
    const started = await api.download(body as DownloadBody);
    if (!('jobId' in started))
      throw new CliError('the server did not start a collection job for this playlist or feed.');
    stopped.hint = stillRunning(started.jobId, 'collection');
    return followCollection(api, started.jobId, { output: options.output, dir: options.dir }, say);
  }
  const indices = selected(result, options.items);
  const saved: Saved[] = [];
  for (const [n, index] of indices.entries()) {
    const item = result.media[index];
    const choice =
      options.source !== undefined
        ? pickSource(item, options.source, options.format)
        : chooseFor(item, { quality: options.quality, audioOnly: options.audioOnly, format: options.format });
    const several = indices.length > 1;
    say(`${several ? `item ${index + 1} (${n + 1} of ${indices.length}): ` : ''}picked ${choice.label}`);
    // Items of one page share its title: number them so each gets a file of its own.
    const filename = several
      ? { filename: `${(item.title ?? result.title).slice(0, 180) || 'item'} ${index + 1}` }
      : {};
    const body: DownloadBody = {
      ...choice.body,
      ...(result.extraction_id ? { extraction_id: result.extraction_id } : {}),
      ...extras(options),
      ...filename,
    };
    saved.push(...[await fetchOne(api, body, options, say, stopped)].flat());
  }
  return saved;
}
