// Reading response bodies with a hard byte limit, so no origin can make reelay buffer more than it
// asked for.
import type { Readable } from 'node:stream';

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`The response is larger than ${limit} bytes.`);
    this.name = 'BodyTooLargeError';
  }
}

/** Reads the whole stream, or throws BodyTooLargeError (and destroys the stream) past maxBytes. */
export async function readAll(stream: Readable, maxBytes: number): Promise<Buffer> {
  return gather(stream, stream[Symbol.asyncIterator](), [], 0, maxBytes);
}

/** Appends what the iterator still yields to `chunks` (holding `total` bytes), up to maxBytes in all. */
async function gather(
  stream: Readable,
  iterator: AsyncIterator<unknown>,
  chunks: Buffer[],
  total: number,
  maxBytes: number,
): Promise<Buffer> {
  let size = total;
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    const buf = next.value as Buffer;
    size += buf.length;
    if (size > maxBytes) {
      stream.destroy();
      throw new BodyTooLargeError(maxBytes);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks, size);
}

/**
 * Reads at least `bytes` bytes (fewer if the stream ends first) without losing the rest: returns the
 * head and a function that reads the remainder up to maxBytes in total, or one that yields the head
 * and then the unread remainder unbuffered (to stream on a body that was only peeked at).
 */
export async function readHead(
  stream: Readable,
  bytes: number,
): Promise<{
  head: Buffer;
  ended: boolean;
  rest: (maxBytes: number) => Promise<Buffer>;
  replay: () => AsyncGenerator<Buffer>;
}> {
  const chunks: Buffer[] = [];
  let total = 0;
  const iterator = stream[Symbol.asyncIterator]();
  let ended = false;
  while (total < bytes) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    const buf = next.value as Buffer;
    chunks.push(buf);
    total += buf.length;
  }
  const head = Buffer.concat(chunks, total);
  const rest = async (maxBytes: number): Promise<Buffer> => {
    if (total > maxBytes) {
      stream.destroy();
      throw new BodyTooLargeError(maxBytes);
    }
    if (ended) return head;
    return gather(stream, iterator, [head], total, maxBytes);
  };
  async function* replay(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    if (ended) return;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value as Buffer;
    }
  }
  return { head, ended, rest, replay };
}

/** What peek() read of a stream's start. */
export interface Peeked {
  /** The bytes read: put back at the stream's head unless it ended or failed. */
  head: Buffer;
  /** The stream ended while peeking: `head` is the whole body and the stream can no longer be read. */
  ended: boolean;
  /** The stream failed while peeking (its own error listeners have seen why). */
  failed: boolean;
  /** How long the peek took. */
  ms: number;
  /** How long it took from its first byte on: the body's pace without the wait for that byte. */
  paceMs: number;
}

/**
 * Reads the start of a stream (until `bytes` have come, it ends, or `ms` pass) and puts what it read
 * back at its head (unshift), so the caller can go on with the very same stream: piping it on costs
 * no extra stream stage per chunk, which a replaying generator did (for a large media file, a
 * share of the job proxy's CPU). The stream is left paused.
 */
export function peek(stream: Readable, bytes: number, ms = Number.POSITIVE_INFINITY): Promise<Peeked> {
  const started = performance.now();
  let firstAt: number | undefined;
  const chunks: Buffer[] = [];
  let total = 0;
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (how: 'more' | 'ended' | 'failed') => {
      clearTimeout(timer);
      stream.pause();
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      const head = Buffer.concat(chunks, total);
      if (how === 'more' && head.length > 0) stream.unshift(head);
      const now = performance.now();
      resolve({
        head,
        ended: how === 'ended',
        failed: how === 'failed',
        ms: now - started,
        paceMs: now - (firstAt ?? started),
      });
    };
    const onData = (chunk: Buffer) => {
      firstAt ??= performance.now();
      chunks.push(chunk);
      total += chunk.length;
      if (total >= bytes) finish('more');
    };
    const onEnd = () => finish('ended');
    const onError = () => finish('failed');
    if (stream.readableEnded) return finish('ended');
    if (stream.destroyed) return finish('failed');
    if (Number.isFinite(ms)) timer = setTimeout(() => finish('more'), ms);
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    stream.resume(); // a 'data' listener alone does not restart a stream paused before (an earlier peek)
  });
}
