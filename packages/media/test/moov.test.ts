import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { moovBeforeMdat } from '../src/faststart.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-moov-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function box(type: string, payload = 0): Buffer {
  const b = Buffer.alloc(8 + payload);
  b.writeUInt32BE(8 + payload, 0);
  b.write(type, 4, 'latin1');
  return b;
}

/** A box with size field 1 and its real size in a 64-bit field. */
function largeBox(type: string, payload = 0): Buffer {
  const b = Buffer.alloc(16 + payload);
  b.writeUInt32BE(1, 0);
  b.write(type, 4, 'latin1');
  b.writeBigUInt64BE(BigInt(16 + payload), 8);
  return b;
}

/** A box with size field 0: it runs to the end of the file. */
function openBox(type: string, payload = 0): Buffer {
  const b = Buffer.alloc(8 + payload);
  b.write(type, 4, 'latin1');
  return b;
}

function file(name: string, ...boxes: Buffer[]): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, Buffer.concat(boxes));
  return p;
}

describe('moov before mdat', () => {
  test('is true for a faststart layout', async () => {
    expect(await moovBeforeMdat(file('fast.mp4', box('ftyp', 8), box('moov', 100), box('mdat', 1000)))).toBe(true);
  });

  test('is false when the media comes first', async () => {
    expect(
      await moovBeforeMdat(file('slow.mp4', box('ftyp', 8), box('free'), box('mdat', 1000), box('moov', 100))),
    ).toBe(false);
  });

  test('steps over boxes with 64-bit sizes', async () => {
    expect(
      await moovBeforeMdat(
        file('large-free.mp4', box('ftyp', 8), largeBox('free', 5000), box('moov', 10), box('mdat', 10)),
      ),
    ).toBe(true);
    expect(await moovBeforeMdat(file('large-mdat.mp4', box('ftyp', 8), largeBox('mdat', 5000), box('moov', 10)))).toBe(
      false,
    );
  });

  test('sees a final mdat whose size runs to the end of the file', async () => {
    expect(await moovBeforeMdat(file('open-mdat.mp4', box('ftyp', 8), openBox('mdat', 100)))).toBe(false);
  });

  test('throws for a file that is not an MP4', async () => {
    await expect(moovBeforeMdat(file('text.mp4', Buffer.from('hello, this is not a movie at all\n')))).rejects.toThrow(
      /invalid MP4 box size|not an MP4/,
    );
    await expect(moovBeforeMdat(file('empty.mp4'))).rejects.toThrow(/not an MP4/);
    await expect(moovBeforeMdat(file('no-moov.mp4', box('ftyp', 8), box('free', 8)))).rejects.toThrow(/not an MP4/);
  });

  test('throws for a box size too small to hold its header', async () => {
    const bad = box('ftyp', 8);
    bad.writeUInt32BE(4, 0);
    await expect(moovBeforeMdat(file('bad.mp4', bad, box('moov')))).rejects.toThrow(/invalid MP4 box size 4/);
  });
});
