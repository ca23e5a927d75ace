// The runner of a job's steps: in order, each seeing what the steps before it made, each one's time
// added to its phase of the job's log line, and none started once the job is stopped or out of time
// but those that judge and keep a file already made. What a step throws is thrown on as it is.
import { FfmpegError } from '@reelay/media';
import type { Made, Step, StepContext } from './step.js';

export async function runSteps(start: StepContext, steps: readonly Step[]): Promise<StepContext> {
  let ctx = start;
  for (const step of steps) {
    // The errors ffmpeg's runner throws for the same causes, so process.ts classifies them alike.
    if (!step.finishing) {
      if (ctx.signal.aborted)
        throw new FfmpegError('aborted', `the job was stopped before ${step.name}`, undefined, '');
      if (Date.now() >= ctx.deadline) throw new FfmpegError('timeout', `no time left for ${step.name}`, undefined, '');
    }
    const began = performance.now();
    const made: Partial<Made> | void = await step.run(ctx);
    ctx.phases[step.phase] = (ctx.phases[step.phase] ?? 0) + Math.round(performance.now() - began);
    if (made) ctx = { ...ctx, ...made };
  }
  return ctx;
}
