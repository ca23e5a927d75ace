// A precise clip of an mp4 or mkv job, cut smart where the source allows (packages/media smartcut.ts):
// the covering range is fetched once through the job's proxy, then everything else is local. Where
// the source cannot be spliced (neither H.264 nor HEVC, interlaced, open GOP, keyframes too far
// apart) the range is re-encoded whole instead, and the log says why. Every step runs under the
// job's bounds.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ChildLimits, ClipRange, MediaOperation, TagPlan } from '@reelay/media';
import { bodyArgs, fetchRangeArgs, FfmpegError, headArgs, joinArgs, joinScript, planSmartCut, probeRange, rangeInputs, reencodeRangeArgs, runFfmpeg, tailArgs, unsplicable } from '@reelay/media';
import type { Container } from '@reelay/contracts';
import type { Logger } from '@reelay/observability';
import { OutputError } from './failure.js';

/** What the steps run with: the job's binaries, bounds, proxy environment, folder and deadline. */
export interface PreciseClipContext {
  binaries: { ffmpeg: string; ffprobe: string };
  limits: ChildLimits;
  maxOutputBytes: number;
  /** The job's proxy session environment (the fetch is the only step that reads the network). */
  env: Record<string, string | undefined>;
  dir: string;
  signal: AbortSignal;
  deadline: number;
  log: Logger;
  progress: { report(percent: number): void };
}

export type PreciseMethod = 'smart' | 'reencode';

export interface PreciseClipJob {
  operation: Exclude<MediaOperation, { type: 'subtitle' }>;
  format: Container;
  clip: ClipRange;
  /** Where the clip ends: its end, or the media's end when that comes first. */
  end: number;
  tags?: TagPlan;
  output: string;
}

/** Runs the clip's steps and tells how it was cut. ffmpeg failures are thrown as by runFfmpeg. */
export async function runPreciseClip(ctx: PreciseClipContext, job: PreciseClipJob): Promise<PreciseMethod> {
  const { clip, end } = job;
  const remaining = () => {
    const left = ctx.deadline - Date.now();
    if (left <= 0) throw new FfmpegError('timeout', 'no time left for ffmpeg', undefined, '');
    return left;
  };
  const run = (args: string[], progress?: number) =>
    runFfmpeg({
      binary: ctx.binaries.ffmpeg,
      args,
      env: ctx.env,
      cwd: ctx.dir,
      signal: ctx.signal,
      timeoutMs: remaining(),
      limits: ctx.limits,
      ...(progress !== undefined ? { durationSeconds: progress, onProgress: (percent: number) => ctx.progress.report(percent) } : {}),
    });
  const range = path.join(ctx.dir, 'range.nut');
  const maxOutputBytes = ctx.maxOutputBytes;
  // 1. The only network step: the covering range, copied (only its segments are fetched).
  await run(fetchRangeArgs(rangeInputs(job.operation), clip.start, end, range, { progressUrl: 'pipe:1', maxOutputBytes }));
  const { size } = await fs.stat(range);
  if (size >= maxOutputBytes) throw new OutputError('The clip\'s range is larger than the media size limit.');
  // 2. Where its keyframes are, and what the head must match.
  const info = await probeRange(range, { binary: ctx.binaries.ffprobe, signal: ctx.signal, timeoutMs: remaining(), limits: ctx.limits });
  const finish = { format: job.format, tags: job.tags, progressUrl: 'pipe:1', maxOutputBytes, audio: info.audio };
  const length = end - clip.start;
  const why = info.video === undefined ? 'no video stream' : unsplicable(info.video);
  const plan = why === undefined ? planSmartCut(info.packets, clip.start, end) : { method: 'reencode' as const, reason: why };
  if (plan.method === 'reencode' || info.video === undefined) {
    ctx.log.info({ reason: plan.method === 'reencode' ? plan.reason : 'no video' }, 'precise clip: the range is re-encoded whole');
    await run(reencodeRangeArgs(range, clip.start, end, job.output, { ...finish, video: info.video !== undefined }), length);
    return 'reencode';
  }
  // 3. The head: [start, keyframe) encoded to match the copied stream; the body copied; the tail,
  // the frames before end that the copy cannot end on (B-frames), encoded like the head.
  let head: string | undefined;
  if (plan.keyframe > clip.start) {
    head = path.join(ctx.dir, 'head.nut');
    await run(headArgs(range, info.video, clip.start, plan.keyframe, head));
  }
  const body = path.join(ctx.dir, 'body.nut');
  const tailSource = plan.tail && { tail: plan.tail, output: path.join(ctx.dir, 'tail-source.nut') };
  await run(bodyArgs(range, info.video, plan.keyframe, plan.outpoint, body, tailSource));
  let tail: { file: string; from: number } | undefined;
  if (tailSource !== undefined) {
    tail = { file: 'tail.nut', from: tailSource.tail.from };
    await run(tailArgs(tailSource.output, info.video, tailSource.tail, end, path.join(ctx.dir, tail.file)));
  }
  // 4. Head, body and tail joined, the audio cut at the sample.
  const script = path.join(ctx.dir, 'join.ffconcat');
  await fs.writeFile(script, joinScript(head && path.basename(head), path.basename(body), clip.start, plan.keyframe, tail));
  await run(joinArgs(script, range, clip.start, end, job.output, { ...finish, codec: info.video.codec }), length);
  ctx.log.info({ codec: info.video.codec, keyframe: plan.keyframe, head_frames: plan.headFrames, tail_frames: plan.tail?.frames ?? 0 }, 'precise clip cut smart: the head and tail re-encoded, the rest copied');
  return 'smart';
}
