import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Redis } from 'ioredis';
import { AccountStore, LoginThrottle } from '../src/index.js';
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
});
