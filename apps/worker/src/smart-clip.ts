// A precise clip of an mp4 or mkv job, cut smart where the source allows (packages/media smartcut.ts):
// the covering range is fetched once through the job's proxy, then everything else is local. Where
// the source cannot be spliced (neither H.264 nor HEVC, interlaced, open GOP, keyframes too far
// apart) the range is re-encoded whole instead, and the log says why. Every step runs under the
// job's bounds.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ChildLimits, ClipRange, MediaOperation, TagPlan } from '@reelay/media';
import {
  audioArgs,
  audioCopyArgs,
  bodyArgs,
  fetchRangeArgs,
  FfmpegError,
  headArgs,
  joinArgs,
  joinScript,
  planAudioCopy,
  planSmartCut,
  probeRange,
  rangeInputs,
  reencodeRangeArgs,
  runFfmpeg,
  tailArgs,
  unsplicable,
} from '@reelay/media';
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
  /** Filled with how long each step took (ms, `clip_<step>`), for the job's log line (bench/ reads it). */
  phases?: Record<string, number>;
}

export type PreciseMethod = 'smart' | 'reencode';

export interface PreciseClipJob {
  operation: Exclude<MediaOperation, { type: 'subtitle' }>;
  format: Container;
  clip: ClipRange;
  /**
   * The media's duration, when known: the clip ends at it if that comes first. A rejection (the
   * caller's invalid_clip: a start past the end) stops the fetch and fails the clip with it.
   */
  mediaSeconds?: Promise<number | undefined>;
  tags?: TagPlan;
  output: string;
}

