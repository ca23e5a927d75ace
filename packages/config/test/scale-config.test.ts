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

describe('scale-out configuration', () => {
  test('the filesystem store stays the default and S3 needs a bucket', () => {
    expect(parseConfig({}).ARTIFACT_STORE).toBe('fs');
    expect(issues({ ARTIFACT_STORE: 's3' })).toEqual(['S3_BUCKET']);
    const c = parseConfig({
      ARTIFACT_STORE: 's3',
      S3_BUCKET: 'media',
      S3_FORCE_PATH_STYLE: 'true',
      S3_ENDPOINT: 'http://127.0.0.1:9000',
    });
    expect(c).toMatchObject({
      S3_BUCKET: 'media',
      S3_FORCE_PATH_STYLE: true,
      S3_REGION: 'us-east-1',
      S3_PREFIX: 'artifacts/',
      ARTIFACT_DELIVERY: 'stream',
    });
    expect(issues({ ARTIFACT_STORE: 'gcs' })).toEqual(['ARTIFACT_STORE']);
    expect(issues({ ARTIFACT_DELIVERY: 'teleport' })).toEqual(['ARTIFACT_DELIVERY']);
  });

  test('an AWS key id without its secret is refused', () => {
    expect(issues({ AWS_ACCESS_KEY_ID: 'AKIA' })).toEqual(['AWS_SECRET_ACCESS_KEY']);
  });

  test('sentinels are host:port pairs and need the monitored name', () => {
    const c = parseConfig({
      REDIS_SENTINELS: '127.0.0.1:26379, [::1]:26380,sentinel-3:26381',
      REDIS_SENTINEL_NAME: 'reelay',
    });
    expect(c.REDIS_SENTINELS).toEqual([
      { host: '127.0.0.1', port: 26379 },
      { host: '::1', port: 26380 },
      { host: 'sentinel-3', port: 26381 },
    ]);
    expect(issues({ REDIS_SENTINELS: '127.0.0.1:26379' })).toEqual(['REDIS_SENTINEL_NAME']);
    expect(issues({ REDIS_SENTINEL_NAME: 'reelay' })).toEqual(['REDIS_SENTINELS']);
    expect(issues({ REDIS_SENTINELS: '127.0.0.1', REDIS_SENTINEL_NAME: 'reelay' })).toEqual(['REDIS_SENTINELS']);
    expect(issues({ REDIS_SENTINELS: 'h:70000', REDIS_SENTINEL_NAME: 'reelay' })).toEqual(['REDIS_SENTINELS']);
  });

  test('a cluster URL without ports, with a database other than 0, or beside sentinels is refused', () => {
    expect(issues({ REDIS_URL: 'redis+cluster://a:7000,b' })).toEqual(['REDIS_URL']);
    expect(issues({ REDIS_URL: 'redis+cluster://a:7000/2' })).toEqual(['REDIS_URL']);
    expect(
      issues({ REDIS_URL: 'redis+cluster://a:7000', REDIS_SENTINELS: '127.0.0.1:26379', REDIS_SENTINEL_NAME: 'x' }),
    ).toEqual(['REDIS_SENTINELS']);
    expect(issues({ REDIS_URL: 'redis+cluster://a:7000/0' })).toEqual([]);
  });
});
