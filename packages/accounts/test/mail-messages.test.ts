import { describe, expect, test } from '@jest/globals';
import { accountLink, describeDevice, DEFAULT_RETURN_TO, mails, safeReturnTo } from '../src/index.js';

describe('account mails', () => {
  test('carry the token in the link fragment, in a text and an HTML part', () => {
    const mail = mails.reset('https://reelay.example.org', 'TOKEN_abc-123');
    expect(mail.text).toContain('https://reelay.example.org/settings/api-keys#reset=TOKEN_abc-123');
    expect(mail.html).toContain('href="https://reelay.example.org/settings/api-keys#reset=TOKEN_abc-123"');
    expect(mail.html).toMatch(/^<!doctype html>/);
    expect(accountLink('https://r.example', { verify: 'x y' })).toBe('https://r.example/settings/api-keys#verify=x+y');
  });

  test('escape what they quote in HTML', () => {
    expect(mails.providerLinked('https://r.example', '<b>Evil</b>').html).not.toContain('<b>Evil</b>');
  });
});

describe('small rules', () => {
  test('device names come from the User-Agent, short', () => {
    expect(describeDevice('Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0')).toBe(
      'Firefox on Linux',
    );
    expect(describeDevice(undefined)).toBe('Unknown device');
    expect(describeDevice('x'.repeat(500))).toHaveLength(60);
  });

  test('return_to keeps only paths of this app', () => {
    expect(safeReturnTo('/settings/api-keys#x')).toBe('/settings/api-keys#x');
    for (const v of [
      '//evil.example',
      '/\\evil.example',
      'https://evil.example',
      '/a\u0000b',
      42,
      undefined,
      `/${'a'.repeat(600)}`,
    ])
      expect(safeReturnTo(v)).toBe(DEFAULT_RETURN_TO);
  });
});
