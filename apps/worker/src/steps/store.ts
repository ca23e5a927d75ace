// The verified file kept in the artifact store under the job's id, and the job's progress at 100.
// Both run past the deadline: the file is made and judged, and throwing it away now helps no one.
import { onStorage } from '../failure.js';
import type { Step } from './step.js';

export const store: Step = {
  name: 'store',
  phase: 'store',
  finishing: true,
  async run(ctx) {
    const { deps, payload, plan } = ctx;
    const expiresAt = Date.now() + deps.config.ARTIFACT_TTL_SECONDS * 1000;
    const stored = await onStorage('artifacts', () =>
      deps.artifacts.put(payload.id, ctx.output, {
        filename: plan.filename,
        content_type: plan.contentType,
        expires_at: expiresAt,
      }),
    );
    return { stored };
  },
};

export const finish: Step = {
  name: 'finish',
  phase: 'progress',
  finishing: true,
  async run(ctx) {
    await ctx.job.updateProgress(100);
  },
};
