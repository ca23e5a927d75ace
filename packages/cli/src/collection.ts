// `reelay get` of a playlist, channel or feed: one collection job on the server (its children are
// the entries), each finished entry saved into a folder named after the collection, a line whenever
// an entry's state changes and a total line. Ctrl-C leaves the job running on the server.
import fs from 'node:fs';
import path from 'node:path';
import type { Api, JobView } from './api.js';
import { CliError } from './errors.js';
import type { Progress } from './progress.js';
import { saveArtifact, type Saved } from './save.js';
import { printable } from './show.js';

interface Child {
  index: number;
  url: string;
  title?: string;
  status: string;
  job_id?: string;
  error?: { message: string };
}

type CollectionView = JobView & {
  title?: string;
  entries?: { total: number; queued: number; running: number; completed: number; failed: number; skipped: number };
};

/** Progress that says nothing: the per-entry lines are the progress. */
const quiet: Progress = {
  start: () => undefined,
  update: () => undefined,
  stop: () => undefined,
} as unknown as Progress;

/** A folder name from the collection's title: no separators or reserved characters. */
export function folderName(title: string | undefined): string {
  const cleaned = (title ?? '')
    .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]+/g, ' ')
    .replace(/\s+/g, ' ')
    .replace(/^[\s.]+|[\s.]+$/g, '');
  return [...cleaned].slice(0, 120).join('') || 'collection';
}

async function children(api: Api, id: string): Promise<Child[]> {
  const all: Child[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.json<{ children: Child[]; next_cursor?: string }>(
      `/api/v1/jobs/${encodeURIComponent(id)}/children${cursor ? `?cursor=${cursor}` : ''}`,
    );
    all.push(...page.children);
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

const entriesText = (n: number | undefined) => (n === undefined ? 'its entries' : `${n} entr${n === 1 ? 'y' : 'ies'}`);

/** Follows collection job `id` to its end, saving each completed entry into the collection's folder. */
export async function followCollection(
  api: Api,
  id: string,
  options: { output?: string; dir?: string; intervalMs?: number },
  say: (line: string) => void,
): Promise<Saved[]> {
  let parent = (await api.job(id)) as CollectionView;
  const base = path.resolve(options.dir ?? process.cwd(), options.output ?? '.');
  const folder = path.join(base, folderName(parent.title));
  fs.mkdirSync(folder, { recursive: true });
  say(
    `collection "${printable(parent.title ?? id)}" (job ${id}): ${entriesText(parent.entries?.total)} into ${folder}`,
  );
  const saved: Saved[] = [];
  const taken = new Set<number>();
  const said = new Map<number, string>();
  let lastTotal = '';
  for (;;) {
    parent = (await api.job(id)) as CollectionView;
    for (const c of await children(api, id)) {
      let state = c.status;
      if (c.status === 'processing' && c.job_id) state = `processing ${(await api.job(c.job_id)).progress}%`;
      if (c.status === 'failed' && c.error) state = `failed: ${c.error.message}`;
      const line = `  ${String(c.index).padStart(3)} ${printable(c.title ?? c.url)}: ${printable(state)}`;
      if (said.get(c.index) !== line) {
        say(line);
        said.set(c.index, line);
      }
      if (c.status === 'completed' && c.job_id && !taken.has(c.index)) {
        taken.add(c.index);
        saved.push(await saveArtifact(api, await api.job(c.job_id), folder + path.sep, quiet));
      }
    }
    const e = parent.entries;
    const total = e
      ? `total: ${e.completed} of ${e.total} done, ${e.running} running, ${e.queued} waiting, ${e.failed} failed, ${e.skipped} skipped`
      : '';
    if (total && total !== lastTotal) {
      say(total);
      lastTotal = total;
    }
    if (['completed', 'failed', 'cancelled', 'expired'].includes(parent.status)) break;
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 500));
  }
  if (parent.status === 'failed')
    throw new CliError(
      parent.error?.message ?? 'every entry failed.',
      `See it with \`reelay job ${id}\`.`,
      parent.error?.code,
    );
  if (parent.status === 'cancelled')
    throw new CliError(`collection job ${id} was cancelled.`, 'Run the same command again to start it anew.');
  return saved;
}
