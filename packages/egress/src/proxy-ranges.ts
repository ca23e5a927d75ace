// Parallel ranges for a large file: one connection gets what one TCP stream of the origin gives,
// several get several times that. When the client asks for a file (or its tail) over
// RANGE_THRESHOLD_BYTES and the origin's answer shows it serves byte ranges, the answer already open
// is read for a moment first (PROBE_MS or PROBE_BYTES, whichever comes first). If at that pace the
// rest would come within WORTH_MS, or the pace is FAST_BYTES_PER_SECOND or more, one connection is
// all it needs: on a fast origin (loopback, a near CDN) parts only cost requests and CPU, and made a
// short merge 15 % slower (a 49 MB one far more on a busy machine). The probe's bytes are put back
// into the answer, which then goes to the client as it came. Otherwise the body the
// client gets is assembled in order: the answer already open up to the next RANGE_CHUNK_BYTES
// boundary, then parts of at most RANGE_CHUNK_BYTES (even, in whole waves with the open answer: partSize) fetched
// `concurrency` at a time (`concurrency - 1` beside the open answer), each checked (a 206 for
// exactly that range of the same total, with the same validator, asked with If-Range). Bounded: at
// most concurrency - 1 parts are buffered, and PROBE_BYTES while probing. When a part is not right
// (an origin that ignores Range, or whose file changed), the rest comes over one connection from
// where the client is; if the file's validator changed, the transfer fails clearly instead of
// splicing two versions. Parts spend none of the session's request budget (their number is bounded
// by the file's size); their bytes count against its byte limit as they reach the client, so the
// parts a seek drops, (concurrency - 1) MiB at most each time, go uncounted.
import { Readable } from 'node:stream';
import { ReelayError } from '@reelay/contracts';
import { peek } from './body.js';
import { toReelayError, type EgressResponse } from './egress.js';
import type { ProxySession } from './proxy-session.js';
import type { ProxyEgress } from './proxy-deps.js';

/** Files (or tails) smaller than this come over one connection. */
export const RANGE_THRESHOLD_BYTES = 8 * 1024 * 1024;
/** The size of each part. */
export const RANGE_CHUNK_BYTES = 1024 * 1024;
const RETRIES = 2;
/** How long the answer already open is read to learn its pace, at most… */
export const PROBE_MS = 50;
/** …or until this much has come. */
export const PROBE_BYTES = 1024 * 1024;
/** Parts start only when one connection, at the pace it showed, would take longer than this for the rest… */
export const WORTH_MS = 500;
/**
 * …and only when that pace is below this. A connection this fast is not what holds a job back: its
 * own CPU is (the proxy's and ffmpeg's), and parts add to that. By WORTH_MS alone the bar rose with
 * the file: a 49 MB file on loopback had to bring its first MiB in 10 ms, which on a busy machine it
 * did not (11–55 ms seen at load 15–24), so it was split into 48 parts and the merge got slower.
 * Throttled CDNs give one connection 1–10 MB/s (the realistic bench origin: 2 MB/s).
 */
export const FAST_BYTES_PER_SECOND = 16 * 1024 * 1024;

export interface RangedFetch {
  egress: ProxyEgress;
  session: ProxySession;
  concurrency: number;
  target: URL;
  /** The client's request headers as forwarded, without its Range and If-Range. */
  headers: Record<string, string>;
  signal: AbortSignal;
  /** Called before the first answer is closed on purpose (its end is no failure). */
  release(): void;
  chunkBytes?: number;
  thresholdBytes?: number;
}

interface Shape {
  start: number;
  total: number;
  validator: string | undefined;
}

/**
 * The body to send in parts; undefined when the answer is not one to split, and the caller sends
 * the answer it has (as it came: the probe put back what it read, so one connection costs no extra
 * stream stage per chunk).
 */
