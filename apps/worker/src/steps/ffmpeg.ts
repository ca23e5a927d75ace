// The job's one ffmpeg command: a merge, convert, remux or subtitle track, with a fast or re-encoded
// clip, tags and cover inside its arguments (packages/media builds them), run through the job's proxy
// with progress. Without a duration to measure progress by, ffprobe finds one while ffmpeg runs.
import { setTimeout as delay } from 'node:timers/promises';
import { buildArgs, clipLength, runFfmpeg, type MediaOperation } from '@reelay/media';
import { withRef } from '@reelay/observability';
import { probeDuration } from './media-duration.js';
import { rendering } from './render.js';
import { childLimits, type Made, type Step, type StepContext } from './step.js';

/** As long as the least time between two progress writes: a job shorter than this needs no percentage. */
export const PROBE_DELAY_MS = 1_000;

export const ffmpeg: Step = {
  name: 'ffmpeg',
  phase: 'ffmpeg',
  run: (ctx) => rendering(ctx, () => runOperation(ctx, ctx.plan.operation)),
};

export interface OperationOptions {
  /** The job's percentage from ffmpeg's (default: the same): a step before it may have done part of the job. */
  progress?: (percent: number) => number;
  /** A second command after the first failed (it throws the failure when there is none). */
  fallback?: (err: unknown) => Promise<MediaOperation>;
}

/** Runs the operation into the job's output; hands on the length the file must have and how a clip was cut. */
export async function runOperation(
  ctx: StepContext,
  operation: MediaOperation,
  options: OperationOptions = {},
): Promise<Partial<Made>> {
  const { deps, payload } = ctx;
  const clip = payload.clip;
  const inputSeconds = clip ? await ctx.mediaSeconds : undefined;
  // Without a duration from the extract, ffprobe finds it while ffmpeg already runs, and only once
  // ffmpeg has run for PROBE_DELAY_MS: a job done sooner shows no percentage anyway, and an ffprobe
  // beside it cost a process start and a header read (a third of a short job's time, in bench/).
  const probeAbort = new AbortController();
  const probeSignal = AbortSignal.any([ctx.signal, probeAbort.signal]);
  const known = clip ? clipLength(clip, inputSeconds) : payload.duration;
  const duration =
    known ??
    probeLater(ctx, probeSignal).catch((err: unknown) => {
      if (!probeSignal.aborted)
        ctx.log.info({ cause: withRef((err as Error).message, payload.id) }, 'duration probe failed');
      return undefined;
    });
  const run = (op: MediaOperation) =>
    runFfmpeg({
      binary: deps.binaries.ffmpeg,
      args: buildArgs(op, { output: ctx.output, maxOutputBytes: deps.config.MAX_MEDIA_BYTES }).args,
      env: ctx.session.env,
      cwd: ctx.dir,
      signal: ctx.signal,
      timeoutMs: Math.max(1, ctx.deadline - Date.now()),
      limits: childLimits(deps.config),
      killSignal: ctx.cancel,
      durationSeconds: duration,
      onProgress: (percent) => ctx.progress.report(options.progress ? options.progress(percent) : percent),
    });
  try {
    try {
      await run(operation);
    } catch (err) {
      if (!options.fallback) throw err;
      await run(await options.fallback(err));
    }
  } finally {
    probeAbort.abort();
  }
  return {
    // A clip of a source of unknown length may end anywhere before its end: no length to expect.
    outputSeconds: clip ? (inputSeconds === undefined ? undefined : known) : await duration,
    ...(clip ? { clipMethod: clip.mode === 'fast' ? 'copy' : 'reencode' } : {}),
  };
}

async function probeLater(ctx: StepContext, signal: AbortSignal): Promise<number | undefined> {
  await delay(PROBE_DELAY_MS, undefined, { signal });
  return probeDuration(ctx.deps, ctx.plan, ctx.session, { ...ctx, signal });
}