/** Runs the clip's steps and tells how it was cut. ffmpeg failures are thrown as by runFfmpeg. */
export async function runPreciseClip(ctx: PreciseClipContext, job: PreciseClipJob): Promise<PreciseMethod> {
  const { clip } = job;
  const remaining = () => {
    const left = ctx.deadline - Date.now();
    if (left <= 0) throw new FfmpegError('timeout', 'no time left for ffmpeg', undefined, '');
    return left;
  };
  const phases = ctx.phases ?? {};
  const timed = async <T>(step: string, work: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    try {
      return await work();
    } finally {
      phases[`clip_${step}`] = Math.round(performance.now() - t);
    }
  };
  const run = (step: string, args: string[], opts: { progress?: number; signal?: AbortSignal } = {}) =>
    timed(step, () =>
      runFfmpeg({
        binary: ctx.binaries.ffmpeg,
        args,
        env: ctx.env,
        cwd: ctx.dir,
        signal: opts.signal ?? ctx.signal,
        timeoutMs: remaining(),
        limits: ctx.limits,
        ...(opts.progress !== undefined
          ? { durationSeconds: opts.progress, onProgress: (percent: number) => ctx.progress.report(percent) }
          : {}),
      }),
    );
  const range = path.join(ctx.dir, 'range.nut');
  const maxOutputBytes = ctx.maxOutputBytes;
  // 1. The only network step: the covering range, copied (only its segments are fetched), while the
  // caller's ffprobe finds the media's duration (a clip.end past it reads to the end either way).
  let end = clip.end;
  await together(ctx.signal, [
    (signal) =>
      run(
        'fetch',
        fetchRangeArgs(rangeInputs(job.operation), clip.start, clip.end, range, {
          progressUrl: 'pipe:1',
          maxOutputBytes,
        }),
        { signal },
      ),
    async () => {
      const seconds = await job.mediaSeconds;
      if (seconds !== undefined) end = Math.min(end, seconds);
    },
  ]);
  const { size } = await fs.stat(range);
  if (size >= maxOutputBytes) throw new OutputError("The clip's range is larger than the media size limit.");
  // 2. Where its keyframes are, and what the head must match.
  const info = await timed('probe', () =>
    probeRange(range, { binary: ctx.binaries.ffprobe, signal: ctx.signal, timeoutMs: remaining(), limits: ctx.limits }),
  );
  const finish = { format: job.format, tags: job.tags, progressUrl: 'pipe:1', maxOutputBytes, audio: info.audio };
  const length = end - clip.start;
  const why = info.video === undefined ? 'no video stream' : unsplicable(info.video);
  const plan =
    why === undefined ? planSmartCut(info.packets, clip.start, end) : { method: 'reencode' as const, reason: why };
  if (plan.method === 'reencode' || info.video === undefined) {
    ctx.log.info(
      { reason: plan.method === 'reencode' ? plan.reason : 'no video' },
      'precise clip: the range is re-encoded whole',
    );
    await run(
      'reencode',
      reencodeRangeArgs(range, clip.start, end, job.output, { ...finish, video: info.video !== undefined }),
      { progress: length },
    );
    return 'reencode';
  }
  // 3. Side by side, each reading the range into its own file: the head, [start, keyframe), encoded
  // to match the copied stream; the body copied, and then the tail (the frames before end that the
  // copy cannot end on, B-frames) encoded like the head; the audio cut at the sample and encoded.
  // Each is a process of its own (ffmpeg runs one stream at a time), so on two cores the encodes
  // overlap the copy; the first failure stops the others.
  const video = info.video;
  const head = plan.keyframe > clip.start ? 'head.nut' : undefined;
  const body = 'body.nut';
  const tailSource = plan.tail && { tail: plan.tail, output: path.join(ctx.dir, 'tail-source.nut') };
  const tail = tailSource && { file: 'tail.nut', from: tailSource.tail.from };
  const audio = info.audio ? path.join(ctx.dir, 'audio.m4a') : undefined;
  // AAC into MP4 is copied, cut at the sample by an edit list (no encode: the slowest step otherwise).
  const audioCopy =
    audio !== undefined ? planAudioCopy(info.audioCodec, info.audioPackets, clip.start, end, job.format) : undefined;
  await together(ctx.signal, [
    (signal) =>
      head !== undefined
        ? run('head', headArgs(range, video, clip.start, plan.keyframe, path.join(ctx.dir, head)), { signal })
        : undefined,
    async (signal) => {
      await run('body', bodyArgs(range, video, plan.keyframe, plan.outpoint, path.join(ctx.dir, body), tailSource), {
        signal,
      });
      if (tailSource !== undefined && tail !== undefined)
        await run('tail', tailArgs(tailSource.output, video, tailSource.tail, end, path.join(ctx.dir, tail.file)), {
          signal,
        });
    },
    (signal) =>
      audio === undefined
        ? undefined
        : run(
            'audio',
            audioCopy !== undefined
              ? audioCopyArgs(range, audioCopy, end, audio)
              : audioArgs(range, clip.start, end, audio, job.format),
            { signal },
          ),
  ]);
  // 4. Head, body and tail joined, with the audio: all copied.
  const script = path.join(ctx.dir, 'join.ffconcat');
  await fs.writeFile(script, joinScript(head, body, clip.start, plan.keyframe, tail));
  await run('join', joinArgs(script, audio, job.output, { ...finish, codec: video.codec }), { progress: length });
  ctx.log.info(
    {
      codec: info.video.codec,
      keyframe: plan.keyframe,
      head_frames: plan.headFrames,
      tail_frames: plan.tail?.frames ?? 0,
      audio: audio === undefined ? 'none' : audioCopy !== undefined ? 'copied' : 'encoded',
    },
    'precise clip cut smart: the head and tail re-encoded, the rest copied',
  );
  return 'smart';
}

/**
 * Runs the steps at once, each with a signal that aborts when the job's does or when another step
 * fails; resolves when all have ended, and then throws the first failure (the others' "aborted"
 * follow from it). A step may be nothing (undefined).
 */
async function together(
  parent: AbortSignal,
  steps: ((signal: AbortSignal) => Promise<void> | undefined)[],
): Promise<void> {
  const failed = new AbortController();
  const signal = AbortSignal.any([parent, failed.signal]);
  let first: { error: unknown } | undefined;
  await Promise.all(
    steps.map(async (step) => {
      try {
        await step(signal);
      } catch (error) {
        first ??= { error };
        failed.abort();
      }
    }),
  );
  if (first) throw first.error;
}
