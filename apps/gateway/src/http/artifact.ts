// Serves a finished job's artifact: a local file with Express's sendFile, or, for a remote (S3)
// store, either streamed through with Range support or as a short-lived presigned redirect.
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import type { ArtifactStore, StoredArtifact } from '@reelay/artifacts';
import { ReelayError } from '@reelay/contracts';
import { contentDisposition } from './disposition.js';

/** Presigned URLs live this long: enough to start the download, too short to share widely. */
export const PRESIGN_SECONDS = 60;

const expired = () => new ReelayError('artifact_expired', 'The artifact has expired; request the download again.');
const storeDown = (err: unknown) => {
  throw new ReelayError('service_unavailable', 'The artifact store is unavailable; try again shortly.', { cause: err });
};

export async function sendArtifact(
  req: Request,
  res: Response,
  stored: StoredArtifact,
  options: { store: ArtifactStore; delivery: 'stream' | 'redirect' },
): Promise<void> {
  const { meta } = stored;
  const disposition = contentDisposition(meta.filename);
  res.setHeader('Cache-Control', 'private, no-store');
  if (stored.path) {
    res.setHeader('Content-Type', meta.content_type);
    res.setHeader('Content-Disposition', disposition);
    await new Promise<void>((resolve, reject) => {
      res.sendFile(
        stored.path!,
        { acceptRanges: true, cacheControl: false, lastModified: true, etag: true, dotfiles: 'allow' },
        (err?: NodeJS.ErrnoException) => {
          if (!err || res.headersSent) return resolve();
          // The sweeper may remove the file between the check above and this read.
          reject(err.code === 'ENOENT' ? expired() : err);
        },
      );
    });
    return;
  }
  if (options.delivery === 'redirect' && options.store.signedUrl) {
    const url = await options.store
      .signedUrl(meta, {
        expiresInSeconds: Math.min(PRESIGN_SECONDS, Math.max(1, Math.floor((meta.expires_at - Date.now()) / 1000))),
        contentDisposition: disposition,
      })
      .catch(storeDown);
    res.redirect(302, url);
    return;
  }

  // Streamed through. The ETag names this artifact version, so If-Range can resume safely.
  const etag = `"${meta.id}-${meta.size}-${meta.expires_at}"`;
  let range: { start: number; end: number } | undefined;
  const header = req.headers.range;
  if (header && (!req.headers['if-range'] || req.headers['if-range'] === etag)) {
    const parsed = req.range(meta.size, { combine: true });
    if (parsed === -1) {
      res.status(416).setHeader('Content-Range', `bytes */${meta.size}`);
      res.end();
      return;
    }
    // A malformed header or several ranges get the whole file, as sendFile answers for local files.
    if (Array.isArray(parsed) && parsed.length === 1) range = { start: parsed[0].start, end: parsed[0].end };
  }
  res.setHeader('Content-Type', meta.content_type);
  res.setHeader('Content-Disposition', disposition);
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('ETag', etag);
  if (range) {
    res.status(206).setHeader('Content-Range', `bytes ${range.start}-${range.end}/${meta.size}`);
    res.setHeader('Content-Length', String(range.end - range.start + 1));
  } else {
    res.setHeader('Content-Length', String(meta.size));
  }
  // HEAD needs only the metadata read above; the object itself is fetched for a GET alone.
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  // Nothing is sent yet, so a gone or unreachable object still answers with the envelope (the error
  // handler drops the file headers set above).
  const body = await options.store.open(meta.id, range).catch(storeDown);
  if (!body) throw expired();
  // A client that goes away destroys the response, and pipeline then stops the S3 read as well.
  await pipeline(body, res).catch((err: unknown) => {
    if (!res.headersSent) throw err;
    res.destroy();
  });
}