export async function rangedBody(fetch: RangedFetch, first: EgressResponse, body: Readable): Promise<Readable | undefined> {
  const shape = shapeOf(first);
  if (!shape || shape.total - shape.start < (fetch.thresholdBytes ?? RANGE_THRESHOLD_BYTES)) return undefined;
  const seen = await peek(body, PROBE_BYTES, PROBE_MS);
  if (seen.ended) return Readable.from([seen.head]); // shorter than it said: the client sees how
  if (seen.failed) return undefined; // recorded by the body's error listener; the pipe fails
  const chunk = fetch.chunkBytes ?? RANGE_CHUNK_BYTES;
  // The open answer goes on to the next part boundary past what the probe read; parts follow.
  const firstEnd = Math.min(shape.total, shape.start + Math.max(1, Math.ceil(seen.head.length / chunk)) * chunk);
  // The pace from the first byte on: on a busy machine the wait for it is the event loop's, not the
  // origin's, and a CDN's first byte comes with its headers.
  if (firstEnd >= shape.total || !worthSplitting(seen.head.length, seen.paceMs, shape.total - shape.start - seen.head.length)) return undefined;
  return Readable.from(assemble(fetch, shape, body, firstEnd));
}

/** Where the answer starts, the file's size and validator; undefined unless ranges are on offer. */
function shapeOf(res: EgressResponse): Shape | undefined {
  if (res.headers['content-encoding'] !== undefined) return undefined;
  const validator = validatorOf(res);
  if (res.status === 206) {
    const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(res.headers['content-range'] ?? ''));
    if (!m || Number(m[2]) !== Number(m[3]) - 1) return undefined;
    return { start: Number(m[1]), total: Number(m[3]), validator };
  }
  const length = Number(res.headers['content-length']);
  if (res.status !== 200 || String(res.headers['accept-ranges'] ?? '').toLowerCase() !== 'bytes' || !Number.isSafeInteger(length)) return undefined;
  return { start: 0, total: length, validator };
}

/** A strong ETag, else Last-Modified: what If-Range may name. */
function validatorOf(res: EgressResponse): string | undefined {
  const etag = res.headers.etag;
  if (typeof etag === 'string' && !etag.startsWith('W/')) return etag;
  const modified = res.headers['last-modified'];
  return typeof modified === 'string' ? modified : undefined;
}

/**
 * Whether the rest of a file is worth fetching in parts: one connection that brought `bytes` in
 * `ms` is slower than FAST_BYTES_PER_SECOND and would need more than `worthMs` for the `remaining`
 * bytes. Nothing at all in the probe is a slow origin.
 */
export function worthSplitting(bytes: number, ms: number, remaining: number, worthMs = WORTH_MS): boolean {
  if (remaining <= 0) return false;
  if (bytes === 0) return true;
  const elapsed = Math.max(ms, 1);
  if ((bytes / elapsed) * 1000 >= FAST_BYTES_PER_SECOND) return false;
  return (remaining / bytes) * elapsed > worthMs;
}

