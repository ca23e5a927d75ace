// The artifact store: finished job files shared by workers (which write) and gateways (which serve).
// A directory on a shared volume today, behind an interface so an S3-compatible store can replace it.
// Writes are atomic: the file is renamed into place, then its metadata, whose presence means done.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { JOB_ID_PATTERN } from '@reelay/contracts';

export interface ArtifactMeta {
  id: string;
  filename: string;
  content_type: string;
  size: number;
  /** Epoch milliseconds. */
  expires_at: number;
}

export interface StoredArtifact {
  meta: ArtifactMeta;
  /** A local path the gateway can stream with Range support. */
  path: string;
}

export interface ArtifactStore {
  /** Moves a finished file into the store under the job id. */
  put(id: string, file: string, meta: Omit<ArtifactMeta, 'id' | 'size'>): Promise<ArtifactMeta>;
  get(id: string): Promise<StoredArtifact | undefined>;
  remove(id: string): Promise<void>;
  /** Removes artifacts whose expiry has passed; returns how many. */
  sweep(now?: number): Promise<number>;
  /** A fresh private folder for one job attempt's temporary files. */
  makeTempDir(id: string): Promise<string>;
  /** Removes temporary folders older than `maxAgeMs` (left by killed workers); returns how many. */
  cleanTemp(maxAgeMs: number): Promise<number>;
}

export class FsArtifactStore implements ArtifactStore {
  readonly artifactsDir: string;
  readonly tempDir: string;

  constructor(dataDir: string) {
    this.artifactsDir = path.join(dataDir, 'artifacts');
    this.tempDir = path.join(dataDir, 'tmp');
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

  async get(id: string): Promise<StoredArtifact | undefined> {
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
    const entries = await listOrNone(this.artifactsDir);
    let removed = 0;
    for (const name of entries) {
      const m = /^([A-Za-z0-9_-]{22})\.json$/.exec(name);
      if (!m) continue;
      const stored = await this.get(m[1]).catch(() => undefined);
      if (stored && stored.meta.expires_at <= now) {
        await this.remove(m[1]);
        removed++;
      }
    }
    // Files without metadata are half-finished puts from a crash; remove them once they are old.
    for (const name of entries) {
      const m = /^([A-Za-z0-9_-]{22})\.bin$/.exec(name);
      if (!m || entries.includes(`${m[1]}.json`)) continue;
      const stat = await fs.stat(path.join(this.artifactsDir, name)).catch(() => undefined);
      if (stat && now - stat.mtimeMs > 3_600_000) await fs.rm(path.join(this.artifactsDir, name), { force: true });
    }
    return removed;
  }

  async makeTempDir(id: string): Promise<string> {
    await fs.mkdir(this.tempDir, { recursive: true });
    return fs.mkdtemp(path.join(this.tempDir, `${id}-`));
  }

  async cleanTemp(maxAgeMs: number): Promise<number> {
    const entries = await listOrNone(this.tempDir);
    let removed = 0;
    const now = Date.now();
    for (const name of entries) {
      const full = path.join(this.tempDir, name);
      const stat = await fs.stat(full).catch(() => undefined);
      if (stat && now - stat.mtimeMs > maxAgeMs) {
        await fs.rm(full, { recursive: true, force: true });
        removed++;
      }
    }
    return removed;
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

/** A directory's entries; none when it does not exist yet (nothing was ever stored). */
async function listOrNone(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
