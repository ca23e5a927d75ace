// A collection's ZIP bundle: the completed children's artifacts, in entry order, named
// `NNN - <title>.<ext>`, written streaming (yazl: stored, not deflated, as media is compressed
// already; ZIP64 wherever a size or offset needs it) into a temporary file, then put into the store.
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ZipFile } from 'yazl';
import type { ArtifactMeta, ArtifactStore } from '@reelay/artifacts';
import { bundleEntryNames, mediaFilename } from '@reelay/contracts';

export interface BundleEntry {
  index: number;
  title?: string;
  job_id: string;
  /** The entry's request (its job's request_key): what makes two bundles the same (reuse.ts). */
  request_key?: string;
}

/**
 * Writes the bundle of `entries` (those whose artifact is gone are left out); undefined when none is
 * left. The bundle is an artifact like any other, so it holds at most `maxBytes` (MAX_MEDIA_BYTES):
 * entries are taken in order while they fit, and the rest stay downloadable as their own jobs'
 * artifacts (`left_out` counts them).
 */
export async function writeBundle(
  store: ArtifactStore,
  id: string,
  title: string,
  entries: BundleEntry[],
  expiresAt: number,
  maxBytes = Infinity,
): Promise<(ArtifactMeta & { left_out: number }) | undefined> {
  const found = (await Promise.all(entries.map(async (e) => ({ e, stored: await store.get(e.job_id) })))).filter(
    (x) => x.stored !== undefined,
  );
  let total = 0;
  const present = found.filter(({ stored }) => {
    // A ZIP's own headers add well under a kilobyte an entry; counted generously.
    const cost = stored!.meta.size + 1024;
    if (total + cost > maxBytes) return false;
    total += cost;
    return true;
  });
  if (present.length === 0) return undefined;
  const names = bundleEntryNames(
    present.map(({ e, stored }) => ({
      index: e.index,
      title: e.title,
      ext: path.extname(stored!.meta.filename).slice(1),
    })),
  );
  const dir = await store.makeTempDir(id);
  try {
    const file = path.join(dir, 'bundle.zip');
    const zip = new ZipFile();
    const failed = new Promise<never>((_, reject) => zip.on('error', reject));
    present.forEach(({ e, stored }, i) => {
      zip.addReadStreamLazy(names[i], { compress: false, size: stored!.meta.size }, (cb) => {
        store.open(e.job_id).then(
          (stream) => (stream ? cb(null, stream) : cb(new Error(`the artifact of entry ${e.index} is gone`))),
          (err: unknown) => cb(err as Error),
        );
      });
    });
    zip.end();
    await Promise.race([pipeline(zip.outputStream, fs.createWriteStream(file)), failed]);
    const meta = await store.put(id, file, {
      filename: mediaFilename(title.trim() || 'collection', 'zip'),
      content_type: 'application/zip',
      expires_at: expiresAt,
    });
    return { ...meta, left_out: found.length - present.length };
  } finally {
    await store.removeTempDir(dir).catch(() => undefined);
  }
}
