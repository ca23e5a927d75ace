// Whether an MP4 is "fast start" (its index, the moov box, before the media data), read from the box
// headers alone. Kept in production code: the worker's output verification checks it (worker-truth),
// and the tests of ffmpeg's +faststart use the same reader.
import fs from 'node:fs/promises';

/**
 * Whether the `moov` box comes before `mdat` among the file's top-level boxes (what +faststart
 * does). Reads only box headers: 32-bit size and type, a 64-bit size when the 32-bit one is 1, and
 * size 0 meaning "to the end of the file". Throws for a file with neither box (not an MP4).
 */
export async function moovBeforeMdat(file: string): Promise<boolean> {
  const handle = await fs.open(file, 'r');
  try {
    const { size: fileSize } = await handle.stat();
    const header = Buffer.alloc(16);
    let offset = 0;
    while (offset + 8 <= fileSize) {
      const { bytesRead } = await handle.read(header, 0, 16, offset);
      if (bytesRead < 8) break;
      const type = header.toString('latin1', 4, 8);
      if (type === 'moov') return true;
      if (type === 'mdat') return false;
      let boxSize = header.readUInt32BE(0);
      if (boxSize === 1) {
        if (bytesRead < 16) break;
        const large = header.readBigUInt64BE(8);
        if (large > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`MP4 box too large at offset ${offset} in ${file}`);
        boxSize = Number(large);
      } else if (boxSize === 0) {
        break; // the last box runs to the end of the file, and it is neither moov nor mdat
      }
      if (boxSize < 8) throw new Error(`invalid MP4 box size ${boxSize} at offset ${offset} in ${file}`);
      offset += boxSize;
    }
  } finally {
    await handle.close();
  }
  throw new Error(`no moov or mdat box in ${file}: not an MP4 file`);
}
