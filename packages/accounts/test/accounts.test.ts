import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Redis } from 'ioredis';
import { AccountStore, LoginThrottle, SignupLimit } from '../src/index.js';
import { testRedis, uniqueEmail, uniqueIp } from './helpers.js';

let redis: Redis;
let accounts: AccountStore;

beforeAll(async () => {
  redis = await testRedis();
  accounts = new AccountStore(redis, new LoginThrottle(redis, { perAccount: 3, perIp: 5 }));
});
afterAll(() => redis.quit());

const PASSWORD = 'a long enough password';

describe('accounts', () => {
  test('sign-up makes an account that signs in with its password', async () => {
    const email = uniqueEmail();
    const created = await accounts.signup(email, PASSWORD);
    expect(created).toEqual({ id: expect.any(String), email });
    expect(await accounts.login(email, PASSWORD, uniqueIp())).toEqual(created);
  });

  test('a second sign-up for the address is email_taken, also when both race', async () => {
    const email = uniqueEmail();
    const results = await Promise.allSettled([accounts.signup(email, PASSWORD), accounts.signup(email, 'another password')]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    await expect(accounts.signup(email, PASSWORD)).rejects.toMatchObject({ code: 'email_taken', status: 409 });
  });

  test('a wrong password and an unknown address get the same invalid_credentials', async () => {
    const email = uniqueEmail();
    await accounts.signup(email, PASSWORD);
    const wrong = await accounts.login(email, 'not the password', uniqueIp()).catch((e: unknown) => e);
    const unknown = await accounts.login(uniqueEmail(), PASSWORD, uniqueIp()).catch((e: unknown) => e);
    expect(wrong).toMatchObject({ code: 'invalid_credentials', status: 401 });
    expect(unknown).toMatchObject({ code: 'invalid_credentials', status: 401, message: (wrong as Error).message });
  });

  test('after too many failures the account is locked for the window, even for the right password', async () => {
    const email = uniqueEmail();
    await accounts.signup(email, PASSWORD);
    for (let i = 0; i < 3; i++) await expect(accounts.login(email, `wrong ${i}`, uniqueIp())).rejects.toMatchObject({ code: 'invalid_credentials' });
    const locked = await accounts.login(email, PASSWORD, uniqueIp()).catch((e: unknown) => e);
    expect(locked).toMatchObject({ code: 'rate_limited', status: 429 });
    const retryAfter = Number((locked as { headers: Record<string, string> }).headers['Retry-After']);
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
  });

  test('unknown addresses are locked the same way, so locking reveals nothing', async () => {
    const email = uniqueEmail();
    for (let i = 0; i < 3; i++) await expect(accounts.login(email, PASSWORD, uniqueIp())).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(accounts.login(email, PASSWORD, uniqueIp())).rejects.toMatchObject({ code: 'rate_limited' });
  });

  test('a success clears the account count, not the address count', async () => {
    const email = uniqueEmail();
    const ip = uniqueIp();
    await accounts.signup(email, PASSWORD);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 2; i++) await expect(accounts.login(email, 'wrong', ip)).rejects.toMatchObject({ code: 'invalid_credentials' });
      await accounts.login(email, PASSWORD, ip);
    }
    // Four failures from this address so far: one more and the address is locked for every account.
    await expect(accounts.login(uniqueEmail(), 'wrong', ip)).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(accounts.login(email, PASSWORD, ip)).rejects.toMatchObject({ code: 'rate_limited' });
    await expect(accounts.login(email, PASSWORD, uniqueIp())).resolves.toMatchObject({ email });
  });

  test('50 parallel wrong passwords for one account get at most the limit of tries; the rest are rate_limited', async () => {
    const email = uniqueEmail();
    await accounts.signup(email, PASSWORD);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => accounts.login(email, `wrong ${i}`, uniqueIp()).catch((e: { code: string }) => e.code)));
    expect(results.filter((code) => code === 'invalid_credentials')).toHaveLength(3);
    expect(results.filter((code) => code === 'rate_limited')).toHaveLength(47);
    await expect(accounts.login(email, PASSWORD, uniqueIp())).rejects.toMatchObject({ code: 'rate_limited' });
  });

  test('50 parallel wrong passwords from one address across accounts are held to the address limit', async () => {
    const ip = uniqueIp();
    const results = await Promise.all(Array.from({ length: 50 }, () => accounts.login(uniqueEmail(), 'wrong', ip).catch((e: { code: string }) => e.code)));
    expect(results.filter((code) => code === 'invalid_credentials')).toHaveLength(5);
  });
});

describe('sign-up limit', () => {
  test('an address that signs up more often than allowed is rate_limited with Retry-After; another address is not', async () => {
    const limited = new AccountStore(redis, new LoginThrottle(redis), new SignupLimit(redis, { perIp: 2, windowSeconds: 60 }));
    const ip = uniqueIp();
    await limited.signup(uniqueEmail(), PASSWORD, ip);
    await limited.signup(uniqueEmail(), PASSWORD, ip);
    const refused = await limited.signup(uniqueEmail(), PASSWORD, ip).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(Number((refused as { headers: Record<string, string> }).headers['Retry-After'])).toBeGreaterThan(50);
    await expect(limited.signup(uniqueEmail(), PASSWORD, uniqueIp())).resolves.toMatchObject({ id: expect.any(String) });
  });

  test('parallel sign-ups from one address cannot exceed the limit', async () => {
    const limited = new AccountStore(redis, new LoginThrottle(redis), new SignupLimit(redis, { perIp: 3, windowSeconds: 60 }));
    const ip = uniqueIp();
    const results = await Promise.allSettled(Array.from({ length: 12 }, () => limited.signup(uniqueEmail(), PASSWORD, ip)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
  });

  test('a failure counter that lost its expiry still blocks for a window only, not for ever', async () => {
    const prefix = `reelay-test-throttle-${Date.now()}:`;
    const throttle = new LoginThrottle(redis, { perAccount: 2, perIp: 50, windowSeconds: 60 }, prefix);
    const ip = uniqueIp();
    const email = uniqueEmail();
    await throttle.attempt(email, ip);
    await throttle.attempt(email, ip);
    const [accountKey] = await redis.keys(`${prefix}account:*`);
    await redis.persist(accountKey); // e.g. restored from a dump without TTLs
    await expect(throttle.attempt(email, ip)).rejects.toMatchObject({ code: 'rate_limited', headers: { 'Retry-After': '60' } });
    const ttl = await redis.ttl(accountKey);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
  });
});
