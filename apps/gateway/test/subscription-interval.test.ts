// The pure parts of subscriptions: how often a failing one is checked, and an entry's archive key.
import { expect, test } from '@jest/globals';
import { entryKey } from '../src/services/subscription-check.js';
import { checkInterval } from '../src/services/subscriptions.js';

test('the interval is `every` until five failures, then doubles per failure, at most a week', () => {
  expect([0, 1, 4].map((n) => checkInterval(3600, n))).toEqual([3600, 3600, 3600]);
  expect([5, 6, 7].map((n) => checkInterval(3600, n))).toEqual([7200, 14_400, 28_800]);
  expect(checkInterval(3600, 40)).toBe(604_800);
  expect(checkInterval(604_800, 9)).toBe(604_800); // never shorter than its own period
});

test("an entry's key is its id on the site when it has one, else its URL", () => {
  expect(entryKey({ id: 'ep-3', url: 'https://example.com/3' })).toBe('id:ep-3');
  expect(entryKey({ url: 'https://example.com/3' })).toBe('url:https://example.com/3');
});
