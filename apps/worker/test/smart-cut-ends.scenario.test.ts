// Where a smart cut ends, with B-frames. The copy must stop at a point in decode order, and the
// frames just before `end` are often decoded after one shown past it; the tail (encoded again)
// fills them in. Checked for H.264 (x264, 3 B-frames) and HEVC (x265, 4 B-frames) sources: the plan
// for every end point of a GOP, and real cuts at end points in every position of a B-frame group,
// frame by frame against the source. The steps run as the worker runs them, on local files.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { parseRangeProbe, planSmartCut } from '@reelay/media';
import { createLogger } from '@reelay/observability';
import { ffmpegBinary } from '@reelay/testkit';
import { runPreciseClip } from '../src/smart-clip.js';
import { decodeErrors, FPS, frameSsims, makeSource, videoPackets } from './smart-media.js';

const ffprobe = process.env.FFPROBE_PATH || 'ffprobe';
let dir: string;
const sources: Record<string, string> = {};

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-smart-ends-'));
  sources.h264 = path.join(dir, 'h264.mp4');
  sources.hevc = path.join(dir, 'hevc.mp4');
  await Promise.all([makeSource(sources.h264, 'h264', 4), makeSource(sources.hevc, 'hevc', 4)]);
}, 60_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const START = 1.3; // the head is 1.3–2.0 s; the GOP of the end points begins at 2.0 s

async function cut(
  codec: string,
  end: number,
  format: 'mp4' | 'mkv' = 'mp4',
): Promise<{ file: string; method: string }> {
  const work = fs.mkdtempSync(path.join(dir, 'job-'));
  const output = path.join(work, `out.${format}`);
  const method = await runPreciseClip(
    {
      binaries: { ffmpeg: ffmpegBinary(), ffprobe },
      limits: { memoryMb: 1024, cpuSeconds: 120 },
      maxOutputBytes: 100 * 1024 * 1024,
      env: {},
      dir: work,
      signal: new AbortController().signal,
      deadline: Date.now() + 60_000,
      log: createLogger({ name: 'smart-ends-test', level: 'silent' }),
      progress: { report: () => undefined },
    },
    {
      operation: { type: 'convert', input: sources[codec], format },
      format,
      clip: { start: START, end, mode: 'precise' },
      output,
    },
  );
  return { file: output, method };
}

describe.each(['h264', 'hevc'])('a smart cut of a %s source with B-frames', (codec) => {
  test('plans the copy and the tail so that every end point of a GOP gets exactly the frames before it', () => {
    const json = execFileSync(
      ffprobe,
      [
        '-v',
        'error',
        '-print_format',
        'json',
        '-show_streams',
        '-show_entries',
        'packet=stream_index,pts_time,dts_time,flags',
        sources[codec],
      ],
      { encoding: 'utf8' },
    );
    const { packets, video } = parseRangeProbe(json);
    expect(video?.reorderDepth).toBe(2);
    let tails = 0;
    for (let n = 1; n <= FPS; n++) {
      const end = 2 + n / FPS;
      const plan = planSmartCut(packets, START, end);
      if (plan.method !== 'smart') throw new Error(`end ${end}: ${plan.reason}`);
      // The copied packets: from the keyframe (2.0 s) to the outpoint in decode order.
      const from = packets.findIndex((p) => p.key && Math.abs(p.pts - 2) < 0.001);
      const to = plan.outpoint === undefined ? packets.length : packets.findIndex((p) => p.dts === plan.outpoint);
      const copied = packets
        .slice(from, to)
        .map((p) => Math.round(p.pts * FPS))
        .sort((a, b) => a - b);
      const tail =
        plan.tail === undefined
          ? []
          : Array.from({ length: plan.tail.frames }, (_, i) => Math.round(plan.tail!.from * FPS) + i);
      expect([...copied, ...tail]).toEqual(Array.from({ length: n }, (_, i) => 2 * FPS + i));
      if (plan.tail) tails++;
    }
    // Without the tail these ends would lose frames (1–3 with x264, 1–4 with x265): most need one.
    expect(tails).toBeGreaterThan(FPS / 3);
  });

  // End points at each position of a B-frame group (x264 veryfast: I/P B B; x265: P b B b b).
  test.each([1, 2, 3, 4, 5, 7])(
    'ends on the frame before end when end is frame %i of the GOP: every frame in place, clean decode',
    async (n) => {
      const end = Number((2 + n / FPS).toFixed(3));
      const { file, method } = await cut(codec, end);
      expect(method).toBe('smart');
      expect(decodeErrors(file)).toBe('');
      const packets = videoPackets(file);
      for (let i = 1; i < packets.length; i++) expect(packets[i].dts).toBeGreaterThan(packets[i - 1].dts);
      const shown = packets.map((p) => p.pts).sort((a, b) => a - b);
      expect(shown[0]).toBeGreaterThanOrEqual(-0.001);
      expect(shown[0]).toBeLessThan(1 / FPS);
      // Exactly the frames of [start, end): their number, and each one the source's at its time.
      const expected = Math.round((end - START) * FPS);
      expect(shown.length).toBe(expected);
      expect(Math.abs(shown.at(-1)! - (end - START - 1 / FPS))).toBeLessThan(0.002);
      const { count, scores } = frameSsims(file, sources[codec], START, end);
      expect(count).toBe(expected);
      expect(scores).toHaveLength(expected);
      expect(Math.min(...scores)).toBeGreaterThanOrEqual(0.95);
    },
    60_000,
  );

  test('into Matroska too', async () => {
    const end = 2 + 2 / FPS;
    const { file, method } = await cut(codec, Number(end.toFixed(3)), 'mkv');
    expect(method).toBe('smart');
    expect(decodeErrors(file)).toBe('');
    const { count, scores } = frameSsims(file, sources[codec], START, end);
    expect(count).toBe(Math.round((end - START) * FPS));
    expect(Math.min(...scores)).toBeGreaterThanOrEqual(0.95);
  }, 60_000);
});
