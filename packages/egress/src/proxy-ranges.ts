// Parallel ranges for a large file: one connection gets what one TCP stream of the origin gives,
// several get several times that. When the client asks for a file (or its tail) over
// RANGE_THRESHOLD_BYTES and the origin's answer shows it serves byte ranges, the answer already open
// is read for a moment first (PROBE_MS or PROBE_BYTES, whichever comes first). If at that pace the
// rest would come within WORTH_MS, one connection is all it needs: on a fast origin (loopback, a near
// CDN) parts only cost requests and CPU, and made a short merge 15 % slower. Otherwise the body the
// client gets is assembled in order: the answer already open up to the next RANGE_CHUNK_BYTES
// boundary, then RANGE_CHUNK_BYTES parts fetched `concurrency - 1` at a time, each checked (a 206 for
// exactly that range of the same total, with the same validator, asked with If-Range). Bounded: at
// most concurrency - 1 parts are buffered, and PROBE_BYTES while probing. When a part is not right
// (an origin that ignores Range, or whose file changed), the rest comes over one connection from
// where the client is; if the file's validator changed, the transfer fails clearly instead of
// splicing two versions. Parts spend none of the session's request budget (their number is bounded
// by the file's size); their bytes count against its byte limit as they reach the client, so the
// parts a seek drops, (concurrency - 1) MiB at most each time, go uncounted.
import { Readable } from 'node:stream';
import { ReelayError } from '@reelay/contracts';
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
/** Parts start only when one connection, at the pace it showed, would take longer than this for the rest. */
export const WORTH_MS = 500;

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

/**
 * Whether the rest of a file is worth fetching in parts: one connection that brought `bytes` in
 * `ms` would need more than `worthMs` for the `remaining` bytes. Nothing at all in the probe is a
 * slow origin.
 */
export function worthSplitting(bytes: number, ms: number, remaining: number, worthMs = WORTH_MS): boolean {
  if (remaining <= 0) return false;
  if (bytes === 0) return true;
  return (remaining / bytes) * Math.max(ms, 1) > worthMs;
}

interface Probe {
  pieces: Buffer[];
  bytes: number;
  ms: number;
  /** The read still pending when the probe ended; undefined once the answer has ended. */
  next: Promise<IteratorResult<Buffer>> | undefined;
}

/** Reads the open answer for PROBE_MS or PROBE_BYTES, whichever comes first, holding what it read. */
async function probe(reader: AsyncIterator<Buffer>): Promise<Probe> {
  const started = performance.now();
  const out: Probe = { pieces: [], bytes: 0, ms: 0, next: reader.next() };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'time'>((resolve) => (timer = setTimeout(() => resolve('time'), PROBE_MS)));
  try {
    while (out.next && out.bytes < PROBE_BYTES) {
      const read = await Promise.race([out.next, deadline]);
      if (read === 'time') break;
      if (read.done) out.next = undefined;
      else {
        out.pieces.push(read.value);
        out.bytes += read.value.length;
        out.next = reader.next();
      }
    }
  } finally {
    clearTimeout(timer);
  }
  out.ms = performance.now() - started;
  out.next?.catch(() => {}); // awaited below, or dropped with the answer
  return out;
}

/** The open answer from its start after a probe: what the probe read, its pending read, then the rest. */
async function* rest(read: Buffer[], reader: AsyncIterator<Buffer>, next: Promise<IteratorResult<Buffer>> | undefined): AsyncGenerator<Buffer> {
  yield* read;
  for (let step = next && (await next); step && !step.done; step = await reader.next()) yield step.value;
}

async function* assemble(fetch: RangedFetch, shape: Shape, first: Readable): AsyncGenerator<Buffer> {
  const chunk = fetch.chunkBytes ?? RANGE_CHUNK_BYTES;
  const reader = (first as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const parts = new AbortController();
  const signal = AbortSignal.any([parts.signal, fetch.signal]);
  const pending = new Map<number, Promise<Buffer>>();
  try {
    const seen = await probe(reader);
    const open = rest(seen.pieces, reader, seen.next);
    // The open answer goes on to the next part boundary past what the probe read; parts follow.
    const firstEnd = Math.min(shape.total, shape.start + Math.max(1, Math.ceil(seen.bytes / chunk)) * chunk);
    if (!seen.next || !worthSplitting(seen.bytes, seen.ms, shape.total - shape.start - seen.bytes) || firstEnd >= shape.total) {
      yield* open;
      return;
    }
    const count = 1 + Math.ceil((shape.total - firstEnd) / chunk);
    const range = (k: number) => [firstEnd + (k - 1) * chunk, Math.min(shape.total, firstEnd + k * chunk) - 1] as const;
    const ahead = (from: number) => {
      for (let k = from; k < Math.min(count, from + fetch.concurrency - 1); k++) {
        if (!pending.has(k)) {
          const part = fetchPart(fetch, shape, ...range(k), signal);
          part.catch(() => {}); // awaited in its turn
          pending.set(k, part);
        }
      }
    };
    ahead(1);
    let pos = shape.start;
    // Part 0 is the open answer, up to firstEnd: what the probe read, then the rest of it.
    for await (const piece of open) {
      const take = piece.subarray(0, Math.max(0, firstEnd - pos));
      if (take.length > 0) yield take;
      pos += take.length;
      if (pos >= firstEnd) break;
    }
    // An answer that ended before its part did would leave a hole between part 0 and part 1.
    if (pos < firstEnd) throw new ReelayError('upstream_error', 'The origin ended the file early.');
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
