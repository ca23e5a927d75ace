// Option values of the CLI read before any request: --clip and --server.
import { describe, expect, test } from '@jest/globals';
import { UsageError } from '../src/errors.js';
import { parseClip, parseServer } from '../src/options.js';
import { serverFilename } from '../src/save.js';

describe('parseClip', () => {
  test('reads seconds, m:ss and h:mm:ss.mmm into DESIGN.md\'s clip fields', () => {
    expect(parseClip('90-120')).toEqual({ start: 90, end: 120 });
    expect(parseClip('1:30-2:00.25')).toEqual({ start: 90, end: 120.25 });
    expect(parseClip('1:02:03.5-1:02:04')).toEqual({ start: 3723.5, end: 3724 });
  });

  test('refuses an end before the start and text that is no time', () => {
    for (const bad of ['2:00-1:30', '5-5', 'abc', '1-2-3', '-5', '1:99x-2']) expect(() => parseClip(bad)).toThrow(UsageError);
  });
});

describe('parseServer', () => {
  test('takes http and https URLs only', () => {
    expect(parseServer('http://127.0.0.1:8080').origin).toBe('http://127.0.0.1:8080');
    expect(() => parseServer('ftp://127.0.0.1')).toThrow(UsageError);
    expect(() => parseServer('localhost:8080')).toThrow(UsageError);
  });
});

describe('serverFilename', () => {
  test('takes the UTF-8 filename* of Content-Disposition, and never a path', () => {
    expect(serverFilename(`attachment; filename="caf_.mp4"; filename*=UTF-8''caf%C3%A9.mp4`)).toBe('café.mp4');
    expect(serverFilename('attachment; filename="../../etc/passwd"')).toBe('passwd');
    expect(serverFilename('attachment; filename=".."')).toBe('download');
    expect(serverFilename(null, 'clip.mp4')).toBe('clip.mp4');
    expect(serverFilename('garbage;;;=')).toBe('download');
  });
});
