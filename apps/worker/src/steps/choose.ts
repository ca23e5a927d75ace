// Which steps a download job runs, in order, decided once from its payload and plan: the source's
// duration for a clip, the cover art, a whole file fetched first, then one render (the plan's kept
// intervals by the smart cut, a whole file's copy, or the plan's one ffmpeg command), the check of the
// file, the store and the last progress write. A new kind of work is a new step and a line here.
import type { JobPayload } from '@reelay/contracts';
import type { JobPlan } from '../plan.js';
import { copyWholeFile } from './copy-whole-file.js';
import { coverArt, takesCover } from './cover-art.js';
import { ffmpeg } from './ffmpeg.js';
import { fetchWholeFile, isWholeFile } from './fetch-whole-file.js';
import { mediaDuration } from './media-duration.js';
import { renderKept } from './render-kept.js';
import type { Step } from './step.js';
import { finish, store } from './store.js';
import { verify } from './verify.js';

/** What this worker can do beyond ffmpeg: fetch cover art (it has the egress guard for it). */
export interface Abilities {
  cover: boolean;
}

export function chooseSteps(payload: JobPayload, plan: JobPlan, can: Abilities): Step[] {
  const op = plan.operation;
  const whole = isWholeFile(payload, op);
  return [
    // The smart cut fetches its range while ffprobe finds the duration; any other clip waits for it.
    ...(payload.clip ? [mediaDuration(plan.kept ? 'alongside' : 'first')] : []),
    ...(can.cover && takesCover(payload, op) ? [coverArt] : []),
    ...(whole ? [fetchWholeFile] : []),
    plan.kept ? renderKept : whole ? copyWholeFile : ffmpeg,
    verify,
    store,
    finish,
  ];
}
