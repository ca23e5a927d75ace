// Parallel ranges for a large file: one connection gets what one TCP stream of the origin gives,
// several get several times that. When the client asks for a file (or its tail) over
// RANGE_THRESHOLD_BYTES and the origin's answer shows it serves byte ranges, the body the client gets
// is assembled in order from RANGE_CHUNK_BYTES parts: the first from the answer already open, the
// others fetched `concurrency - 1` at a time, each checked (a 206 for exactly that range of the same
// total, with the same validator, asked with If-Range). Bounded: at most concurrency - 1 parts are
// buffered. When a part is not right (an origin that ignores Range, or whose file changed), the rest
// comes over one connection from where the client is; if the file's validator changed, the transfer
// fails clearly instead of splicing two versions. Parts spend none of the session's request budget
// (their number is bounded by the file's size); their bytes count against its byte limit as they
// reach the client, so the parts a seek drops, (concurrency - 1) MiB at most each time, go uncounted.
import { Readable } from 'node:stream';
import { ReelayError } from '@reelay/contracts';
import { toReelayError, type EgressResponse } from './egress.js';
import type { ProxySession } from './proxy-session.js';
import type { ProxyEgress } from './proxy-types.js';

/** Files (or tails) smaller than this come over one connection. */
export const RANGE_THRESHOLD_BYTES = 8 * 1024 * 1024;
/** The size of each part. */
export const RANGE_CHUNK_BYTES = 1024 * 1024;
const RETRIES = 2;

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

/** The body to send in parts, or undefined when this answer is not one to split. */
export function rangedBody(fetch: RangedFetch, first: EgressResponse, body: Readable): Readable | undefined {
  const shape = shapeOf(first);
  if (!shape || shape.total - shape.start < (fetch.thresholdBytes ?? RANGE_THRESHOLD_BYTES)) return undefined;
  return Readable.from(assemble(fetch, shape, body));
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

async function* assemble(fetch: RangedFetch, shape: Shape, first: Readable): AsyncGenerator<Buffer> {
  const chunk = fetch.chunkBytes ?? RANGE_CHUNK_BYTES;
  const count = Math.ceil((shape.total - shape.start) / chunk);
  const parts = new AbortController();
  const signal = AbortSignal.any([parts.signal, fetch.signal]);
  const pending = new Map<number, Promise<Buffer>>();
  const ahead = (from: number) => {
    for (let k = from; k < Math.min(count, from + fetch.concurrency - 1); k++) {
      if (!pending.has(k)) {
        const part = fetchPart(fetch, shape, shape.start + k * chunk, Math.min(shape.total, shape.start + (k + 1) * chunk) - 1, signal);
        part.catch(() => {}); // awaited in its turn
        pending.set(k, part);
      }
    }
  };
  let pos = shape.start;
  try {
    ahead(1);
    // Part 0 streams from the answer already open, up to the end of its range.
    for await (const piece of first as AsyncIterable<Buffer>) {
      const take = piece.subarray(0, Math.max(0, shape.start + chunk - pos));
      if (take.length > 0) yield take;
      pos += take.length;
      if (pos >= shape.start + chunk) break;
    }
    // An answer that ended before its part did would leave a hole between part 0 and part 1.
    if (pos < shape.start + chunk) throw new ReelayError('upstream_error', 'The origin ended the file early.');
    fetch.release();
    first.destroy();
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
      ahead(k + 1);
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

class PartRefused extends Error {}

/** One part, whole, checked: a 206 for exactly [from, to] of the same file. */
async function fetchPart(fetch: RangedFetch, shape: Shape, from: number, to: number, signal: AbortSignal): Promise<Buffer> {
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
    if (res.status >= 400) fetch.session.recordStatus(res.status);
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
