import { describe, expect, test } from '@jest/globals';
import { ConfigError, parseConfig } from '../src/index.js';

describe('TRUST_PROXY, in the forms Express understands', () => {
  test('unset trusts no proxy', () => {
    expect(parseConfig({}).TRUST_PROXY).toBe(false);
  });

  test('true and false are booleans, not addresses', () => {
    expect(parseConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(parseConfig({ TRUST_PROXY: 'false' }).TRUST_PROXY).toBe(false);
  });

  test('a whole number is a hop count', () => {
    expect(parseConfig({ TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
  });

  test('anything else is passed on as a list of trusted addresses and subnets', () => {
    expect(parseConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).TRUST_PROXY).toBe('loopback, 10.0.0.0/8');
  });
});

describe('PLATFORM_* endpoint overrides', () => {
  test('PLATFORM_<KEY> becomes the lower-case key the platform extractors read', () => {
    const config = parseConfig({ PLATFORM_BLUESKY_API: 'http://127.0.0.1:9000', PLATFORM_REDDIT_WWW: 'http://localhost:9001/' });
    expect(config.platformEndpoints).toEqual({ bluesky_api: 'http://127.0.0.1:9000', reddit_www: 'http://localhost:9001/' });
  });

  test('an empty override counts as unset', () => {
    expect(parseConfig({ PLATFORM_X_SYNDICATION: '' }).platformEndpoints).toEqual({});
  });

  test('an override that is not a URL is refused, naming the variable as the operator wrote it', () => {
    let caught: unknown;
    try {
      parseConfig({ PLATFORM_VIMEO_PLAYER: 'not a url' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).issues.map((i) => i.variable)).toEqual(['PLATFORM_VIMEO_PLAYER']);
  });
});

describe('other settings', () => {
  test('a bad value names its variable', () => {
    expect(() => parseConfig({ PORT: '70000' })).toThrow(/PORT/);
    expect(() => parseConfig({ REDIS_URL: 'http://localhost:6379' })).toThrow(/REDIS_URL/);
  });

  test('comma lists are trimmed and empty entries dropped', () => {
    expect(parseConfig({ YTDLP_HOSTS: ' a.example , ,b.example' }).YTDLP_HOSTS).toEqual(['a.example', 'b.example']);
  });

  test('child processes get PATH, HOME and the like, but never a proxy variable or a reelay secret', () => {
    const config = parseConfig({ PATH: '/usr/bin', HOME: '/home/r', HTTP_PROXY: 'http://bypass:1', REDIS_URL: 'redis://127.0.0.1:6379', UNRELATED: 'x' });
    expect(config.childEnv).toEqual({ PATH: '/usr/bin', HOME: '/home/r' });
  });

  test('variables reelay does not know are ignored rather than refused', () => {
    expect(() => parseConfig({ SOMETHING_ELSE: '1' })).not.toThrow();
  });
});
