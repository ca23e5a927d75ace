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
// `concurrency` at a time (`concurrency - 1` beside the open answer; the next is asked for a round
// trip before one ends: PartWindow), each checked (a 206 for exactly that range of the same total,
// with the same validator, asked with If-Range). Bounded: the parts after the one the client reads
// next hold at most (concurrency - 1) × RANGE_CHUNK_BYTES, and PROBE_BYTES while probing. When a part is not right
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
export async function rangedBody(
  fetch: RangedFetch,
  first: EgressResponse,
  body: Readable,
): Promise<Readable | undefined> {
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
  if (
    firstEnd >= shape.total ||
    !worthSplitting(seen.head.length, seen.paceMs, shape.total - shape.start - seen.head.length)
  )
    return undefined;
  // One part waits to be read, not sixteen (Readable.from's default): the bound holds to the client.
  return Readable.from(assemble(fetch, shape, body, firstEnd), { highWaterMark: 1 });
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
  if (
    res.status !== 200 ||
    String(res.headers['accept-ranges'] ?? '').toLowerCase() !== 'bytes' ||
    !Number.isSafeInteger(length)
  )
    return undefined;
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

/**
 * The parts in flight and the bytes they hold. A connection is busy until its part is a round trip
 * from its end (`lead` bytes at its pace): then the next part is asked for, so that its first byte
 * comes as the last one does. Asked for only when its predecessor was done, each part waited 40 ms
 * on the bench origin before its first byte, 8 % of a 0.9 MiB part at 2 MB/s, in every wave.
 * Bounded: the parts after the one the client reads next hold at most (concurrency - 1) × chunk
 * bytes; a part with no room waits (its connection is not read), and the next one never does.
 */
interface Part {
  data: Promise<Buffer> | undefined;
  received: number;
  /** A round trip or less from its end: its connection counts as free. */
  near: boolean;
}

class PartWindow {
  /** Parts asked for and not yet handed on, by index: how much each has received and has left. */
  readonly parts = new Map<number, Part>();
  /** The next part to ask for, and the next to hand on. */
  next = 1;
  head = 1;
  /** Bytes the parts after the head hold, and the most they ever held. */
  held = 0;
  peak = 0;
  /** Bytes before a part's end at which the next one is asked for: a round trip at its pace. */
  private lead = 0;
  private wakers: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly concurrency: number,
    private readonly count: number,
    private readonly start: (k: number) => Promise<Buffer>,
  ) {}

  /** Asks for parts while fewer than `concurrency` connections are busy (`busy`: the open answer's). */
  fill(busy: number): void {
    let active = busy;
    for (const part of this.parts.values()) if (!part.near) active += 1;
    // At most two waves asked for ahead of the client: the bytes are bounded anyway, requests too.
    while (active < this.concurrency && this.next < this.count && this.next < this.head + 2 * this.concurrency) {
      const k = this.next++;
      const part: Part = { data: undefined, received: 0, near: false };
      this.parts.set(k, part); // before start(): its first progress finds it
      part.data = this.start(k);
      part.data.catch(() => {}); // awaited in its turn
      active += 1;
    }
  }

  /** A part's progress: `left` bytes are still to come. */
  progress(k: number, left: number, busy: () => number): void {
    const part = this.parts.get(k);
    if (!part) return;
    if (!part.near && left <= this.lead) {
      part.near = true;
      this.fill(busy());
    }
  }

  learn(roundTripMs: number, bytesPerMs: number): void {
    this.lead = Math.max(this.lead, roundTripMs * bytesPerMs);
  }

  /** Resolves once part `k` has taken `bytes` more without passing the bound (checked and counted at once). */
  async take(k: number, bytes: number, signal: AbortSignal): Promise<void> {
    while (k !== this.head && this.held + bytes > this.limit && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener('abort', wake);
          resolve();
        };
        this.wakers.push(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
    const part = this.parts.get(k);
    if (part) part.received += bytes;
    if (k !== this.head) {
      this.held += bytes;
      this.peak = Math.max(this.peak, this.held);
    }
  }

  /** The head has been handed on: the next part is the head, and its bytes leave the bound. */
  advance(): void {
    this.parts.delete(this.head);
    this.head += 1;
    this.held -= this.parts.get(this.head)?.received ?? 0;
    for (const wake of this.wakers.splice(0)) wake();
  }
}

async function* assemble(fetch: RangedFetch, shape: Shape, first: Readable, firstEnd: number): AsyncGenerator<Buffer> {
  const chunk = fetch.chunkBytes ?? RANGE_CHUNK_BYTES;
  const reader = (first as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const parts = new AbortController();
  const signal = AbortSignal.any([parts.signal, fetch.signal]);
  let openBusy = 1; // the open answer's connection, until it is done
  let window: PartWindow | undefined;
  try {
    const size = partSize(shape.total - firstEnd, chunk, fetch.concurrency);
    const count = 1 + Math.ceil((shape.total - firstEnd) / size);
    const range = (k: number) => [firstEnd + (k - 1) * size, Math.min(shape.total, firstEnd + k * size) - 1] as const;
    const w: PartWindow = new PartWindow(
      (fetch.concurrency - 1) * chunk,
      fetch.concurrency,
      count,
      (k): Promise<Buffer> =>
        fetchPart(fetch, shape, ...range(k), signal, {
          progress: (left) => w.progress(k, left, () => openBusy),
          learn: (roundTripMs, bytesPerMs) => w.learn(roundTripMs, bytesPerMs),
          take: (bytes) => w.take(k, bytes, signal),
        }),
    );
    window = w;
    w.fill(openBusy);
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
    openBusy = 0; // the open answer's connection is free: its share goes to a part
    w.fill(openBusy);
    for (let k = 1; k < count; k++) {
      let data: Buffer;
      try {
        data = await w.parts.get(k)!.data!;
      } catch (err) {
        if (fetch.signal.aborted) throw err;
        parts.abort();
        yield* oneConnection(fetch, shape, pos);
        return;
      }
      w.advance();
      w.fill(openBusy);
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
    if (window) fetch.session.rangeHeldPeak = Math.max(fetch.session.rangeHeldPeak, window.peak);
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

/** What a part reports to the window it is fetched for, and waits on. */
interface PartHooks {
  /** `left` bytes are still to come. */
  progress(left: number): void;
  /** The part's round trip (request → headers) and its connection's pace, once measured. */
  learn(roundTripMs: number, bytesPerMs: number): void;
  /** Resolves once the part holds `bytes` more (it waits for room). */
  take(bytes: number): Promise<void>;
}

/** One part, whole, checked: a 206 for exactly [from, to] of the same file. */
async function fetchPart(
  fetch: RangedFetch,
  shape: Shape,
  from: number,
  to: number,
  signal: AbortSignal,
  hooks: PartHooks,
): Promise<Buffer> {
  fetch.session.rangeParts += 1;
  let last: unknown;
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    let res: EgressResponse;
    const asked = performance.now();
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
    if (
      res.status !== 206 ||
      String(res.headers['content-range']) !== `bytes ${from}-${to}/${shape.total}` ||
      validatorOf(res) !== shape.validator
    ) {
      res.body.destroy();
      throw new PartRefused('the origin did not answer the range as asked');
    }
    const headers = performance.now();
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const piece of res.body as AsyncIterable<Buffer>) {
      await hooks.take(piece.length);
      length += piece.length;
      if (length > to - from + 1) throw new PartRefused('a part longer than its range');
      chunks.push(piece);
      hooks.progress(to - from + 1 - length);
    }
    if (length !== to - from + 1) throw new PartRefused('a part shorter than its range');
    hooks.learn(headers - asked, length / Math.max(1, performance.now() - headers));
    return Buffer.concat(chunks, length);
  }
  throw last;
}

/** The rest of the file from `pos` over one connection; skips to `pos` in a whole answer. */
async function* oneConnection(fetch: RangedFetch, shape: Shape, pos: number): AsyncGenerator<Buffer> {
  const res = await open(fetch, shape, `bytes=${pos}-`, fetch.signal);
  const sameFile = validatorOf(res) === shape.validator;
  let skip = 0;
  if (
    res.status === 206 &&
    sameFile &&
    String(res.headers['content-range']) === `bytes ${pos}-${shape.total - 1}/${shape.total}`
  )
    skip = 0;
  else if (res.status === 200 && sameFile && Number(res.headers['content-length']) === shape.total) skip = pos;
  else {
    res.body.destroy();
    if (res.status >= 400) fetch.session.recordStatus(res.status, res.headers);
    throw new ReelayError(
      'upstream_error',
      'The origin changed the file while it was being fetched (its validator or size differ).',
    );
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
  return fetch.egress.open(fetch.target, {
    method: 'GET',
    headers,
    identity: true,
    followRedirects: false,
    allowErrorStatus: true,
    signal,
  });
}