async function* assemble(fetch: RangedFetch, shape: Shape, first: Readable, firstEnd: number): AsyncGenerator<Buffer> {
  const chunk = fetch.chunkBytes ?? RANGE_CHUNK_BYTES;
  const reader = (first as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const parts = new AbortController();
  const signal = AbortSignal.any([parts.signal, fetch.signal]);
  const pending = new Map<number, Promise<Buffer>>();
  try {
    const size = partSize(shape.total - firstEnd, chunk, fetch.concurrency);
    const count = 1 + Math.ceil((shape.total - firstEnd) / size);
    const range = (k: number) => [firstEnd + (k - 1) * size, Math.min(shape.total, firstEnd + k * size) - 1] as const;
    // `width` parts in flight from part `from` on: concurrency - 1 beside the open answer, then
    // concurrency (all the connections; while part k comes, at most concurrency - 1 after it wait).
    const ahead = (from: number, width: number) => {
      for (let k = from; k < Math.min(count, from + width); k++) {
        if (!pending.has(k)) {
          const part = fetchPart(fetch, shape, ...range(k), signal);
          part.catch(() => {}); // awaited in its turn
          pending.set(k, part);
        }
      }
    };
    ahead(1, fetch.concurrency - 1);
    let pos = shape.start;
    // Part 0 is the open answer (the probe's bytes first, put back), up to firstEnd.
    for (let step = await reader.next(); !step.done; step = await reader.next()) {
      const take = step.value.subarray(0, Math.max(0, firstEnd - pos));
      if (take.length > 0) yield take;
      pos += take.length;
      if (pos >= firstEnd) break;
    }
    // An answer that ended before its part did would leave a hole between part 0 and part 1.
    if (pos < firstEnd) throw new ReelayError('upstream_error', 'The origin ended the file early.');
    fetch.release();
    first.destroy();
    ahead(1, fetch.concurrency); // the open answer's connection is free: its share goes to a part
    for (let k = 1; k < count; k++) {
      let data: Buffer;
      try {
        data = await pending.get(k)!;
      } catch (err) {
        if (fetch.signal.aborted) throw err;
        parts.abort();
        yield* oneConnection(fetch, shape, pos);
        return;
      }
      pending.delete(k);
      ahead(k + 1, fetch.concurrency);
      yield data;
      pos += data.length;
    }
  } catch (err) {
    if (!fetch.signal.aborted) fetch.session.recordError(toReelayError(err));
    throw err;
  } finally {
    parts.abort();
    fetch.release();
    first.destroy();
  }
}

/**
 * The size of the parts after the open answer's: at most `chunk`, and even, so that they and the
 * open answer make whole waves of `concurrency` transfers. The open answer holds the first wave's
 * first connection (`concurrency - 1` parts start beside it), so the parts number one less than a
 * multiple of `concurrency`. With 1 MiB parts a 36 MiB rest made 4.5 waves; counting 40 parts as
 * 5 waves left the 40th alone in a sixth, one part's time (~0.5 s on a 2 MB/s connection) with 7
 * of 8 connections idle.
 */
export function partSize(rest: number, chunk: number, concurrency: number): number {
  const slots = Math.ceil((Math.ceil(rest / chunk) + 1) / concurrency) * concurrency;
  return Math.max(1, Math.ceil(rest / Math.max(1, slots - 1)));
}

class PartRefused extends Error {}

/** One part, whole, checked: a 206 for exactly [from, to] of the same file. */
async function fetchPart(fetch: RangedFetch, shape: Shape, from: number, to: number, signal: AbortSignal): Promise<Buffer> {
  fetch.session.rangeParts += 1;
  let last: unknown;
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    let res: EgressResponse;
    try {
      res = await open(fetch, shape, `bytes=${from}-${to}`, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      last = err;
      continue;
    }
    if (res.status >= 500 || res.status === 429) {
      res.body.destroy();
      last = new PartRefused(`HTTP ${res.status}`);
      continue;
    }
    if (res.status !== 206 || String(res.headers['content-range']) !== `bytes ${from}-${to}/${shape.total}` || validatorOf(res) !== shape.validator) {
      res.body.destroy();
      throw new PartRefused('the origin did not answer the range as asked');
    }
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const piece of res.body as AsyncIterable<Buffer>) {
      length += piece.length;
      if (length > to - from + 1) throw new PartRefused('a part longer than its range');
      chunks.push(piece);
    }
    if (length !== to - from + 1) throw new PartRefused('a part shorter than its range');
    return Buffer.concat(chunks, length);
  }
  throw last;
}

/** The rest of the file from `pos` over one connection; skips to `pos` in a whole answer. */
async function* oneConnection(fetch: RangedFetch, shape: Shape, pos: number): AsyncGenerator<Buffer> {
  const res = await open(fetch, shape, `bytes=${pos}-`, fetch.signal);
  const sameFile = validatorOf(res) === shape.validator;
  let skip = 0;
  if (res.status === 206 && sameFile && String(res.headers['content-range']) === `bytes ${pos}-${shape.total - 1}/${shape.total}`) skip = 0;
  else if (res.status === 200 && sameFile && Number(res.headers['content-length']) === shape.total) skip = pos;
  else {
    res.body.destroy();
    if (res.status >= 400) fetch.session.recordStatus(res.status, res.headers);
    throw new ReelayError('upstream_error', 'The origin changed the file while it was being fetched (its validator or size differ).');
  }
  for await (const piece of res.body as AsyncIterable<Buffer>) {
    const take = skip >= piece.length ? undefined : piece.subarray(skip);
    skip = Math.max(0, skip - piece.length);
    if (take) yield take;
  }
}

function open(fetch: RangedFetch, shape: Shape, range: string, signal: AbortSignal): Promise<EgressResponse> {
  const headers: Record<string, string> = { ...fetch.headers, range };
  if (shape.validator) headers['if-range'] = shape.validator;
  return fetch.egress.open(fetch.target, { method: 'GET', headers, identity: true, followRedirects: false, allowErrorStatus: true, signal });
}
