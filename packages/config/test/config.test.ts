import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { CONFIG_VARIABLES, ConfigError, parseConfig } from '../src/index.js';

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
    const config = parseConfig({
      PLATFORM_BLUESKY_API: 'http://127.0.0.1:9000',
      PLATFORM_REDDIT_WWW: 'http://localhost:9001/',
    });
    expect(config.platformEndpoints).toEqual({
      bluesky_api: 'http://127.0.0.1:9000',
      reddit_www: 'http://localhost:9001/',
    });
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
    const config = parseConfig({
      PATH: '/usr/bin',
      HOME: '/home/r',
      HTTP_PROXY: 'http://bypass:1',
      REDIS_URL: 'redis://127.0.0.1:6379',
      UNRELATED: 'x',
    });
    expect(config.childEnv).toEqual({ PATH: '/usr/bin', HOME: '/home/r' });
  });

  test('the limits per minute a public deployment starts with (DESIGN.md): 15 for the playground and a keyless /api, 100 a key', () => {
    const config = parseConfig({});
    expect([config.RATE_LIMIT_PUBLIC_PER_MIN, config.RATE_LIMIT_KEY_PER_MIN]).toEqual([15, 100]);
  });

  test('variables reelay does not know are ignored rather than refused', () => {
    expect(() => parseConfig({ SOMETHING_ELSE: '1' })).not.toThrow();
  });
});

describe("how soon a dead worker's jobs come back, and how long a Redis command may take", () => {
  test('defaults: an 8 s job lock checked every 4 s, and a 2 s Redis command deadline', () => {
    const config = parseConfig({});
    expect([config.JOB_LOCK_SECONDS, config.JOB_STALLED_CHECK_SECONDS, config.REDIS_COMMAND_TIMEOUT_MS]).toEqual([
      8, 4, 2000,
    ]);
  });

  test('a lock too short to be renewed, or no stalled check at all, is refused', () => {
    expect(() => parseConfig({ JOB_LOCK_SECONDS: '1' })).toThrow(/JOB_LOCK_SECONDS/);
    expect(() => parseConfig({ JOB_STALLED_CHECK_SECONDS: '0' })).toThrow(/JOB_STALLED_CHECK_SECONDS/);
  });
});

describe('WEBHOOK_SECRET', () => {
  const a = `whsec_${Buffer.alloc(24, 1).toString('base64')}`;
  const b = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;

  test('unset is no secret; one or several (a rotation) are each kept', () => {
    expect(parseConfig({}).WEBHOOK_SECRET).toEqual([]);
    expect(parseConfig({ WEBHOOK_SECRET: a }).WEBHOOK_SECRET).toEqual([a]);
    expect(parseConfig({ WEBHOOK_SECRET: `${a} ${b}` }).WEBHOOK_SECRET).toEqual([a, b]);
  });

  test('a value that is not whsec_ and 24 to 64 bytes of base64 is refused, and the message does not repeat it', () => {
    for (const bad of ['secret', `whsec_${Buffer.alloc(16).toString('base64')}`, `${a} nope`]) {
      let error: unknown;
      try {
        parseConfig({ WEBHOOK_SECRET: bad });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/^WEBHOOK_SECRET: /);
      expect((error as Error).message).not.toContain(bad);
    }
  });
});

