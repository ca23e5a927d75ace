// A job's ffmpeg past its bounds: a re-encode that needs more memory than JOB_MAX_MEMORY_MB, and one
// that needs more CPU time than JOB_MAX_CPU_SECONDS. Each is killed and its job fails with
// resource_limit saying which bound, and the process never grows past the memory bound.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ffmpegBinary, startOrigin, type Origin } from '@reelay/testkit';
import { payload, startTestWorker, tempDataDir, TestQueue } from '../helpers.js';
import { runHostile } from './run-hostile.js';
import type { RunningWorker } from '../../src/worker.js';

const MEMORY_MB = 128;
const CPU_SECONDS = 1;
const ENDS_WITHIN_S = 20;

let origin: Origin;
let dataDir: string;
const stacks: { worker: RunningWorker; queue: TestQueue }[] = [];

async function stackWith(name: string, env: Record<string, string>): Promise<TestQueue> {
  const prefix = `reelay-test-hostile-children-${name}-${process.pid}`;
  const worker = await startTestWorker({ prefix, dataDir, env: { JOB_TIMEOUT_SECONDS: '60', ...env } });
  const queue = new TestQueue(prefix);
  stacks.push({ worker, queue });
  return queue;
}

beforeAll(async () => {
  dataDir = tempDataDir('hostile-children');
  const video = path.join(dataDir, 'big.mp4');
  // 1080p for 4 s: VP9 at 1080p needs a few hundred MB and several CPU seconds.
  await promisify(execFile)(ffmpegBinary(), [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc2=s=1920x1080:r=30:d=4',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    video,
  ]);
  origin = await startOrigin();
  origin.file('/big.mp4', video, 'video/mp4');
}, 60_000);

afterAll(async () => {
  for (const { worker, queue } of stacks) {
    await worker.stop();
    await queue.close();
  }
  await origin?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("a job's ffmpeg past its bounds", () => {
  test(`an encode that needs more than JOB_MAX_MEMORY_MB (${MEMORY_MB}) is killed: resource_limit, memory bound`, async () => {
    const queue = await stackWith('memory', { JOB_MAX_MEMORY_MB: String(MEMORY_MB) });
    const job = payload([{ url: origin.url('/big.mp4'), stream_profile: 'muxed_progressive' }], {
      operation: 'convert',
      format: 'webm',
    });
    const out = await runHostile('ffmpeg over its memory bound', queue, job, origin.base);
    expect(out.code).toBe('resource_limit');
    expect(out.message).toMatch(`memory bound of ${MEMORY_MB} MB`);
    expect(out.seconds).toBeLessThan(ENDS_WITHIN_S);
    // Each process held under the bound (RSS ≤ data + code); ffmpeg and ffprobe together under twice it.
    expect(out.peaks.childrenMb).toBeLessThan(2 * MEMORY_MB);
  });

  test(`an encode that needs more than JOB_MAX_CPU_SECONDS (${CPU_SECONDS}) is killed: resource_limit, CPU-time bound`, async () => {
    const queue = await stackWith('cpu', { JOB_MAX_CPU_SECONDS: String(CPU_SECONDS) });
    const job = payload([{ url: origin.url('/big.mp4'), stream_profile: 'muxed_progressive' }], {
      operation: 'convert',
      format: 'webm',
    });
    const out = await runHostile('ffmpeg over its CPU bound', queue, job, origin.base);
    expect(out.code).toBe('resource_limit');
    expect(out.message).toMatch(`CPU-time bound of ${CPU_SECONDS} s`);
    expect(out.seconds).toBeLessThan(ENDS_WITHIN_S);
  });
});
