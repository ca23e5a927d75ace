import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import type { RedisClient } from '@reelay/redis';
import { SessionStore } from '../src/index.js';
import { testRedis, unique } from './helpers.js';

let redis: RedisClient;
beforeAll(async () => {
  redis = await testRedis();
});
afterAll(() => redis.quit());

describe('sessions', () => {
  test('a session id is 32 random bytes, stored only as its hash', async () => {
    const sessions = new SessionStore(redis);
    const id = await sessions.create({ id: unique('acct'), email: 'a@example.com' });
    expect(Buffer.from(id, 'base64url')).toHaveLength(32);
    expect(await redis.exists(`reelay:session:${id}`)).toBe(0);
    expect(await redis.exists(`reelay:session:${createHash('sha256').update(id).digest('hex')}`)).toBe(1);
    expect(await sessions.get(id)).toMatchObject({ email: 'a@example.com' });
  });

  test('each use slides the expiry', async () => {
    const sessions = new SessionStore(redis, 100);
    const id = await sessions.create({ id: unique('acct'), email: 'b@example.com' });
    const key = `reelay:session:${createHash('sha256').update(id).digest('hex')}`;
    await redis.expire(key, 5);
    await sessions.get(id);
    expect(await redis.ttl(key)).toBeGreaterThan(90);
  });

  test('unknown, malformed, expired and destroyed sessions are none', async () => {
    const sessions = new SessionStore(redis, 1);
    expect(await sessions.get(undefined)).toBeUndefined();
    expect(await sessions.get('not a session id')).toBeUndefined();
    expect(await sessions.get('A'.repeat(43))).toBeUndefined();
    const destroyed = await sessions.create({ id: unique('acct'), email: 'c@example.com' });
    await sessions.destroy(destroyed);
    expect(await sessions.get(destroyed)).toBeUndefined();
    const expiring = await sessions.create({ id: unique('acct'), email: 'd@example.com' });
    await new Promise((r) => setTimeout(r, 1100));
    expect(await sessions.get(expiring)).toBeUndefined();
  });
});
