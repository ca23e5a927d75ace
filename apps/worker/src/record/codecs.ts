// The codecs of one live segment (ffprobe of its bytes, with its init section for fMP4), as one
// string such as `audio:aac,video:h264`: the recorder compares them at discontinuities, since parts
// of other codecs cannot be joined into one file.
import fs from 'node:fs/promises';
import path from 'node:path';
import { probe, type ChildLimits } from '@reelay/media';

export const UNKNOWN_CODECS = 'unknown';

export async function segmentCodecs(
  body: Buffer,
  init: Buffer | undefined,
  opts: { dir: string; ffprobe: string; signal?: AbortSignal; limits?: ChildLimits },
): Promise<string> {
  const file = path.join(opts.dir, 'probe.seg');
  await fs.writeFile(file, init ? Buffer.concat([init, body]) : body);
  try {
    const info = await probe(file, {
      binary: opts.ffprobe,
      signal: opts.signal,
      timeoutMs: 15_000,
      limits: opts.limits,
    });
    return (
      info.streams
        .map((s) => `${s.type}:${s.codec}`)
        .sort()
        .join(',') || UNKNOWN_CODECS
    );
  } catch {
    return UNKNOWN_CODECS;
  } finally {
    await fs.rm(file, { force: true });
  }
}
