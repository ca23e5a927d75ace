// Whether an MP4 is "fast start" (its index, the moov box, before the media data), read from the box
// headers alone. Kept in production code: the worker's output verification checks it (worker-truth),
// and the tests of ffmpeg's +faststart use the same reader.
import fs from 'node:fs/promises';

/** The order of an MP4's top-level index and media, and whether its boxes fill the file exactly. */
export interface Mp4Layout {
  /** The `moov` box comes before `mdat` (what +faststart does). */
  moovFirst: boolean;
  /** Every top-level box ends inside the file and the last one ends at its end: nothing cut short. */
  complete: boolean;
}

/**
 * Walks the top-level boxes of an MP4, reading only their headers: 32-bit size and type, a 64-bit
 * size when the 32-bit one is 1, and size 0 meaning "to the end of the file". Throws for a file
 * with neither moov nor mdat (not an MP4) or with a box size too small for its header.
 */
export async function mp4Layout(file: string): Promise<Mp4Layout> {
  const handle = await fs.open(file, 'r');
  try {
    const { size: fileSize } = await handle.stat();
    const header = Buffer.alloc(16);
    let offset = 0;
    let moovFirst: boolean | undefined;
    while (offset + 8 <= fileSize) {
      const { bytesRead } = await handle.read(header, 0, 16, offset);
      if (bytesRead < 8) break;
      const type = header.toString('latin1', 4, 8);
      if (type === 'moov' || type === 'mdat') moovFirst ??= type === 'moov';
      let boxSize = header.readUInt32BE(0);
      if (boxSize === 1) {
        if (bytesRead < 16) break;
        const large = header.readBigUInt64BE(8);
        if (large > BigInt(Number.MAX_SAFE_INTEGER))
          throw new Error(`MP4 box too large at offset ${offset} in ${file}`);
        boxSize = Number(large);
      } else if (boxSize === 0) {
        boxSize = fileSize - offset; // the last box runs to the end of the file
      }
      if (boxSize < 8) throw new Error(`invalid MP4 box size ${boxSize} at offset ${offset} in ${file}`);
      offset += boxSize;
    }
    if (moovFirst === undefined) throw new Error(`no moov or mdat box in ${file}: not an MP4 file`);
    return { moovFirst, complete: offset === fileSize };
  } finally {
    await handle.close();
  }
}

/** Whether the `moov` box comes before `mdat` among the file's top-level boxes (what +faststart does). */
export async function moovBeforeMdat(file: string): Promise<boolean> {
  return (await mp4Layout(file)).moovFirst;
}
