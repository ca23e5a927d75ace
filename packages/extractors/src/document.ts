// Fetching the submitted URL once for the generic extractors: headers and the first bytes decide
// what it is (manifest, media file, page); only text documents are read further, up to 5 MB, and a
// media file is never downloaded beyond its first bytes.
import type { Readable } from 'node:stream';
import type { Egress } from '@reelay/egress';
import { BodyTooLargeError, decodeBody, MAX_PAGE_BYTES, readHead, toReelayError } from '@reelay/egress';
import { ReelayError } from '@reelay/contracts';
import { fileTypeFromBuffer } from 'file-type';
import { DASH_TYPES, HLS_TYPES, HTML_TYPES } from './media-types.js';

export const SNIFF_BYTES = 4100;

const TEXT_TYPES = new Set([...HTML_TYPES, ...HLS_TYPES, ...DASH_TYPES]);

export interface FetchedDocument {
  /** The URL as submitted. */
  url: URL;
  /** The URL that answered, after redirects: relative links resolve against it. */
  finalUrl: URL;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Media type from Content-Type, lower case, without parameters ('' when absent). */
  contentType: string;
  /** Content-Length when the origin sent it. */
  size?: number;
  /** At least the first SNIFF_BYTES bytes (fewer if the body is shorter). */
  head: Buffer;
  /** What the first bytes are, by their magic numbers (file-type), when they are a binary format. */
  sniffed?: { ext: string; mime: string };
  /** The whole body as text (decoded as UTF-8), read on first call, at most 5 MB. */
  text(): Promise<string>;
  /** Releases the connection; safe to call more than once. */
  close(): void;
}

export async function fetchDocument(egress: Egress, url: URL, signal?: AbortSignal): Promise<FetchedDocument> {
  const res = await egress.open(url, {
    signal,
    identity: true,
    deadlineMs: 20_000,
    headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
  });
  // Identity is asked for (a media file is sniffed as it is), but some origins compress a page
  // anyway: it is decoded, so the 5 MB limit counts what the page holds, not what it weighs.
  const encoded =
    header(res.headers['content-encoding']) !== undefined && header(res.headers['content-encoding']) !== 'identity';
  const body: Readable = decodeBody(res.body, res.headers);
  let head: Awaited<ReturnType<typeof readHead>>;
  try {
    head = await readHead(body, SNIFF_BYTES);
  } catch (err) {
    body.destroy();
    throw toReelayError(err);
  }
  const contentType = String(res.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  // Magic numbers only matter for binary answers; pages and manifests skip the sniffing.
  const sniffed = TEXT_TYPES.has(contentType) ? undefined : await fileTypeFromBuffer(head.head).catch(() => undefined);
  const length = Number(res.headers['content-length']);
  let textPromise: Promise<string> | undefined;
  return {
    url,
    finalUrl: new URL(res.url),
    status: res.status,
    headers: res.headers,
    contentType,
    size:
      !encoded && Number.isFinite(length) && length >= 0 && res.headers['content-length'] !== undefined
        ? length
        : undefined,
    head: head.head,
    sniffed: sniffed ? { ext: sniffed.ext, mime: sniffed.mime } : undefined,
    text: () =>
      (textPromise ??= head.rest(MAX_PAGE_BYTES).then(
        (buf) => buf.toString('utf8'),
        (err) => {
          if (err instanceof BodyTooLargeError)
            throw new ReelayError('upstream_error', 'The page is larger than 5 MB.');
          throw toReelayError(err);
        },
      )),
    // Only an unread body is destroyed: destroying a finished one would also close its keep-alive
    // socket and cost a new connection on the next request to the same origin.
    close: () => {
      if (!body.readableEnded) body.destroy();
    },
  };
}

function header(value: string | string[] | undefined): string | undefined {
  return (Array.isArray(value) ? value[0] : value)?.trim().toLowerCase();
}

/** The file name extension of a URL's path, lower case, without the dot ('' when none). */
export function urlExtension(url: URL | string): string {
  const pathname = typeof url === 'string' ? safePath(url) : url.pathname;
  const m = /\.([a-z0-9]{1,5})$/i.exec(pathname);
  return m ? m[1].toLowerCase() : '';
}

function safePath(raw: string): string {
  try {
    return new URL(raw).pathname;
  } catch {
    return raw.split(/[?#]/)[0];
  }
}
