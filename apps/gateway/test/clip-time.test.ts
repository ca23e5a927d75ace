// How the playground reads and writes clip times (web/clip-time.js, used by web/clip.js): the forms a person types, and the
// ones it refuses before a request is made.
import { expect, test } from '@jest/globals';

// The page's modules are plain JS typechecked on their own (tsc -p apps/gateway/web), with no
// declarations for this project: a specifier in a variable keeps tsc from resolving it.
const page = '../web/clip-time.js';
const { parseTime, showTime } = (await import(page)) as {
  parseTime: (text: string) => number | null;
  showTime: (seconds: number) => string;
};

test('seconds, minutes:seconds and hours:minutes:seconds are read, with fractions', () => {
  expect(['90', '90.5', '1:30', '01:30.25', '1:02:03.5', ' 7 '].map(parseTime)).toEqual([
    90, 90.5, 90, 90.25, 3723.5, 7,
  ]);
});

test('an empty field is no time, and anything else unreadable is NaN', () => {
  expect(parseTime('')).toBeNull();
  expect(['abc', '-1', '1:75', '1:2:3:4', '1e3', '1:', ':30', '1,5'].map(parseTime)).toEqual(Array(8).fill(Number.NaN));
});

test('times are shown as minutes:seconds that read back to the same number', () => {
  for (const seconds of [0, 0.5, 9.999, 65.5, 3723.25]) expect(parseTime(showTime(seconds))).toBe(seconds);
  expect([0.5, 65.5, 3723.25, 59.9996].map(showTime)).toEqual(['0:00.5', '1:05.5', '1:02:03.25', '1:00']);
});