describe('outbound proxies and cookies', () => {
  test('proxy lists take http, https and socks5 URLs with credentials', () => {
    const config = parseConfig({
      PROXY_URLS: 'http://u:p@proxy.example:3128, socks5://10.0.0.1:1080',
      MEDIA_PROXY_URLS: 'https://proxy.example',
    });
    expect(config.PROXY_URLS).toEqual(['http://u:p@proxy.example:3128', 'socks5://10.0.0.1:1080']);
    expect(config.EXTRACT_PROXY_URLS).toEqual([]);
    expect(config.MEDIA_PROXY_URLS).toEqual(['https://proxy.example']);
  });

  test.each(['PROXY_URLS', 'EXTRACT_PROXY_URLS', 'MEDIA_PROXY_URLS'])(
    'a bad %s stops start-up naming the variable and the entry, never the password',
    (variable) => {
      for (const bad of [
        'ftp://alice:hunter2secret@proxy.example:21',
        'http://alice:hunter2secret@proxy.example:8080/path',
        'alice:hunter2secret@proxy',
      ]) {
        let error: ConfigError | undefined;
        try {
          parseConfig({ [variable]: `http://ok.example:3128,${bad}` });
        } catch (err) {
          error = err as ConfigError;
        }
        expect(error).toBeInstanceOf(ConfigError);
        expect(error!.issues).toEqual([{ variable, message: expect.stringContaining('entry 2 is not') }]);
        expect(`${error!.message} ${JSON.stringify(error!.issues)}`).not.toContain('hunter2secret');
      }
    },
  );

  test('COOKIES_FILE is resolved to an absolute path', () => {
    expect(parseConfig({ COOKIES_FILE: 'cookies.txt' }).COOKIES_FILE).toBe(path.resolve('cookies.txt'));
  });

  test('PROXY_CA_FILE is read at start-up: its PEM, or an error naming the variable for a missing file or one with no certificate', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-proxy-ca-'));
    try {
      const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
      fs.writeFileSync(path.join(dir, 'ca.pem'), pem);
      fs.writeFileSync(path.join(dir, 'key.pem'), '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n');
      expect(parseConfig({ PROXY_CA_FILE: path.join(dir, 'ca.pem') }).PROXY_CA_FILE).toBe(pem);
      expect(parseConfig({}).PROXY_CA_FILE).toBeUndefined();
      const issues = (env: Record<string, string>) => {
        try {
          parseConfig(env);
        } catch (err) {
          return (err as ConfigError).issues;
        }
        return [];
      };
      expect(issues({ PROXY_CA_FILE: path.join(dir, 'missing.pem') })).toEqual([
        { variable: 'PROXY_CA_FILE', message: 'cannot be read (ENOENT)' },
      ]);
      expect(issues({ PROXY_CA_FILE: path.join(dir, 'key.pem') })).toEqual([
        { variable: 'PROXY_CA_FILE', message: expect.stringContaining('holds no PEM certificate') },
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('.env.example lists every setting reelay reads, and nothing else', () => {
  const example = fs.readFileSync(path.join(import.meta.dirname, '../../../.env.example'), 'utf8');
  const listed = [...example.matchAll(/^# ([A-Z0-9_]+)=/gm)].map((m) => m[1]);
  expect(CONFIG_VARIABLES.filter((name) => !listed.includes(name))).toEqual([]);
  expect(listed.filter((name) => !CONFIG_VARIABLES.includes(name) && !name.startsWith('PLATFORM_'))).toEqual([]);
});

describe('collections (DESIGN.md "Collections in extract")', () => {
  test('MAX_COLLECTION_ENTRIES is 200 unless set, within 1-5000; COLLECTION_CURSOR_SECRET is optional but at least 32 characters', () => {
    expect(parseConfig({}).MAX_COLLECTION_ENTRIES).toBe(200);
    expect(parseConfig({ MAX_COLLECTION_ENTRIES: '5000' }).MAX_COLLECTION_ENTRIES).toBe(5000);
    expect(() => parseConfig({ MAX_COLLECTION_ENTRIES: '0' })).toThrow(ConfigError);
    expect(() => parseConfig({ MAX_COLLECTION_ENTRIES: '5001' })).toThrow(ConfigError);
    expect(parseConfig({}).COLLECTION_CURSOR_SECRET).toBeUndefined();
    expect(() => parseConfig({ COLLECTION_CURSOR_SECRET: 'too-short' })).toThrow(/COLLECTION_CURSOR_SECRET/);
    expect(parseConfig({ COLLECTION_CURSOR_SECRET: 'x'.repeat(32) }).COLLECTION_CURSOR_SECRET).toBe('x'.repeat(32));
  });
});

test('SUBSCRIPTION_MIN_EVERY_SECONDS is 300 unless set, and no lower than 5 nor higher than a week', () => {
  expect(parseConfig({}).SUBSCRIPTION_MIN_EVERY_SECONDS).toBe(300);
  expect(parseConfig({ SUBSCRIPTION_MIN_EVERY_SECONDS: '5' }).SUBSCRIPTION_MIN_EVERY_SECONDS).toBe(5);
  expect(() => parseConfig({ SUBSCRIPTION_MIN_EVERY_SECONDS: '4' })).toThrow(/SUBSCRIPTION_MIN_EVERY_SECONDS/);
  expect(() => parseConfig({ SUBSCRIPTION_MIN_EVERY_SECONDS: '604801' })).toThrow(ConfigError);
});
