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
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const buf = chunk as Buffer;
    total += buf.length;
    if (total > maxBytes) {
      stream.destroy();
      throw new BodyTooLargeError(maxBytes);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks, total);
}

/**
 * Reads at least `bytes` bytes (fewer if the stream ends first) without losing the rest: returns the
 * head and a function that reads the remainder up to maxBytes in total, or one that yields the head
 * and then the unread remainder unbuffered (to stream on a body that was only peeked at).
 */
export async function readHead(
  stream: Readable,
  bytes: number,
): Promise<{ head: Buffer; ended: boolean; rest: (maxBytes: number) => Promise<Buffer>; replay: () => AsyncGenerator<Buffer> }> {
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
    const more: Buffer[] = [head];
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
      more.push(buf);
    }
    return Buffer.concat(more, size);
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
