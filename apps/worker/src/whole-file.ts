// A whole file kept in its own format (a collection's or subscription's entry, payload.whole_file):
// fetched first, through the job's egress proxy like everything the job reads, then its streams are
// copied by ffmpeg from the local file. Fetched in order and at once, the file may come in parallel
// Range parts well below the size at which ffmpeg's own reads would be split (ffmpeg seeks in an MP4
// whose index is at the end, and each seek restarts a ranged transfer), and the codecs ffprobe reads
// from the local copy let ffmpeg copy streams a feed never named, instead of re-encoding them.
import fs from 'node:fs';
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { ReelayError } from '@reelay/contracts';
import { RANGE_CHUNK_BYTES } from '@reelay/egress';
import type { InputSpec } from '@reelay/media';
import { WholeFileError } from './failure.js';
import type { JobProxySession } from './proxy-session.js';

/** Whole files at least this large come in parallel parts (when the origin is slow enough to gain). */
export const WHOLE_FILE_RANGE_THRESHOLD = 2 * RANGE_CHUNK_BYTES;
/** Redirects followed, as ffmpeg would (each hop comes back through the proxy and is checked). */
const MAX_REDIRECTS = 10;

/**
 * GETs `input` (an http:// URL as ffmpeg is given it: https travels under a stand-in name) through
 * the session's proxy into `file`. Resolves with the bytes written. An origin's error status is
 * recorded on the session by the proxy (so the job fails with its code) and thrown here too; the
 * session's byte limit cuts the transfer off. `onProgress` gets the fraction done when the size is known.
 */
export async function fetchWholeFile(
  session: JobProxySession,
  input: InputSpec,
  file: string,
  signal: AbortSignal,
  onProgress?: (fraction: number) => void,
): Promise<number> {
  const proxy = new URL(session.proxyUrl);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}`;
  let target = new URL(input.url);
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const res = await get(proxy, target, { ...input.headers, 'proxy-authorization': auth }, signal);
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume();
      target = new URL(res.headers.location, target);
      if (target.protocol !== 'http:') throw new WholeFileError(`a redirect to ${target.protocol} cannot be followed`);
      continue;
    }
    if (status !== 200) {
      res.resume();
      throw new WholeFileError(`the origin answered HTTP ${status}`);
    }
    const total = Number(res.headers['content-length']);
    let bytes = 0;
    res.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (onProgress && total > 0) onProgress(Math.min(1, bytes / total));
    });
    await pipeline(res, fs.createWriteStream(file), { signal });
    // A body cut short (the origin closed early, the byte limit cut it) is no whole file.
    if (!res.complete || (Number.isSafeInteger(total) && bytes !== total))
      throw new WholeFileError(
        `the transfer ended after ${bytes} of ${Number.isSafeInteger(total) ? total : '?'} bytes`,
      );
    return bytes;
  }
  throw new ReelayError('upstream_error', `The file redirected more than ${MAX_REDIRECTS} times.`);
}

function get(
  proxy: URL,
  target: URL,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    // Absolute-form request line, as any client of an HTTP proxy sends it; no pooled socket (agent:
    // false), so nothing outlives the job's session.
    const req = http.get(
      {
        host: proxy.hostname,
        port: Number(proxy.port),
        path: target.href,
        headers: { ...headers, host: target.host },
        agent: false,
        signal,
      },
      resolve,
    );
    req.once('error', reject);
  });
}
