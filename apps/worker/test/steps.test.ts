// The worker's run as steps: which steps a job gets (chosen once from its payload and plan), and the
// runner that runs them in order, times them, and starts none once the
// job is stopped or out of time but those that judge and keep a file already made.
import { describe, expect, test } from '@jest/globals';
import { classifyFailure } from '../src/failure.js';
import type { JobInput, JobPayload } from '@reelay/contracts';
import { runSteps } from '../src/steps/run-steps.js';
import { planJob } from '../src/plan.js';
import { chooseSteps } from '../src/steps/choose.js';
import type { Step, StepContext } from '../src/steps/step.js';

const V: JobInput = { url: 'https://cdn.example.com/v.mp4', stream_profile: 'video_only', codecs: 'avc1.64001f' };
const A: JobInput = { url: 'https://cdn.example.com/a.m4a', stream_profile: 'audio_only', codecs: 'mp4a.40.2' };
const MUXED: JobInput = {
  url: 'https://cdn.example.com/m.mp4',
  stream_profile: 'muxed_progressive',
  codecs: 'avc1.64001f,mp4a.40.2',
};
const HLS: JobInput = {
  url: 'http://127.0.0.1:9/hls/index.m3u8',
  stream_profile: 'hls',
  codecs: 'avc1.42c00d,mp4a.40.2',
};
const COVER = { url: 'https://cdn.example.com/thumb.jpg' };
const END = ['verify', 'store', 'finish'];

function payload(inputs: JobInput[], extra: Partial<JobPayload> = {}): JobPayload {
  return {
    id: 'AAAAAAAAAAAAAAAAAAAAAA',
    operation: 'convert',
    inputs,
    basename: 'b',
    request_key: 'k',
    created_at: 0,
    ...extra,
  };
}

function stepsOf(p: JobPayload, can = { cover: true }): string[] {
  return chooseSteps(p, planJob(p), can).map((s) => s.name);
}

