// The item's thumbnail as the cover of an mp3, m4a or opus file (cover.ts fetches and converts it):
// the plan's operation takes it as one more input. A cover that cannot be had leaves the plan as it was.
import { COVER_FORMATS, outputFormat, type MediaOperation } from '@reelay/media';
import type { JobPayload } from '@reelay/contracts';
import { prepareCover } from '../cover.js';
import { childLimits, type Step } from './step.js';

/** Whether the job's file takes a cover: its item has a thumbnail and the format holds a picture. */
export function takesCover(payload: Pick<JobPayload, 'cover'>, operation: MediaOperation): boolean {
  return payload.cover !== undefined && operation.type !== 'subtitle' && COVER_FORMATS.has(outputFormat(operation));
}

export const coverArt: Step = {
  name: 'cover-art',
  phase: 'prepare',
  async run(ctx) {
    const { deps, payload, plan } = ctx;
    const operation = plan.operation;
    if (!payload.cover || !deps.egress || operation.type === 'subtitle') return;
    const cover = await prepareCover(
      { egress: deps.egress, ffmpeg: deps.binaries.ffmpeg, limits: childLimits(deps.config) },
      payload.cover,
      outputFormat(operation),
      payload.tags,
      ctx.dir,
      ctx.signal,
      ctx.log,
    );
    return cover ? { plan: { ...plan, operation: { ...operation, cover } } } : undefined;
  },
};
