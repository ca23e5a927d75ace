// parseEntrySelection and bundleEntryNames: the one reading of `entries` ("all", "1-10,15", [1, 2, 5]) with its limit, and the bundle's file names.
import { describe, expect, test } from '@jest/globals';
import { bundleEntryNames, parseEntrySelection, ReelayError } from '../src/index.js';

const fails = (fn: () => unknown, message: RegExp) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ReelayError);
    expect((err as ReelayError).code).toBe('invalid_request');
    expect((err as Error).message).toMatch(message);
    return;
  }
  throw new Error('did not throw');
};

describe('parseEntrySelection', () => {
  test('all, or nothing given, is every entry', () => {
    expect(parseEntrySelection(undefined, 200)).toBeUndefined();
    expect(parseEntrySelection('all', 200)).toBeUndefined();
  });
  test('ranges and numbers, sorted and unique', () => {
    expect(parseEntrySelection('1-3,15', 200)).toEqual([1, 2, 3, 15]);
    expect(parseEntrySelection(' 5 , 2-3 ,3, 7-7 ', 200)).toEqual([2, 3, 5, 7]);
    expect(parseEntrySelection([5, 1, 2, 5], 200)).toEqual([1, 2, 5]);
  });
  test('more than the limit names it, even as one huge range', () => {
    expect(parseEntrySelection('1-200', 200)).toHaveLength(200);
    fails(() => parseEntrySelection('1-201', 200), /MAX_COLLECTION_ENTRIES \(200\)/);
    fails(() => parseEntrySelection('1-999999', 200), /MAX_COLLECTION_ENTRIES/);
    fails(() => parseEntrySelection('1-100,150-250', 200), /MAX_COLLECTION_ENTRIES/);
    fails(
      () =>
        parseEntrySelection(
          Array.from({ length: 201 }, (_, i) => i + 1),
          200,
        ),
      /MAX_COLLECTION_ENTRIES/,
    );
  });
  test('backwards ranges, zero and garbage are refused', () => {
    fails(() => parseEntrySelection('5-2', 200), /backwards/);
    // The pattern (which the OpenAPI document states) refuses an entry 0 before any number is read.
    fails(() => parseEntrySelection('0', 200), /counted from 1/);
    fails(() => parseEntrySelection('2,000000', 200), /counted from 1/);
    expect(parseEntrySelection('000001-2', 200)).toEqual([1, 2]);
    fails(() => parseEntrySelection([0], 200), /counts from 1/);
    fails(() => parseEntrySelection('1,,2', 200), /entries is/);
    fails(() => parseEntrySelection('a-b', 200), /entries is/);
    fails(() => parseEntrySelection('-3', 200), /entries is/);
  });
});

describe('bundleEntryNames', () => {
  test('NNN - title.ext, zero-padded, unique and safe', () => {
    const names = bundleEntryNames([
      { index: 1, title: 'Episode 1: Concert A', ext: 'm4a' },
      { index: 2, title: '../../etc/passwd', ext: 'mp3' },
      { index: 12, title: 'Same', ext: 'mp4' },
      { index: 12, title: 'Same', ext: 'MP4' },
      { index: 13, title: '  ...  ', ext: 'mp4' },
      { index: 14, title: 'tab\tand\u0000nul', ext: '../x' },
    ]);
    expect(names).toEqual([
      '001 - Episode 1 Concert A.m4a',
      '002 - etc passwd.mp3',
      '012 - Same.mp4',
      '012 - Same (2).mp4',
      '013 - entry.mp4',
      '014 - tab and nul',
    ]);
    for (const n of names) expect(n).not.toMatch(/[/\\]/);
  });
  test('wider indexes widen every number', () => {
    expect(
      bundleEntryNames([
        { index: 7, title: 'a', ext: 'mp3' },
        { index: 1200, title: 'b', ext: 'mp3' },
      ]),
    ).toEqual(['0007 - a.mp3', '1200 - b.mp3']);
  });
});
