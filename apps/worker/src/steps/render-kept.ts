// The plan's kept intervals (kept.ts) rendered by the smart cut into mp4 or mkv: for each, only the
// frames from its start to the next keyframe (and before its end, back to the last one the copy can
// stop at) are encoded, the rest copied (smart-clip.ts runs the steps; packages/media plans them).
// Where the source cannot be spliced, the interval is re-encoded whole, and the result says so.
import { clipLength, outputFormat } from '@reelay/media';
import { ReelayError } from '@reelay/contracts';
import { runPreciseClip } from '../smart-clip.js';
import { rendering } from './render.js';
import { childLimits, type Step } from './step.js';

export const renderKept: Step = {
  name: 'render-kept',
  phase: 'ffmpeg',
  run: (ctx) =>
    rendering(ctx, async () => {
      const { deps, plan } = ctx;
      const operation = plan.operation;
      const format = outputFormat(operation);
      if (!plan.kept || operation.type === 'subtitle' || (format !== 'mp4' && format !== 'mkv'))
        throw new TypeError('render-kept needs kept intervals of a video into mp4 or mkv (kept.ts)');
      // One interval is a precise clip. Removing ranges keeps several (issue 34): each cut the same
      // way and joined, which is not built yet.
      const [kept, ...more] = plan.kept;
      if (more.length > 0)
        throw new ReelayError('internal_error', 'Rendering several kept intervals is not supported yet.');
      const interval = { ...kept, mode: 'precise' as const };
      const method = await runPreciseClip(
        {
          binaries: deps.binaries,
          limits: childLimits(deps.config),
          maxOutputBytes: deps.config.MAX_MEDIA_BYTES,
          env: ctx.session.env,
          dir: ctx.dir,
          signal: ctx.signal,
          deadline: ctx.deadline,
          log: ctx.log,
          progress: ctx.progress,
          phases: ctx.phases,
        },
        { operation, format, clip: interval, mediaSeconds: ctx.mediaSeconds, tags: operation.tags, output: ctx.output },
      );
      const seconds = await ctx.mediaSeconds; // settled: the clip waited for it
      return {
        clipMethod: method,
        // A clip of a source of unknown length may end anywhere before its end: no length to expect.
        outputSeconds: seconds === undefined ? undefined : clipLength(interval, seconds),
      };
    }),
};
