// Cover art for audio files: the item's thumbnail fetched through the egress guard (not the job's
// proxy session, whose failures fail the job), at most COVER_MAX_BYTES decoded, and made by ffmpeg
// into a JPEG (mp3, m4a) or an ffmetadata picture comment (opus). A cover that cannot be had is
// logged and left out: the audio is what was asked for.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Cover, OutputFormat } from '@reelay/contracts';
import type { Egress } from '@reelay/egress';
import { coverConvertArgs, opusCoverMetadata, runFfmpeg, type ChildLimits, type TagPlan } from '@reelay/media';
import type { Logger } from '@reelay/observability';

/** Largest thumbnail a job reads (decoded bytes): covers are small, and more is not a thumbnail. */
export const COVER_MAX_BYTES = 5 * 1024 * 1024;
const COVER_DEADLINE_MS = 15_000;

export interface CoverDeps {
  egress: Pick<Egress, 'open' | 'read'>;
  ffmpeg: string;
  limits?: ChildLimits;
}

/** The cover input for the job's ffmpeg (see coverInputArgs), or undefined when there is none. */
export async function prepareCover(
  deps: CoverDeps,
  cover: Cover,
  format: OutputFormat,
  tags: TagPlan | undefined,
  dir: string,
  signal: AbortSignal,
  log: Logger,
): Promise<string | undefined> {
  try {
    const res = await deps.egress.open(cover.url, {
      signal,
      deadlineMs: COVER_DEADLINE_MS,
      headers: { accept: 'image/*' },
    });
    const raw = path.join(dir, 'cover.source');
    await fs.writeFile(raw, await deps.egress.read(res.body, COVER_MAX_BYTES));
    const jpeg = path.join(dir, 'cover.jpg');
    await runFfmpeg({
      binary: deps.ffmpeg,
      args: coverConvertArgs(raw, jpeg),
      signal,
      timeoutMs: COVER_DEADLINE_MS,
      limits: deps.limits,
      cwd: dir,
    });
    if (format !== 'opus') return jpeg;
    const data = await fs.readFile(jpeg);
    const size = jpegSize(data);
    const meta = path.join(dir, 'cover.ffmetadata');
    await fs.writeFile(meta, opusCoverMetadata(data, size?.width ?? 0, size?.height ?? 0, tags));
    return meta;
  } catch (err) {
    if (signal.aborted) throw err;
    log.info(
      { cause: err instanceof Error ? err.message : String(err) },
      'no cover art: the thumbnail could not be fetched or read',
    );
    return undefined;
  }
}

/** Width and height from a JPEG's start-of-frame segment (the FLAC picture block records them). */
export function jpegSize(data: Buffer): { width: number; height: number } | undefined {
  let at = 2;
  while (at + 9 < data.length && data[at] === 0xff) {
    const marker = data[at + 1];
    const length = data.readUInt16BE(at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: data.readUInt16BE(at + 5), width: data.readUInt16BE(at + 7) };
    }
    at += 2 + length;
  }
  return undefined;
}
