import { describe, expect, test } from '@jest/globals';
import {
  outTimeSeconds,
  ProgressParser,
  ProgressThrottle,
  runningPercent,
  type ProgressBlock,
} from '../src/progress.js';
import { TailBuffer } from '../src/runner.js';

describe('progress parser', () => {
  test('splits key=value lines into blocks ending at progress=, across arbitrary chunks', () => {
    const blocks: ProgressBlock[] = [];
    const parser = new ProgressParser((b) => blocks.push(b));
    const text =
      'frame=1\nout_time_us=N/A\nprogress=continue\nframe=50\nout_time_us=2000000\nout_time_ms=2000000\nprogress=end\n';
    for (let i = 0; i < text.length; i += 7) parser.push(text.slice(i, i + 7));
    expect(blocks).toEqual([
      { frame: '1', out_time_us: 'N/A', progress: 'continue' },
      { frame: '50', out_time_us: '2000000', out_time_ms: '2000000', progress: 'end' },
    ]);
  });

  test('a block is not reported before its progress= line arrives', () => {
    const blocks: ProgressBlock[] = [];
    const parser = new ProgressParser((b) => blocks.push(b));
    parser.push('out_time_us=5\nprogress=contin');
    expect(blocks).toEqual([]);
    parser.push('ue\n');
    expect(blocks).toHaveLength(1);
  });

  test('output time comes from out_time_us, else out_time_ms (also microseconds), and N/A is unknown', () => {
    expect(outTimeSeconds({ out_time_us: '1500000', out_time_ms: '1' })).toBe(1.5);
    expect(outTimeSeconds({ out_time_ms: '2500000' })).toBe(2.5);
    expect(outTimeSeconds({ out_time_us: 'N/A', out_time_ms: 'N/A' })).toBeUndefined();
    expect(outTimeSeconds({ progress: 'continue' })).toBeUndefined();
  });
});

describe('progress percent', () => {
  test.each([
    [0, 10, 0],
    [-1, 10, 0],
    [4.99, 10, 49],
    [9.999, 10, 99],
    [10, 10, 99],
    [12, 10, 99],
    [5, 0, 0],
  ])('%s s of %s s is %s%% while running', (seconds, duration, percent) => {
    expect(runningPercent(seconds, duration)).toBe(percent);
  });

  test('is reported only when the whole percent rises, and 100 once at the end', () => {
    const seen: number[] = [];
    const throttle = new ProgressThrottle((p) => seen.push(p));
    for (const p of [0, 0, 3, 2, 3, 50, 99, 99]) throttle.update(p);
    throttle.finish();
    throttle.finish();
    expect(seen).toEqual([0, 3, 50, 99, 100]);
  });
});

describe('stderr tail', () => {
  test('keeps only the last bytes written', () => {
    const tail = new TailBuffer(10);
    tail.push(Buffer.from('aaaaaaaaaa\n'));
    tail.push(Buffer.from('bbbb'));
    tail.push(Buffer.from('cccc\n'));
    expect(tail.toString()).toBe('bbbbcccc'); // the last 10 bytes, '\nbbbbcccc\n', trimmed
    const big = new TailBuffer(4096);
    for (let i = 0; i < 1000; i++) big.push(Buffer.from(`line ${i}\n`));
    const text = big.toString();
    expect(text.length).toBeLessThanOrEqual(4096);
    expect(text.endsWith('line 999')).toBe(true);
  });
});
