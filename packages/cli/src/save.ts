// Writes what the server sends to NAME.part and renames it when complete. A job's artifact resumes:
// a cut transfer continues with `Range: bytes=N-` (If-Range with the validator the server sent), in
// this run or the next one, since the part file is named for the job and a job's artifact never
// changes. A direct stream cannot be asked for again from the middle, so its part file is removed.
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseDisposition } from 'content-disposition';
import type { Api, JobView } from './api.js';
import { brokenOff, CliError } from './errors.js';
import type { Progress } from './progress.js';

const RETRIES = 3;

/** The server's filename (Content-Disposition) as a plain name in the current folder, never a path. */
export function serverFilename(header: string | null, fallback = 'download'): string {
  let name: string | undefined;
  try {
    name = header ? parseDisposition(header).parameters.filename : undefined;
  } catch {
    /* a malformed header: the fallback */
  }
  const base = path.basename((name ?? '').replace(/\\/g, '/'));
  return base && base !== '.' && base !== '..' ? base : fallback;
}

/** Where to save: `-o` as a file, or as a folder when it is one (or ends with a slash), both taken
 *  from `dir` (the folder the command was run from) when relative. */
export function targetPath(out: string | undefined, name: string, dir = process.cwd()): string {
  const given = out === undefined ? undefined : path.resolve(dir, out);
  const isDir =
    given !== undefined &&
    (out!.endsWith('/') || out!.endsWith(path.sep) || fs.statSync(given, { throwIfNoEntry: false })?.isDirectory());
  const target = given === undefined ? path.resolve(dir, name) : isDir ? path.join(given, name) : given;
  if (!fs.statSync(path.dirname(target), { throwIfNoEntry: false })?.isDirectory()) {
    throw new CliError(
      `the folder ${path.dirname(target)} does not exist.`,
      'Create it first, or give -o an existing folder.',
    );
  }
  return target;
}

/**
 * Whether `target` is this download already (as yt-dlp: the same name, and the same size where the
 * size is known). A different file there is an error: nothing is ever overwritten.
 */
export function alreadyThere(target: string, size: number | undefined): boolean {
  const stat = fs.statSync(target, { throwIfNoEntry: false });
  if (!stat) return false;
  if (stat.isFile() && (size === undefined || stat.size === size)) return true;
  throw new CliError(
    `${target} already exists; nothing was overwritten.`,
    'Remove it, or save under another name with -o.',
  );
}

/** Where a download went, and whether it was there before this run. */
export interface Saved {
  path: string;
  already: boolean;
}

/** Copies a response body to `file` (appending when `append`), reporting the byte count. Whatever
 *  arrived is on disk before an error (a cut, Ctrl-C) is passed on, so a resume asks for the rest. */
async function writeBody(
  res: Response,
  file: string,
  append: boolean,
  start: number,
  onBytes: (n: number) => void,
): Promise<number> {
  let have = start;
  const out = fs.createWriteStream(file, { flags: append ? 'a' : 'w' });
  try {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      have += chunk.length;
      onBytes(have);
      if (!out.write(chunk)) await once(out, 'drain');
    }
  } finally {
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
  return have;
}

const lengthOf = (res: Response) => {
  const n = Number(res.headers.get('content-length'));
  return Number.isFinite(n) && res.headers.has('content-length') ? n : undefined;
};

/** Saves a direct 200 stream under the server's filename. */
export async function saveStream(
  res: Response,
  out: string | undefined,
  progress: Progress,
  dir?: string,
): Promise<Saved> {
  let target: string;
  const total = lengthOf(res);
  try {
    target = targetPath(out, serverFilename(res.headers.get('content-disposition')), dir);
    if (alreadyThere(target, total)) {
      await res.body?.cancel();
      return { path: target, already: true };
    }
  } catch (err) {
    await res.body?.cancel();
    throw err;
  }
  const part = `${target}.part`;
  progress.start(path.basename(target), 'bytes', total);
  try {
    const have = await writeBody(res, part, false, 0, (n) => progress.update(n));
    progress.stop();
    if (total !== undefined && have !== total)
      throw new CliError(`the transfer ended after ${have} of ${total} bytes.`, 'Run the same command again.');
    fs.renameSync(part, target);
    return { path: target, already: false };
  } catch (err) {
    progress.stop();
    fs.rmSync(part, { force: true });
    throw brokenOff(err, 'Run the same command again.');
  }
}

/** Downloads a completed job's artifact, resuming a part file left by an earlier try. */
export async function saveArtifact(
  api: Api,
  job: JobView,
  out: string | undefined,
  progress: Progress,
  dir?: string,
): Promise<Saved> {
  const artifact = job.artifact!;
  const target = targetPath(out, serverFilename(null, path.basename(artifact.filename) || 'download'), dir);
  if (alreadyThere(target, artifact.size)) return { path: target, already: true };
  const part = `${target}.${job.id}.part`;
  let validator: string | undefined;
  for (let attempt = 0; ; attempt += 1) {
    const have = fs.statSync(part, { throwIfNoEntry: false })?.size ?? 0;
    const headers: Record<string, string> = { 'accept-encoding': 'identity' };
    if (have > 0) headers.range = `bytes=${have}-`;
    if (have > 0 && validator) headers['if-range'] = validator;
    progress.start(path.basename(target), 'bytes', artifact.size, have);
    try {
      const res = await api.request(`/api/v1/jobs/${encodeURIComponent(job.id)}/artifact`, { headers });
      if (res.status === 416) {
        // The part file is longer than the artifact: not this artifact's bytes. Start over.
        await res.body?.cancel();
        fs.rmSync(part, { force: true });
        continue;
      }
      if (!res.ok) return await api.fail(res);
      // A weak ETag may not be used in If-Range (RFC 9110 §13.1.5); Last-Modified may.
      const etag = res.headers.get('etag');
      validator = etag && !etag.startsWith('W/') ? etag : (res.headers.get('last-modified') ?? undefined);
      const resumed = res.status === 206 && res.headers.get('content-range')?.startsWith(`bytes ${have}-`) === true;
      const done = await writeBody(res, part, resumed, resumed ? have : 0, (n) => progress.update(n));
      progress.stop();
      if (done !== artifact.size)
        throw new CliError(
          `the artifact is ${artifact.size} bytes but ${done} arrived.`,
          'Run the same command again to resume.',
        );
      fs.renameSync(part, target);
      return { path: target, already: false };
    } catch (err) {
      progress.stop();
      if (api.signal.aborted || err instanceof CliError) throw err;
      if (attempt >= RETRIES) throw brokenOff(err, 'Run the same command again: it downloads only the rest.');
      // A cut connection: the part file keeps what arrived, and the next request asks for the rest.
      await sleep(500 * (attempt + 1), undefined, { signal: api.signal });
    }
  }
}
