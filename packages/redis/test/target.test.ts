// Where the apps connect, read from the configuration, and the keys a Redis Cluster needs: pure.
import { describe, expect, test } from '@jest/globals';
import { parseConfig } from '@reelay/config';
import { defaultQueuePrefix, hashTag, redisTarget, withoutHashTags } from '../src/index.js';

describe('the target', () => {
  test('with sentinels, REDIS_URL only lends its password and database', () => {
    const target = redisTarget(
      parseConfig({
        REDIS_SENTINELS: '127.0.0.1:26379',
        REDIS_SENTINEL_NAME: 'reelay',
        REDIS_URL: 'redis://:s%40cret@ignored:1/3',
      }),
    );
    expect(target).toEqual({
      options: { sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'reelay', password: 's@cret', db: 3 },
    });
    expect(redisTarget(parseConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }))).toEqual({
      url: 'redis://127.0.0.1:6379',
      options: {},
    });
  });

  test('redis+cluster:// names a Redis Cluster by its seed nodes, with the credentials for every node', () => {
    const target = redisTarget(
      parseConfig({ REDIS_URL: 'redis+cluster://app:s%40cret@10.0.0.1:7000, node-2:7001,[::1]:7002' }),
    );
    expect(target).toEqual({
      options: { username: 'app', password: 's@cret' },
      cluster: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'node-2', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
    expect(redisTarget(parseConfig({ REDIS_URL: 'rediss+cluster://h:7000' }))).toEqual({
      options: { tls: {} },
      cluster: [{ host: 'h', port: 7000 }],
    });
    // REDIS_CLUSTER=true is the same with a plain URL (one seed).
    expect(redisTarget(parseConfig({ REDIS_URL: 'redis://h:7000', REDIS_CLUSTER: 'true' }))).toEqual({
      options: {},
      cluster: [{ host: 'h', port: 7000 }],
    });
  });

  test("queues on a cluster share one hash tag; on one Redis they keep BullMQ's own prefix", () => {
    expect(defaultQueuePrefix(parseConfig({ REDIS_URL: 'redis+cluster://a:7000' }))).toBe('{reelay}');
    expect(defaultQueuePrefix(parseConfig({ REDIS_URL: 'redis://a:6379' }))).toBeUndefined();
  });
});

test('a hash tag puts keys in one slot by their tag; without its braces a name hashes whole', () => {
  expect(hashTag('abc')).toBe('{abc}');
  expect(`reelay:xc:r:${hashTag('h')}`).toBe('reelay:xc:r:{h}');
  expect(withoutHashTags('{test-1a2b}')).toBe('test-1a2b');
  expect(withoutHashTags('reelay:{x}:y')).toBe('reelay:x:y');
});
