// A whole file kept in its own format (payload.whole_file: a collection's or subscription's entry) is
// fetched into the job's folder first (whole-file.ts), in parallel Range parts where that gains; the
// plan then reads the local copy, and copy-whole-file.ts copies its streams.
import path from 'node:path';
import type { JobPayload } from '@reelay/contracts';
import { FfmpegError, type ConvertOperation, type MediaOperation } from '@reelay/media';
import { fetchWholeFile as fetchInto, WHOLE_FILE_RANGE_THRESHOLD } from '../whole-file.js';
import type { Step } from './step.js';

/** A whole file converted into its own format: one progressive input, without a clip or subtitles. */
export function isWholeFile(
  payload: Pick<JobPayload, 'whole_file' | 'clip' | 'subtitles'>,
  operation: MediaOperation,
): operation is ConvertOperation {
  return (
    payload.whole_file === true &&
    operation.type === 'convert' &&
    operation.manifest === undefined &&
    !payload.clip &&
    !payload.subtitles?.length
  );
}

export const fetchWholeFile: Step = {
  name: 'fetch-whole-file',
  phase: 'fetch',
  async run(ctx) {
    const { session, plan } = ctx;
    const op = plan.operation;
    if (op.type !== 'convert') throw new TypeError(`a whole file is converted, not a ${op.type}`);
    const input = typeof op.input === 'string' ? { url: op.input } : op.input;
    const file = path.join(ctx.dir, 'input');
    session.rangeThresholdBytes = WHOLE_FILE_RANGE_THRESHOLD;
    const timeout = AbortSignal.timeout(Math.max(1, ctx.deadline - Date.now()));
    try {
      await fetchInto(session, input, file, AbortSignal.any([ctx.signal, timeout]), (fraction) =>
        ctx.progress.report(fraction * 90),
      );
    } catch (err) {
      if (timeout.aborted && !ctx.signal.aborted)
        throw new FfmpegError('timeout', 'the file was not fetched within the job time', undefined, '');
      throw err;
    }
    // Written again in its own format, its streams fit whatever they are: copied without a probe
    // (a process less a job; ffmpeg's failure falls back to a probe, copy-whole-file.ts).
    const local: ConvertOperation = { ...op, input: file, streamsFit: true };
    return { plan: { ...plan, operation: local, probe: { input: { url: file }, kind: 'progressive', aes128: false } } };
  },
};
