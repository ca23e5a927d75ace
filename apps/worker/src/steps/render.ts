// What every step that renders the job's file shares: its progress written out before the file is
// judged, and where ffmpeg's time went by the proxy's first and last byte (bench/ reads the split).
import type { Made, StepContext } from './step.js';

/** Runs a render and adds ffmpeg's timeline to the job's phases once it has made its file. */
export async function rendering(
  ctx: Pick<StepContext, 'progress' | 'phases' | 'session'>,
  render: () => Promise<Partial<Made>>,
): Promise<Partial<Made>> {
  const started = Date.now();
  const made = await render();
  const ended = Date.now();
  await ctx.progress.settled();
  Object.assign(ctx.phases, ffmpegTimeline(started, ended, ctx.session));
  return made;
}

/**
 * Where ffmpeg's time went, from the proxy's first and last byte to it: starting up and opening its
 * inputs, the transfer, and what it did after the last byte (the index written, and moved to the
 * front by +faststart). Empty when no byte went through the proxy (local inputs).
 */
export function ffmpegTimeline(
  started: number,
  ended: number,
  session: { firstByteAt?: number; lastByteAt?: number },
): Record<string, number> {
  const { firstByteAt: first, lastByteAt: last } = session;
  if (first === undefined || last === undefined) return {};
  return {
    ffmpeg_to_first_byte: first - started,
    ffmpeg_transfer: last - first,
    ffmpeg_after_last_byte: Math.max(0, ended - last),
  };
}
