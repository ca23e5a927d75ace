// What an MP4 or M4A holds, read in this process from its index (the moov box) with GPAC's mp4box.js:
// the tracks and how long their media lasts. The worker checks each finished mp4 and m4a with it
// instead of starting ffprobe, which cost a short job about a third of its time (bench/short-merge).
// It answers only for files it reads whole and plain; anything else is ffprobe's to judge.
import fs from 'node:fs/promises';
import { createFile, MP4BoxBuffer, type Movie } from 'mp4box';
import { mp4Layout } from './faststart.js';
import type { ProbeResult, ProbeStream } from './probe.js';

/** Read in steps of this size until the index is parsed. */
const CHUNK_BYTES = 256 * 1024;
/** An index larger than this (hours of media with many samples) is left to ffprobe. */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

export type Mp4Info = Pick<ProbeResult, 'durationSeconds' | 'streams'>;

/**
 * The tracks and duration of a fast-start MP4 whose boxes fill the file exactly, or undefined when
 * this reader does not decide: the index after the media, a file cut short, a fragmented file, an
 * index it cannot parse. Only tracks that hold samples count: an empty track is a missing one.
 * The duration is the longest track's media (mdhd), as ffprobe's format duration is.
 */
export async function readMp4Info(file: string): Promise<Mp4Info | undefined> {
  const layout = await mp4Layout(file).catch(() => undefined);
  if (!layout?.moovFirst || !layout.complete) return undefined;
  const movie = await parseIndex(file);
  if (!movie?.hasMoov || movie.isFragmented) return undefined;
  const streams: ProbeStream[] = [];
  let durationSeconds = 0;
  for (const track of movie.tracks) {
    if (track.nb_samples <= 0) continue;
    const type =
      track.type === 'video' || track.type === 'audio' ? track.type : track.type === 'subtitles' ? 'subtitle' : 'data';
    streams.push({
      index: streams.length,
      type,
      codec: track.codec,
      ...(track.video ? { width: track.video.width, height: track.video.height } : {}),
    });
    if (track.timescale > 0) durationSeconds = Math.max(durationSeconds, track.duration / track.timescale);
  }
  return { streams, durationSeconds: durationSeconds > 0 ? durationSeconds : undefined };
}

/** Feeds the file to mp4box.js from its start until it has parsed the index (its onReady). */
async function parseIndex(file: string): Promise<Movie | undefined> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const parser = createFile(false); // the media data itself is not kept, only its boxes' headers
    let movie: Movie | undefined;
    let failed = false;
    parser.onReady = (info) => (movie = info);
    parser.onError = () => (failed = true);
    let offset = 0;
    while (!movie && !failed && offset < size && offset < MAX_INDEX_BYTES) {
      const chunk = new ArrayBuffer(Math.min(CHUNK_BYTES, size - offset));
      const { bytesRead } = await handle.read(new Uint8Array(chunk), 0, chunk.byteLength, offset);
      if (bytesRead !== chunk.byteLength) return undefined;
      // mp4box.js answers with the position it needs next: past the media data, which it skips.
      const next = parser.appendBuffer(MP4BoxBuffer.fromArrayBuffer(chunk, offset));
      offset = Math.max(next, offset + bytesRead);
    }
    return failed ? undefined : movie;
  } catch {
    return undefined; // a box mp4box.js cannot parse: ffprobe decides
  } finally {
    await handle.close();
  }
}
