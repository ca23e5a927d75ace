// Option values of the CLI read before any request (--clip, --server, the URL, --items, --source) and
// where files go.
import { describe, expect, test } from '@jest/globals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../src/errors.js';
import { parseClip, parseItems, parseServer, parseSourceNumber, parseUrl } from '../src/options.js';
import { alreadyThere, serverFilename, targetPath } from '../src/save.js';

describe('parseClip', () => {
  test("reads seconds, m:ss and h:mm:ss.mmm into DESIGN.md's clip fields", () => {
    expect(parseClip('90-120')).toEqual({ start: 90, end: 120 });
    expect(parseClip('1:30-2:00.25')).toEqual({ start: 90, end: 120.25 });
    expect(parseClip('1:02:03.5-1:02:04')).toEqual({ start: 3723.5, end: 3724 });
  });

  test('refuses an end before the start and text that is no time', () => {
    for (const bad of ['2:00-1:30', '5-5', 'abc', '1-2-3', '-5', '1:99x-2'])
      expect(() => parseClip(bad)).toThrow(UsageError);
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

describe('parseClip modes', () => {
  test('a ,precise or ,fast suffix sets the mode', () => {
    expect(parseClip('1:30-2:00,precise')).toEqual({ start: 90, end: 120, mode: 'precise' });
    expect(parseClip('1-2, fast')).toEqual({ start: 1, end: 2, mode: 'fast' });
    for (const bad of ['1-2,exact', '1-2,precise,fast', ',precise']) expect(() => parseClip(bad)).toThrow(UsageError);
  });
});

describe('parseUrl', () => {
  test('takes absolute http(s) URLs of at most 2048 characters', () => {
    expect(parseUrl('https://example.com/watch?v=1')).toBe('https://example.com/watch?v=1');
    for (const bad of [
      'example.com/video',
      'not a url',
      'ftp://example.com/x',
      'javascript:alert(1)',
      'http://',
      `https://example.com/${'a'.repeat(2048)}`,
    ]) {
      expect(() => parseUrl(bad)).toThrow(UsageError);
    }
  });
});

describe('parseItems and parseSourceNumber', () => {
  test('items are all, or numbers and ranges from 1', () => {
    expect(parseItems('all')).toBe('all');
    expect(parseItems('3,1-2,2')).toEqual([1, 2, 3]);
    for (const bad of ['0', '2-1', 'x', '1,,2', '1-99999']) expect(() => parseItems(bad)).toThrow(UsageError);
  });

  test('a source is a number from 1', () => {
    expect(parseSourceNumber('2')).toBe(2);
    for (const bad of ['0', '-1', 'x', '1.5']) expect(() => parseSourceNumber(bad)).toThrow(UsageError);
  });
});

describe('targetPath and alreadyThere', () => {
  test('a name, and a relative -o, are taken from the folder the command was run from', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-target-'));
    try {
      fs.mkdirSync(path.join(dir, 'out'));
      expect(targetPath(undefined, 'a.mp4', dir)).toBe(path.join(dir, 'a.mp4'));
      expect(targetPath('out', 'a.mp4', dir)).toBe(path.join(dir, 'out', 'a.mp4'));
      expect(targetPath('b.mp4', 'a.mp4', dir)).toBe(path.join(dir, 'b.mp4'));
      fs.writeFileSync(path.join(dir, 'a.mp4'), 'four');
      expect(alreadyThere(path.join(dir, 'a.mp4'), 4)).toBe(true);
      expect(alreadyThere(path.join(dir, 'a.mp4'), undefined)).toBe(true);
      expect(alreadyThere(path.join(dir, 'none.mp4'), 4)).toBe(false);
      expect(() => alreadyThere(path.join(dir, 'a.mp4'), 5)).toThrow(/already exists; nothing was overwritten/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
