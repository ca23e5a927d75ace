// The judgement of the rendered file: what the proxy saw upstream, its size, and ffprobe's reading of
// it against what the job asked for (expectations.ts). Runs past the deadline: the file is made, and
// the check has its own bound.
import fs from 'node:fs/promises';
import { verifyOutput } from '@reelay/media';
import { expectedOutput } from '../expectations.js';
import { IncompleteOutputError, OutputError } from '../failure.js';
import { childLimits, type Step } from './step.js';

/** The proxy saw a failure upstream that fails the job whatever ffmpeg made of it; classifyFailure reads which. */
export class UpstreamFailed extends Error {
  override readonly name = 'UpstreamFailed';
}

export const verify: Step = {
  name: 'verify',
  phase: 'verify',
  finishing: true,
  async run(ctx) {
    const { deps, payload, plan, session, output } = ctx;
    const maxBytes = deps.config.MAX_MEDIA_BYTES;
    // A blocked address, a byte limit, a refusal or a 5xx fail the job even when ffmpeg exited 0 (it
    // skips HLS segments it cannot fetch). A 404 or 410 alone does not: DASH and HLS demuxers often
    // ask for one segment past the end and still make a whole file. The file's check decides, and the
    // 404 stays on record as the explanation if it fails.
    const { notFound: _notFound, ...fatal } = session.failures;
    if (Object.values(fatal).some((v) => v !== undefined)) throw new UpstreamFailed();

    const { size } = await fs.stat(output);
    if (size === 0) throw new OutputError('ffmpeg produced an empty file.');
    if (size >= maxBytes) throw new OutputError('The result is larger than the media size limit.');
    const problems = await verifyOutput(output, expectedOutput(payload, plan.operation, ctx.outputSeconds), {
      binary: deps.binaries.ffprobe,
      kind: plan.operation.type === 'subtitle' ? 'subtitles' : undefined,
      signal: ctx.signal,
      timeoutMs: Math.max(5_000, ctx.deadline - Date.now()),
      limits: childLimits(deps.config),
    });
    if (problems.length > 0) throw new IncompleteOutputError(problems);
    if (session.failures.notFound)
      ctx.log.info(
        { status: session.failures.notFound },
        'the origin answered 404 for part of the media, and the file is complete',
      );
  },
};
