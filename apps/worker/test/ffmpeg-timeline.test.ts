// The job's log line splits ffmpeg's time at the proxy's first and last byte to it (bench/ reads
// it to say where a merge's time goes).
import { expect, test } from '@jest/globals';
import { ffmpegTimeline } from '../src/steps/render.js';

test("start-up, transfer and the tail after the last byte add up to ffmpeg's run", () => {
  const parts = ffmpegTimeline(1_000, 1_900, { firstByteAt: 1_120, lastByteAt: 1_750 });
  expect(parts).toEqual({ ffmpeg_to_first_byte: 120, ffmpeg_transfer: 630, ffmpeg_after_last_byte: 150 });
  expect(Object.values(parts).reduce((a, b) => a + b, 0)).toBe(900);
});

test('no byte through the proxy (local inputs): nothing to split', () => {
  expect(ffmpegTimeline(1_000, 1_900, {})).toEqual({});
});
