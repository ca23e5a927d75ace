// Where the browser may be sent after a social sign-in: only a path of this origin, judged after the
// value is resolved (percent-decoding, dot segments) the way a browser would read the Location header.
import { describe, expect, test } from '@jest/globals';
import { DEFAULT_RETURN_TO, safeReturnTo } from '../src/index.js';

const PUBLIC_URL = 'https://reelay.example.org';

describe('safeReturnTo', () => {
  test.each([
    ['an absolute URL', 'https://evil.example/'],
    ['an absolute URL of this very origin (only paths are taken)', 'https://reelay.example.org/settings'],
    ['a scheme-relative URL', '//evil.example/x'],
    ['javascript:', 'javascript:alert(1)'],
    ['a relative path', 'settings'],
    ['a dot segment before a double slash', '/.//evil.example/x'],
    ['a parent segment before a double slash', '/a/..//evil.example/'],
    ['an encoded dot segment', '/%2e//evil.example/'],
    ['an encoded parent segment, upper case', '/%2E%2E//evil.example/'],
    ['a double-encoded dot segment', '/%252e//evil.example/'],
    ['encoded slashes', '/%2F%2Fevil.example/'],
    ['encoded backslashes', '/%5C%5Cevil.example'],
    ['a backslash', '/\\evil.example'],
    ['two backslashes', '/\\\\evil.example'],
    ['a tab inside', '/\t/evil.example'],
    ['a newline inside', '/\n/evil.example'],
    ['an encoded tab', '/%09/evil.example'],
    ['a header injection', '/\r\nSet-Cookie: x=1'],
    ['malformed percent-encoding', '/%E0%A4%A'],
    ['something too long', `/${'a'.repeat(600)}`],
  ])('%s goes to the default', (_why, hostile) => {
    expect(safeReturnTo(hostile, PUBLIC_URL)).toBe(DEFAULT_RETURN_TO);
  });

  test('anything but one string goes to the default', () => {
    for (const value of [undefined, null, 5, ['/a', '/b'], { a: '/' }])
      expect(safeReturnTo(value, PUBLIC_URL)).toBe(DEFAULT_RETURN_TO);
  });

  test.each([
    ['/settings/api-keys', '/settings/api-keys'],
    ['/?u=https://example.com/v', '/?u=https://example.com/v'],
    ['/a/./b/../c', '/a/c'],
    ['/subscriptions#new', '/subscriptions#new'],
    ['/ü', '/%C3%BC'],
  ])('a path of this app is kept as it resolves: %s', (value, expected) => {
    expect(safeReturnTo(value, PUBLIC_URL)).toBe(expected);
  });

  test('whatever comes out stays on the origin when a browser resolves it again', () => {
    const tries = ['/.//x', '/%2e%2e/%2e%2e//x', '/a/b/../../..//x', '/%2f/x', '/x?next=//evil.example', '/x#//evil'];
    for (const value of tries) {
      const out = safeReturnTo(value, PUBLIC_URL);
      expect(out.startsWith('/') && !out.startsWith('//')).toBe(true);
      expect(new URL(out, PUBLIC_URL).origin).toBe(PUBLIC_URL);
    }
  });
});
