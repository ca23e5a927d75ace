import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { RedisClient } from '@reelay/redis';
import { startRedis } from '@reelay/testkit';
import { ipBucket, KeyStore, SurfaceGate } from '../src/index.js';
import { testRedis, unique, uniqueIp } from './helpers.js';

let redis: RedisClient;
let keys: KeyStore;

beforeAll(async () => {
  redis = await testRedis();
  keys = new KeyStore(redis);
});
afterAll(() => redis.quit());

const gate = (limits = { keyPerMinute: 3, publicPerMinute: 2 }) => new SurfaceGate(redis, limits);

describe('the surface A gate', () => {
  test('the playground charges the client address and counts down to a refusal', async () => {
    const ip = uniqueIp();
    const g = gate();
    const first = await g.check({ surface: 'playground', ip });
    expect(first).toMatchObject({ auth: 'none', allowed: true, limit: 2, remaining: 1 });
    expect(first.resetSeconds).toBeGreaterThanOrEqual(59);
    expect(first.resetSeconds).toBeLessThanOrEqual(60);
    expect(await g.check({ surface: 'playground', ip, secret: 'rly_ignored' })).toMatchObject({
      auth: 'none',
      allowed: true,
      remaining: 0,
    });
    expect(await g.check({ surface: 'playground', ip })).toMatchObject({ allowed: false, remaining: 0 });
    expect(await g.check({ surface: 'playground', ip: uniqueIp() })).toMatchObject({ allowed: true, remaining: 1 });
  });

  test('a valid key is charged to its own bucket, not the address', async () => {
    const ip = uniqueIp();
    const key = await keys.create(unique('acct'), 'gate');
    const g = gate();
    for (const remaining of [2, 1, 0]) {
      expect(await g.check({ surface: 'api', ip, secret: key.secret })).toMatchObject({
        auth: 'ok',
        allowed: true,
        limit: 3,
        remaining,
        keyHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
    }
    expect(await g.check({ surface: 'api', ip, secret: key.secret })).toMatchObject({ auth: 'ok', allowed: false });
    expect(await g.check({ surface: 'playground', ip })).toMatchObject({ allowed: true, remaining: 1 });
  });

  test('missing and unknown keys are charged to the address, so guessing keys hits the public limit', async () => {
    const ip = uniqueIp();
    const g = gate();
    expect(await g.check({ surface: 'api', ip })).toMatchObject({
      auth: 'missing',
      allowed: true,
      remaining: 1,
      keyHash: undefined,
    });
    expect(await g.check({ surface: 'api', ip, secret: `rly_${'A'.repeat(43)}` })).toMatchObject({
      auth: 'invalid',
      allowed: true,
      remaining: 0,
      keyHash: undefined,
    });
    expect(await g.check({ surface: 'api', ip, secret: 'rly_another_guess' })).toMatchObject({
      auth: 'invalid',
      allowed: false,
    });
  });

  test('a disabled key is recognised, charged to its bucket, and its usage still counted', async () => {
    const account = unique('acct');
    const key = await keys.create(account, 'off');
    await keys.setEnabled(account, key.id, false);
    expect(await gate().check({ surface: 'api', ip: uniqueIp(), secret: key.secret })).toMatchObject({
      auth: 'disabled',
      allowed: true,
      limit: 3,
      keyHash: expect.any(String),
    });
  });

  test('a deleted key is unknown', async () => {
    const account = unique('acct');
    const key = await keys.create(account, 'gone');
    await keys.delete(account, key.id);
    expect(await gate().check({ surface: 'api', ip: uniqueIp(), secret: key.secret })).toMatchObject({
      auth: 'invalid',
    });
  });

  test('the window ends and the bucket is full again', async () => {
    const ip = uniqueIp();
    const g = new SurfaceGate(redis, { keyPerMinute: 1, publicPerMinute: 1, windowMs: 300 });
    expect((await g.check({ surface: 'playground', ip })).allowed).toBe(true);
    const refused = await g.check({ surface: 'playground', ip });
    expect(refused).toMatchObject({ allowed: false, resetSeconds: 1 });
    await new Promise((r) => setTimeout(r, 400));
    expect(await g.check({ surface: 'playground', ip })).toMatchObject({ allowed: true, remaining: 0 });
  });

  test('the script is loaded again after Redis forgets it (SCRIPT FLUSH)', async () => {
    const server = await startRedis();
    const own = await testRedis(server.url);
    try {
      const g = new SurfaceGate(own, { keyPerMinute: 5, publicPerMinute: 5 });
      await g.check({ surface: 'playground', ip: '192.0.2.1' });
      await own.script('FLUSH');
      expect(await g.check({ surface: 'playground', ip: '192.0.2.1' })).toMatchObject({ allowed: true, remaining: 3 });
    } finally {
      own.disconnect();
      await server.stop();
    }
  });

  test('without Redis the gate refuses with service_unavailable, never lets requests through', async () => {
    const server = await startRedis();
    const own = await testRedis(server.url);
    try {
      await server.stop();
      await expect(
        new SurfaceGate(own, { keyPerMinute: 5, publicPerMinute: 5 }).check({ surface: 'playground', ip: '192.0.2.1' }),
      ).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
    } finally {
      own.disconnect();
    }
  });
});

describe('client address buckets', () => {
  test.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:0db8:0001:0002:ffff::1%eth0', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    [undefined, 'unknown'],
  ])('%s is counted as %s', (ip, bucket) => {
    expect(ipBucket(ip)).toBe(bucket);
  });
});
