// The filesystem artifact store: a directory on a volume every worker and gateway mounts.
// Writes are atomic: the file is renamed into place, then its metadata, whose presence means done.
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { JOB_ID_PATTERN } from '@reelay/contracts';
import { listOrNone, LocalTemp } from './temp.js';
import {
  ORPHAN_AGE_MS,
  sweepExpired,
  type ArtifactMeta,
  type ArtifactStore,
  type ByteRange,
  type StoredArtifact,
} from './store.js';

export class FsArtifactStore extends LocalTemp implements ArtifactStore {
  readonly artifactsDir: string;

  constructor(dataDir: string) {
    super(path.join(dataDir, 'tmp'));
    this.artifactsDir = path.join(dataDir, 'artifacts');
  }

  private paths(id: string): { file: string; meta: string } {
    // Ids are checked so no caller can walk out of the store with a crafted id.
    if (!JOB_ID_PATTERN.test(id)) throw new Error(`invalid artifact id ${JSON.stringify(id)}`);
    return { file: path.join(this.artifactsDir, `${id}.bin`), meta: path.join(this.artifactsDir, `${id}.json`) };
  }

  async put(id: string, file: string, meta: Omit<ArtifactMeta, 'id' | 'size'>): Promise<ArtifactMeta> {
    const target = this.paths(id);
    await fs.mkdir(this.artifactsDir, { recursive: true });
    const { size } = await fs.stat(file);
    await moveInto(file, target.file);
    const full: ArtifactMeta = { id, size, ...meta };
    const tmpMeta = `${target.meta}.${randomBytes(4).toString('hex')}.tmp`;
    await fs.writeFile(tmpMeta, JSON.stringify(full));
    await fs.rename(tmpMeta, target.meta);
    return full;
  }

  async get(id: string): Promise<(StoredArtifact & { path: string }) | undefined> {
    if (!JOB_ID_PATTERN.test(id)) return undefined;
    const target = this.paths(id);
    try {
      const meta = JSON.parse(await fs.readFile(target.meta, 'utf8')) as ArtifactMeta;
      return { meta, path: target.file };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async remove(id: string): Promise<void> {
    const target = this.paths(id);
    // Metadata first: once it is gone the artifact is no longer served, even if the file lingers.
    await fs.rm(target.meta, { force: true });
    await fs.rm(target.file, { force: true });
  }

  async sweep(now = Date.now()): Promise<number> {
    const { removed, withoutMeta } = await sweepExpired(this, await listOrNone(this.artifactsDir), now);
    // Files without metadata are half-finished puts from a crash; remove them once they are old.
    for (const name of withoutMeta) {
      const stat = await fs.stat(path.join(this.artifactsDir, name)).catch(() => undefined);
      if (stat && now - stat.mtimeMs > ORPHAN_AGE_MS) await fs.rm(path.join(this.artifactsDir, name), { force: true });
    }
    return removed;
  }

  async open(id: string, range?: ByteRange): Promise<Readable | undefined> {
    // The caller has read the metadata already (get); only the file is opened here.
    if (!JOB_ID_PATTERN.test(id)) return undefined;
    const stream = createReadStream(this.paths(id).file, range ? { start: range.start, end: range.end } : {});
    // Opened before it is returned, so a file swept in between reads as gone rather than as an error.
    return new Promise((resolve, reject) => {
      stream.once('open', () => resolve(stream));
      stream.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? resolve(undefined) : reject(err)));
    });
  }
}

/**
 * rename(), or a copy when the file is on another file system (EXDEV: the temp folder and the store
 * on different mounts). The copy goes to a hidden name beside the target and is renamed from there,
 * so a reader never sees half a file; the source is removed only once the copy is in place.
 */
async function moveInto(file: string, target: string): Promise<void> {
  try {
    await fs.rename(file, target);
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
  }
  const partial = `${target}.${randomBytes(4).toString('hex')}.copy`;
  try {
    await fs.copyFile(file, partial);
    await fs.rename(partial, target);
  } catch (err) {
    await fs.rm(partial, { force: true });
    throw err;
  }
  await fs.rm(file, { force: true });
}
