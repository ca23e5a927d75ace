import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import type { RedisClient } from '@reelay/redis';
import { apiKeyRecord, KeyStore, MAX_KEYS_PER_ACCOUNT, UsageCounter } from '../src/index.js';
import { testRedis, unique } from './helpers.js';

let redis: RedisClient;
let keys: KeyStore;
let usage: UsageCounter;

beforeAll(async () => {
  redis = await testRedis();
  keys = new KeyStore(redis);
  usage = new UsageCounter(redis);
});
afterAll(() => redis.quit());

describe('API keys', () => {
  test('a new key is enabled, rly_ + 32 random bytes, and only its SHA-256 is stored', async () => {
    const account = unique('acct');
    const key = await keys.create(account, 'my app');
    expect(key.secret).toMatch(/^rly_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(key.secret.slice(4), 'base64url')).toHaveLength(32);
    expect(key).toMatchObject({
      name: 'my app',
      prefix: key.secret.slice(0, 8),
      enabled: true,
      last_used_at: null,
      usage: { total_requests: 0, successful_requests: 0, success_rate: null },
    });
    const hash = createHash('sha256').update(key.secret).digest('hex');
    const record = await redis.hgetall(apiKeyRecord(hash));
    expect(record).toMatchObject({ id: key.id, account_id: account, enabled: '1' });
    expect(JSON.stringify(record)).not.toContain(key.secret);
  });

  test('the list holds every key of the account, oldest first, and never a secret', async () => {
    const account = unique('acct');
    const first = await keys.create(account, 'first');
    const second = await keys.create(account, 'second');
    await keys.create(unique('other'), 'not mine');
    const list = await keys.list(account);
    expect(list.map((k) => k.name)).toEqual(['first', 'second']);
    expect(JSON.stringify(list)).not.toContain(first.secret);
    expect(JSON.stringify(list)).not.toContain(second.secret);
    expect(list[0]).not.toHaveProperty('secret');
  });

  test('disable and enable change the state; another account cannot touch the key', async () => {
    const account = unique('acct');
    const key = await keys.create(account, 'toggle');
    expect((await keys.setEnabled(account, key.id, false)).enabled).toBe(false);
    expect((await keys.list(account))[0].enabled).toBe(false);
    expect((await keys.setEnabled(account, key.id, true)).enabled).toBe(true);
    await expect(keys.setEnabled(unique('intruder'), key.id, false)).rejects.toMatchObject({ code: 'not_found' });
    await expect(keys.delete(unique('intruder'), key.id)).rejects.toMatchObject({ code: 'not_found' });
    expect((await keys.list(account))[0].enabled).toBe(true);
  });

  test('delete removes the record for good', async () => {
    const account = unique('acct');
    const key = await keys.create(account, 'doomed');
    const hash = createHash('sha256').update(key.secret).digest('hex');
    await keys.delete(account, key.id);
    expect(await redis.exists(apiKeyRecord(hash))).toBe(0);
    expect(await keys.list(account)).toEqual([]);
    await expect(keys.delete(account, key.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(keys.setEnabled(account, key.id, true)).rejects.toMatchObject({ code: 'not_found' });
  });

  test('usage counts totals, successes and the last use, and never revives a deleted key', async () => {
    const account = unique('acct');
    const key = await keys.create(account, 'counted');
    const hash = createHash('sha256').update(key.secret).digest('hex');
    const at = Date.parse('2030-01-02T03:04:05.000Z');
    await usage.record(hash, true, at - 1000);
    await usage.record(hash, true, at - 500);
    await usage.record(hash, false, at);
    const [listed] = await keys.list(account);
    expect(listed.usage).toEqual({ total_requests: 3, successful_requests: 2, success_rate: 0.6667 });
    expect(listed.last_used_at).toBe('2030-01-02T03:04:05.000Z');
    await keys.delete(account, key.id);
    await usage.record(hash, true);
    expect(await redis.exists(apiKeyRecord(hash))).toBe(0);
  });

  test(`an account can hold at most ${MAX_KEYS_PER_ACCOUNT} keys`, async () => {
    const account = unique('acct');
    for (let i = 0; i < MAX_KEYS_PER_ACCOUNT; i++) await keys.create(account, `k${i}`);
    await expect(keys.create(account, 'one too many')).rejects.toMatchObject({
      code: 'key_limit_reached',
      status: 409,
    });
  });

  test(`${MAX_KEYS_PER_ACCOUNT + 50} keys made at once: exactly ${MAX_KEYS_PER_ACCOUNT}, and the list agrees`, async () => {
    const account = unique('acct');
    // Sent together: every check reaches Redis before any key is written, as on a busy gateway.
    const results = await Promise.allSettled(
      Array.from({ length: MAX_KEYS_PER_ACCOUNT + 50 }, (_, i) => keys.create(account, `k${i}`)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(MAX_KEYS_PER_ACCOUNT);
    for (const r of results.filter((r) => r.status === 'rejected'))
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'key_limit_reached' });
    expect(await keys.list(account)).toHaveLength(MAX_KEYS_PER_ACCOUNT);
  });
});
