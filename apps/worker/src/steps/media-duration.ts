// A clip needs the source's duration before its file is made: a start at or past the end is the
// client's error (invalid_clip), which ffmpeg would not report (it copies the last keyframe's stretch
// instead). The duration is the payload's, or ffprobe's through the job's proxy.
import { ReelayError } from '@reelay/contracts';
import { FfmpegError, probe } from '@reelay/media';
import type { Logger } from '@reelay/observability';
import type { JobPlan } from '../plan.js';
import type { JobProxySession } from '../proxy-session.js';
import { childLimits, type RunDeps, type Step } from './step.js';

/**
 * `alongside`: the step only starts the probe, and the render waits for it beside its own first
 * request (the smart cut fetches its range meanwhile: the probe is then a process start and a request
 * nothing waits for). Otherwise the duration is found and checked before any later step starts.
 */
export function mediaDuration(when: 'first' | 'alongside'): Step {
  return {
    name: when === 'first' ? 'media-duration' : 'media-duration-alongside',
    phase: 'prepare',
    async run(ctx) {
      const { payload } = ctx;
      const clip = payload.clip;
      const mediaSeconds = (
        payload.duration === undefined
          ? probeDuration(ctx.deps, ctx.plan, ctx.session, ctx)
          : Promise.resolve(payload.duration)
      ).then((seconds) => {
        if (clip && seconds !== undefined && clip.start >= seconds) {
          throw new ReelayError(
            'invalid_clip',
            `clip.start (${clip.start} s) is at or past the end of the media (${seconds.toFixed(3)} s).`,
          );
        }
        return seconds;
      });
      // Awaited by a later step on every path; this only keeps a failure before then from counting as unhandled.
      mediaSeconds.catch(() => undefined);
      if (when === 'first') await mediaSeconds;
      return { mediaSeconds };
    },
  };
}

/** The first input's duration, for progress. A quarter of the job's time at most, 15 s at most. */
export async function probeDuration(
  deps: RunDeps,
  plan: JobPlan,
  session: JobProxySession,
  ctx: { log: Logger; signal: AbortSignal; deadline: number },
): Promise<number | undefined> {
  const timeout = Math.min(15_000, (deps.config.JOB_TIMEOUT_SECONDS * 1000) / 4, ctx.deadline - Date.now());
  try {
    const info = await probe(plan.probe.input, {
      binary: deps.binaries.ffprobe,
      kind: plan.probe.kind,
      aes128: plan.probe.aes128,
      env: session.headerReadEnv,
      signal: ctx.signal,
      timeoutMs: timeout,
      limits: childLimits(deps.config),
    });
    return info.durationSeconds;
  } catch (err) {
    if (!(err instanceof FfmpegError)) throw err;
    ctx.log.info(
      { kind: err.kind, exitCode: err.exitCode },
      'no duration from ffprobe: progress will jump to 100 at the end',
    );
    return undefined;
  }
}
