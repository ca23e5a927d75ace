// One attempt of a download job, once its folder and proxy session exist: its steps chosen once from
// its payload and plan (steps/choose.ts), run in order (steps/run-steps.ts), and the stored file as
// the job's result. Failures are thrown as the steps threw them, for process.ts to classify.
import path from 'node:path';
import type { JobResult } from '@reelay/contracts';
import { chooseSteps } from './steps/choose.js';
import { runSteps } from './steps/run-steps.js';
import type { RunContext, RunDeps } from './steps/step.js';

export async function runJob(deps: RunDeps, ctx: RunContext): Promise<JobResult> {
  const steps = chooseSteps(ctx.payload, ctx.plan, { cover: deps.egress !== undefined });
  ctx.log.debug({ steps: steps.map((s) => s.name) }, 'job steps chosen');
  const output = path.join(ctx.dir, 'output.part');
  const { stored, clipMethod } = await runSteps({ ...ctx, deps, phases: ctx.phases ?? {}, output }, steps);
  if (!stored) throw new Error('the job ran no step that stores its file');
  return {
    filename: stored.filename,
    content_type: stored.content_type,
    size: stored.size,
    expires_at: stored.expires_at,
    ...(clipMethod ? { clip_method: clipMethod } : {}),
  };
}
