// What every artifact store offers: put by job id, get, remove, expiry sweep, and the per-job
// temporary folders on local disk that ffmpeg writes into before the result is stored.
import type { Readable } from 'node:stream';
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
  /** A local path the gateway can stream with Range support; absent for a remote (S3) store. */
  path?: string;
}

/** Inclusive byte range, as in an HTTP Range header. */
export interface ByteRange {
  start: number;
  end: number;
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
  /** Removes every temporary folder of this job id (an earlier, dead attempt's); returns how many. */
  removeTemp(id: string): Promise<number>;
  /** Removes one folder made by makeTempDir once its job attempt is over. */
  removeTempDir(dir: string): Promise<void>;
  /** The artifact's bytes (or a range of them); undefined once it is gone. */
  open(id: string, range?: ByteRange): Promise<Readable | undefined>;
  /** Releases the store's network clients (S3); a no-op for the filesystem. */
  close?(): void;
  /**
   * A short-lived URL the client can fetch the artifact from directly (S3 presigned), or undefined
   * when the store has none (the gateway then streams it).
   */
  signedUrl?(meta: ArtifactMeta, options: { expiresInSeconds: number; contentDisposition: string }): Promise<string>;
}

/** A data file or object with no metadata older than this is a put that never finished: the sweep removes it. */
export const ORPHAN_AGE_MS = 3_600_000;

/**
 * The sweep both stores share: of the names in the store (`<id>.json` metadata, `<id>.bin` data),
 * removes each artifact whose expiry has passed; returns how many, and the data names that have no
 * metadata (candidates for the orphan clean-up, which each store judges by its own clock).
 */
export async function sweepExpired(
  store: Pick<ArtifactStore, 'get' | 'remove'>,
  names: readonly string[],
  now: number,
): Promise<{ removed: number; withoutMeta: string[] }> {
  const present = new Set(names);
  let removed = 0;
  for (const name of names) {
    const id = name.endsWith('.json') ? name.slice(0, -'.json'.length) : undefined;
    if (!id || !JOB_ID_PATTERN.test(id)) continue;
    const stored = await store.get(id).catch(() => undefined);
    if (stored && stored.meta.expires_at <= now) {
      await store.remove(id);
      removed++;
    }
  }
  const withoutMeta = names.filter((name) => {
    const id = name.endsWith('.bin') ? name.slice(0, -'.bin'.length) : undefined;
    return id !== undefined && JOB_ID_PATTERN.test(id) && !present.has(`${id}.json`);
  });
  return { removed, withoutMeta };
}
