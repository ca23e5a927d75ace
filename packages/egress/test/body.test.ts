// peek(): the proxy reads the start of a body (the manifest sniff, the Range probe) and then sends
// the very same stream on, so no byte may be lost, repeated or reordered, however the peek ends.
import { PassThrough, Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, expect, test } from '@jest/globals';
import { peek } from '../src/body.js';

const KB = 1024;

/** 64 KiB chunks of distinct bytes, as a socket would deliver a file. */
function chunks(count: number): Buffer[] {
  return Array.from({ length: count }, (_, i) => Buffer.alloc(64 * KB, i % 251));
}

describe('peek', () => {
  test('reads at least the bytes asked and puts them back: the stream still yields everything, in order', async () => {
    const data = chunks(20);
    const stream = Readable.from(data, { objectMode: false });
    const seen = await peek(stream, 100 * KB);
    expect(seen.ended).toBe(false);
    expect(seen.failed).toBe(false);
    expect(seen.head.length).toBeGreaterThanOrEqual(100 * KB);
    expect(seen.head.length).toBeLessThan(20 * 64 * KB);
    expect((await buffer(stream)).equals(Buffer.concat(data))).toBe(true);
  });

  test('two peeks in a row (the sniff, then the probe) see the same start, and the stream flows after them', async () => {
    const data = chunks(20);
    const stream = Readable.from(data, { objectMode: false });
    const first = await peek(stream, 10 * KB);
    const second = await peek(stream, 300 * KB);
    expect(second.head.subarray(0, first.head.length).equals(first.head)).toBe(true);
    expect(second.head.length).toBeGreaterThanOrEqual(300 * KB);
    expect((await buffer(stream)).equals(Buffer.concat(data))).toBe(true);
  });

  test('a body that ends during the peek is whole in the head, and says so', async () => {
    const data = chunks(2);
    const seen = await peek(Readable.from(data, { objectMode: false }), 1024 * KB);
    expect(seen.ended).toBe(true);
    expect(seen.head.equals(Buffer.concat(data))).toBe(true);
  });

  test('a slow body: the peek ends after its time with what came, and what comes later follows it', async () => {
    const stream = new PassThrough();
    stream.write(Buffer.alloc(10 * KB, 1));
    const seen = await peek(stream, 1024 * KB, 20);
    expect(seen.ended).toBe(false);
    expect(seen.head.length).toBe(10 * KB);
    expect(seen.ms).toBeGreaterThanOrEqual(19);
    expect(seen.paceMs).toBeLessThanOrEqual(seen.ms);
    stream.end(Buffer.alloc(5 * KB, 2));
    expect((await buffer(stream)).equals(Buffer.concat([Buffer.alloc(10 * KB, 1), Buffer.alloc(5 * KB, 2)]))).toBe(
      true,
    );
  });

  test('a body that fails during the peek is reported failed, not ended', async () => {
    const stream = new PassThrough();
    stream.on('error', () => {}); // the proxy's own listener, which records why
    stream.write(Buffer.alloc(KB));
    const peeking = peek(stream, 1024 * KB);
    stream.destroy(new Error('reset by the origin'));
    const seen = await peeking;
    expect(seen.failed).toBe(true);
    expect(seen.ended).toBe(false);
  });
});
