// A whole file's local copy (fetch-whole-file.ts) written again in its own format: its streams copied.
// Where they do not fit that format after all (its name or type said another one), ffprobe reads
// what the copy holds and the file is converted with that, as any file is.
import { FfmpegError, probe, type ConvertOperation } from '@reelay/media';
import { runOperation } from './ffmpeg.js';
import { rendering } from './render.js';
import { childLimits, type Step, type StepContext } from './step.js';

export const copyWholeFile: Step = {
  name: 'copy-whole-file',
  phase: 'ffmpeg',
  run: (ctx) =>
    rendering(ctx, () =>
      runOperation(ctx, ctx.plan.operation, {
        // The fetch was the first 90 %; ffmpeg's copy is the rest.
        progress: (percent) => 90 + percent / 10,
        fallback: async (err) => {
          const op = ctx.plan.operation;
          if (!(err instanceof FfmpegError) || err.kind !== 'failed' || op.type !== 'convert') throw err;
          ctx.log.info(
            'whole file: its streams could not be copied into its own format; converting what ffprobe finds',
          );
          return probedOperation(ctx, op);
        },
      }),
    ),
};

/** A whole file's operation with the codecs ffprobe finds in its local copy, copying only what fits. */
async function probedOperation(ctx: StepContext, op: ConvertOperation): Promise<ConvertOperation> {
  const info = await probe(op.input, {
    binary: ctx.deps.binaries.ffprobe,
    kind: 'progressive',
    signal: ctx.signal,
    timeoutMs: Math.max(5_000, ctx.deadline - Date.now()),
    limits: childLimits(ctx.deps.config),
  });
  const codec = (type: string) => info.streams.find((s) => s.type === type)?.codec;
  return {
    ...op,
    streamsFit: false,
    audioCodec: codec('audio') ?? op.audioCodec,
    videoCodec: codec('video') ?? op.videoCodec,
  };
}