describe('the steps a job runs', () => {
  test('a merge is one ffmpeg command, then the check, the store and the last progress write', () => {
    expect(stepsOf(payload([V, A], { operation: 'merge' }))).toEqual(['ffmpeg', ...END]);
  });

  test('a precise clip into mp4 or mkv renders its one kept interval by the smart cut, the duration found alongside', () => {
    for (const format of ['mp4', 'mkv'] as const) {
      const p = payload([MUXED], { format, clip: { start: 2, end: 5, mode: 'precise' } });
      expect(stepsOf(p)).toEqual(['media-duration-alongside', 'render-kept', ...END]);
      expect(planJob(p).kept).toEqual([{ start: 2, end: 5 }]);
    }
    const pair = payload([V, A], { operation: 'merge', clip: { start: 2, end: 5, mode: 'precise' } });
    expect(stepsOf(pair)).toEqual(['media-duration-alongside', 'render-kept', ...END]);
  });

  test('a fast clip, or a precise one into a format the smart cut does not write, is in the ffmpeg command, after the duration check', () => {
    const fast = payload([MUXED], { format: 'mp4', clip: { start: 2, end: 5, mode: 'fast' } });
    const webm = payload([MUXED], { format: 'webm', clip: { start: 2, end: 5, mode: 'precise' } });
    const mp3 = payload([MUXED], { format: 'mp3', clip: { start: 2, end: 5, mode: 'precise' } });
    for (const p of [fast, webm, mp3]) {
      expect(stepsOf(p)).toEqual(['media-duration', 'ffmpeg', ...END]);
      expect(planJob(p).kept).toBeUndefined();
    }
  });

  test('an audio file of an item with a thumbnail takes the cover first, when the worker can fetch one', () => {
    for (const format of ['mp3', 'm4a', 'opus'] as const)
      expect(stepsOf(payload([MUXED], { format, cover: COVER }))).toEqual(['cover-art', 'ffmpeg', ...END]);
    expect(stepsOf(payload([MUXED], { format: 'mp3', cover: COVER }), { cover: false })).toEqual(['ffmpeg', ...END]);
    expect(stepsOf(payload([MUXED], { format: 'mp4', cover: COVER }))).toEqual(['ffmpeg', ...END]);
    const clip = payload([MUXED], { format: 'mp3', cover: COVER, clip: { start: 1, end: 3, mode: 'precise' } });
    expect(stepsOf(clip)).toEqual(['media-duration', 'cover-art', 'ffmpeg', ...END]);
  });

  test('a whole file is fetched first and then copied; with a manifest, a clip or subtitles it is not', () => {
    expect(stepsOf(payload([MUXED], { format: 'mp4', whole_file: true }))).toEqual([
      'fetch-whole-file',
      'copy-whole-file',
      ...END,
    ]);
    expect(stepsOf(payload([MUXED], { format: 'mp3', whole_file: true, cover: COVER }))).toEqual([
      'cover-art',
      'fetch-whole-file',
      'copy-whole-file',
      ...END,
    ]);
    expect(stepsOf(payload([HLS], { format: 'mp4', whole_file: true }))).toEqual(['ffmpeg', ...END]);
    const clip = payload([MUXED], { format: 'mp4', whole_file: true, clip: { start: 1, end: 3, mode: 'fast' } });
    expect(stepsOf(clip)).toEqual(['media-duration', 'ffmpeg', ...END]);
  });

  test('a subtitle track is one ffmpeg command, even with a precise clip', () => {
    const sub = payload([], {
      format: 'vtt',
      subtitles: [{ url: 'https://cdn.example.com/s.vtt', format: 'vtt', language: 'en' }],
      clip: { start: 1, end: 3, mode: 'precise' },
    });
    expect(stepsOf(sub)).toEqual(['media-duration', 'ffmpeg', ...END]);
  });

  test('every job ends by judging, storing and reporting its file, and each step is chosen once', () => {
    const p = payload([MUXED], { format: 'mp3', cover: COVER, clip: { start: 1, end: 3, mode: 'fast' } });
    const names = stepsOf(p);
    expect(names.slice(-3)).toEqual(END);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('the runner', () => {
  const step = (name: string, phase: Step['phase'], run: Step['run'], finishing?: boolean): Step => ({
    name,
    phase,
    run,
    ...(finishing ? { finishing } : {}),
  });
  const context = (over: { signal?: AbortSignal; deadline?: number; phases?: Record<string, number> } = {}) =>
    ({
      signal: over.signal ?? new AbortController().signal,
      deadline: over.deadline ?? Date.now() + 60_000,
      phases: over.phases ?? {},
      output: 'out',
    }) as unknown as StepContext;

  test('each step sees what the steps before it made, and steps of one phase add their times to it', async () => {
    const seen: unknown[] = [];
    const phases = { prepare: 1_000 };
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const done = await runSteps(context({ phases }), [
      step('a', 'prepare', async () => {
        await wait(30);
        return { outputSeconds: 4 };
      }),
      step('b', 'prepare', async (ctx) => {
        seen.push(ctx.outputSeconds);
        await wait(30);
        return { clipMethod: 'smart' };
      }),
      step('c', 'ffmpeg', async (ctx) => {
        seen.push(ctx.clipMethod, ctx.outputSeconds);
      }),
    ]);
    expect(seen).toEqual([4, 'smart', 4]);
    expect(done).toMatchObject({ outputSeconds: 4, clipMethod: 'smart', output: 'out' });
    expect(phases.prepare).toBeGreaterThanOrEqual(1_000 + 55);
    expect(Object.keys(phases).sort()).toEqual(['ffmpeg', 'prepare']);
  });

  test('a stopped job starts no further step but those that finish a file already made', async () => {
    const stop = new AbortController();
    const ran: string[] = [];
    const run = (name: string) => async () => {
      ran.push(name);
      if (name === 'render') stop.abort();
    };
    const failure = runSteps(context({ signal: stop.signal }), [
      step('render', 'ffmpeg', run('render')),
      step('verify', 'verify', run('verify'), true),
      step('more', 'ffmpeg', run('more')),
    ]);
    await expect(failure).rejects.toMatchObject({ name: 'FfmpegError', kind: 'aborted' });
    expect(ran).toEqual(['render', 'verify']);
  });

  test('past the deadline no step starts but those that judge and keep the file, and the job fails as timed out', async () => {
    const ran: string[] = [];
    const run = (name: string) => async () => {
      ran.push(name);
    };
    const finishing = runSteps(context({ deadline: Date.now() - 1 }), [
      step('verify', 'verify', run('verify'), true),
      step('store', 'store', run('store'), true),
    ]);
    await expect(finishing).resolves.toBeDefined();
    const late = runSteps(context({ deadline: Date.now() - 1 }), [step('render', 'ffmpeg', run('render'))]);
    const err = await late.catch((e: unknown) => e);
    expect(ran).toEqual(['verify', 'store']);
    expect(classifyFailure(err, {}, { timeoutSeconds: 60, maxBytes: 1 }).code).toBe('job_timeout');
  });
});
