// The bounds' command and watchdog against real processes: the rlimits reach the program, a program
// over its CPU time is killed and named, a missing program still reads as not found.
import { execa } from 'execa';
import { describe, expect, test } from '@jest/globals';
import { execFailure, limitedCommand, spawnBounded } from '../src/index.js';

describe('child process bounds', () => {
  test('the program runs with RLIMIT_DATA at the bound and RLIMIT_CPU a little above it', async () => {
    const { file, args } = limitedCommand('/bin/sh', ['-c', 'ulimit -d; ulimit -t'], { memoryMb: 256, cpuSeconds: 10 });
    const { stdout } = await execa(file, args);
    expect(stdout.split('\n')).toEqual([String(256 * 1024), '12']);
  });

  test('arguments reach the program as they are: nothing is read by the shell', async () => {
    const { file, args } = limitedCommand('/bin/echo', ['$HOME', '; rm -rf /', '`id`'], {
      memoryMb: 64,
      cpuSeconds: 5,
    });
    expect((await execa(file, args)).stdout).toBe('$HOME ; rm -rf / `id`');
  });

  test('a program past its CPU time is killed by the watchdog, which names the bound', async () => {
    const { subprocess, watch } = spawnBounded(
      '/bin/sh',
      ['-c', 'while :; do :; done'],
      { memoryMb: 64, cpuSeconds: 1 },
      { detached: true, reject: false, timeout: 20_000 },
    );
    const result = await subprocess;
    watch!.stop();
    expect(result.signal).toBe('SIGKILL');
    expect(result.timedOut).toBe(false);
    expect(watch!.limitExceeded('')).toBe('cpu');
    expect(watch!.describe('sh', 'cpu')).toBe('sh went past its CPU-time bound of 1 s');
  });

  test('a program that cannot be found reads as ENOENT, as it did without the shell', async () => {
    const { file, args } = limitedCommand('/nonexistent/ffmpeg', ['-version'], { memoryMb: 64, cpuSeconds: 5 });
    const result = await execa(file, args, { reject: false });
    expect(execFailure(result.exitCode, result.stderr)).toBe('ENOENT');
    expect(execFailure(1, 'Invalid data found')).toBeUndefined();
  });
});
