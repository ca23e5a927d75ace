import { describe, expect, test } from '@jest/globals';
import { ConfigError, parseConfig } from '../src/index.js';

const issues = (env: Record<string, string>) => {
  try {
    parseConfig(env);
    return [];
  } catch (err) {
    return (err as ConfigError).issues.map((i) => i.variable);
  }
};

describe('account settings', () => {
  test('PUBLIC_URL is an origin; mail and social sign-in need it', () => {
    expect(parseConfig({ PUBLIC_URL: 'https://reelay.example.org/' }).PUBLIC_URL).toBe('https://reelay.example.org');
    expect(issues({ PUBLIC_URL: 'https://reelay.example.org/app' })).toEqual(['PUBLIC_URL']);
    expect(issues({ PUBLIC_URL: 'ftp://reelay.example.org' })).toEqual(['PUBLIC_URL']);
    expect(issues({ SMTP_URL: 'smtp://mail:25', MAIL_FROM: 'a@b.c' })).toEqual(['PUBLIC_URL']);
    expect(issues({ GITHUB_CLIENT_ID: 'x', GITHUB_CLIENT_SECRET: 'y' })).toEqual(['PUBLIC_URL']);
  });

  test('SMTP_URL and MAIL_FROM go together, and SMTP_URL is smtp:// or smtps://', () => {
    expect(issues({ PUBLIC_URL: 'https://r.example', SMTP_URL: 'smtp://mail:25' })).toEqual(['MAIL_FROM']);
    expect(issues({ PUBLIC_URL: 'https://r.example', SMTP_URL: 'http://mail', MAIL_FROM: 'a@b.c' })).toEqual([
      'SMTP_URL',
    ]);
    expect(
      parseConfig({ PUBLIC_URL: 'https://r.example', SMTP_URL: 'smtps://u:p@mail:465', MAIL_FROM: 'reelay <a@b.c>' })
        .SMTP_URL,
    ).toBe('smtps://u:p@mail:465');
  });

  test('OIDC_PROVIDERS is a JSON list of providers with unique ids', () => {
    const one = {
      id: 'google',
      name: 'Google',
      issuer: 'https://accounts.google.com',
      client_id: 'c',
      client_secret: 's',
    };
    expect(
      parseConfig({ PUBLIC_URL: 'https://r.example', OIDC_PROVIDERS: JSON.stringify([one]) }).OIDC_PROVIDERS,
    ).toEqual([one]);
    expect(issues({ PUBLIC_URL: 'https://r.example', OIDC_PROVIDERS: 'not json' })).toEqual(['OIDC_PROVIDERS']);
    expect(
      issues({ PUBLIC_URL: 'https://r.example', OIDC_PROVIDERS: JSON.stringify([{ ...one, id: 'Bad Id' }]) }),
    ).toEqual(['OIDC_PROVIDERS']);
    expect(issues({ PUBLIC_URL: 'https://r.example', OIDC_PROVIDERS: JSON.stringify([one, one]) })).toEqual([
      'OIDC_PROVIDERS',
    ]);
    expect(
      issues({
        PUBLIC_URL: 'https://r.example',
        OIDC_PROVIDERS: JSON.stringify([{ ...one, id: 'github' }]),
        GITHUB_CLIENT_ID: 'x',
        GITHUB_CLIENT_SECRET: 'y',
      }),
    ).toEqual(['OIDC_PROVIDERS']);
    expect(issues({ PUBLIC_URL: 'https://r.example', GITHUB_CLIENT_ID: 'x' })).toEqual(['GITHUB_CLIENT_SECRET']);
  });
});
