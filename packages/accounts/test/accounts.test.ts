import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { RedisClient } from '@reelay/redis';
import { AccountStore, LoginThrottle, SignupLimit } from '../src/index.js';
import { testRedis, uniqueEmail, uniqueIp } from './helpers.js';

let redis: RedisClient;
let accounts: AccountStore;

beforeAll(async () => {
  redis = await testRedis();
  // A first delay of a second: long enough that scrypt's time on a busy machine cannot outlast it.
  accounts = new AccountStore(
    redis,
    new LoginThrottle(redis, {
      perAccountAddress: 3,
      perIp: 5,
      accountFreeFailures: 3,
      accountDelayMs: 1000,
      accountMaxDelayMs: 4000,
    }),
  );
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
    const results = await Promise.allSettled([
      accounts.signup(email, PASSWORD),
      accounts.signup(email, 'another password'),
    ]);
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

  test('wrong passwords from other addresses hold the owner back by a short delay only, never for the window', async () => {
    const email = uniqueEmail();
    await accounts.signup(email, PASSWORD);
    for (let i = 0; i < 3; i++)
      await expect(accounts.login(email, `wrong ${i}`, uniqueIp())).rejects.toMatchObject({
        code: 'invalid_credentials',
      });
    const owner = uniqueIp();
    const delayed = await accounts.login(email, PASSWORD, owner).catch((e: unknown) => e);
    expect(delayed).toMatchObject({ code: 'rate_limited', status: 429, headers: { 'Retry-After': '1' } });
    await new Promise((r) => setTimeout(r, 1050)); // the first delay
    await expect(accounts.login(email, PASSWORD, owner)).resolves.toMatchObject({ email });
  });

  test("the attacker's own address is blocked from the account for the window, while the owner signs in", async () => {
    const email = uniqueEmail();
    await accounts.signup(email, PASSWORD);
    const attacker = uniqueIp();
    for (let i = 0; i < 3; i++)
      await expect(accounts.login(email, `wrong ${i}`, attacker)).rejects.toMatchObject({
        code: 'invalid_credentials',
      });
    await new Promise((r) => setTimeout(r, 1050));
    await expect(accounts.login(email, PASSWORD, uniqueIp())).resolves.toMatchObject({ email });
    // Even the right password: the address has used up its tries for this account.
    const blocked = await accounts.login(email, PASSWORD, attacker).catch((e: unknown) => e);
    expect(blocked).toMatchObject({ code: 'rate_limited', status: 429 });
    const retryAfter = Number((blocked as { headers: Record<string, string> }).headers['Retry-After']);
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
  });

  test('the delay doubles with each failure from any address, up to its cap', async () => {
    const throttle = new LoginThrottle(
      redis,
      { accountFreeFailures: 1, accountDelayMs: 200, accountMaxDelayMs: 800 },
      `reelay-test-delay-${Date.now()}:`,
    );
    const email = uniqueEmail();
    await throttle.attempt(email, uniqueIp()); // the free failure
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const since = Date.now();
      // Each try comes from a fresh address, as a spread-out attacker's would; refusals are not counted.
      for (;;) {
        const refused = await throttle.attempt(email, uniqueIp()).then(
          () => false,
          () => true,
        );
        if (!refused) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      waits.push(Date.now() - since);
    }
    const expected = [200, 400, 800, 800, 800];
    waits.forEach((ms, i) => {
      // The delay runs from when Redis recorded the failure, a round trip before `since` was taken;
      // under load that trip is tens of ms, so the lower bound keeps a quarter's slack. It still tells
      // a doubling delay from a constant one.
      expect(ms).toBeGreaterThanOrEqual(expected[i] * 0.75);
      // Generous: a bound on how long the owner can be held, not a speed figure.
      expect(ms).toBeLessThan(expected[i] + 1000);
    });
  }, 20_000);

  test('unknown addresses are slowed the same way, so slowing reveals nothing', async () => {
    const email = uniqueEmail();
    for (let i = 0; i < 3; i++)
      await expect(accounts.login(email, PASSWORD, uniqueIp())).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(accounts.login(email, PASSWORD, uniqueIp())).rejects.toMatchObject({ code: 'rate_limited' });
  });

  test('a success clears the account count, not the address count', async () => {
    const email = uniqueEmail();
    const ip = uniqueIp();
    await accounts.signup(email, PASSWORD);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 2; i++)
        await expect(accounts.login(email, 'wrong', ip)).rejects.toMatchObject({ code: 'invalid_credentials' });
      await accounts.login(email, PASSWORD, ip);
    }
    // Four failures from this address so far: one more and the address is locked for every account.
    await expect(accounts.login(uniqueEmail(), 'wrong', ip)).rejects.toMatchObject({ code: 'invalid_credentials' });
    await expect(accounts.login(email, PASSWORD, ip)).rejects.toMatchObject({ code: 'rate_limited' });
    await expect(accounts.login(email, PASSWORD, uniqueIp())).resolves.toMatchObject({ email });
  });

  test('50 parallel wrong passwords for one account get at most the limit of tries; the rest are rate_limited', async () => {
    // Its own throttle with a minute's delay, so the try after the burst is refused however long the burst took.
    const slow = new AccountStore(
      redis,
      new LoginThrottle(redis, { accountFreeFailures: 3, accountDelayMs: 60_000, accountMaxDelayMs: 60_000 }),
    );
    const email = uniqueEmail();
    await slow.signup(email, PASSWORD);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        slow.login(email, `wrong ${i}`, uniqueIp()).catch((e: { code: string }) => e.code),
      ),
    );
    expect(results.filter((code) => code === 'invalid_credentials')).toHaveLength(3);
    expect(results.filter((code) => code === 'rate_limited')).toHaveLength(47);
    await expect(slow.login(email, PASSWORD, uniqueIp())).rejects.toMatchObject({ code: 'rate_limited' });
  });

  test('50 parallel wrong passwords from one address across accounts are held to the address limit', async () => {
    const ip = uniqueIp();
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        accounts.login(uniqueEmail(), 'wrong', ip).catch((e: { code: string }) => e.code),
      ),
    );
    expect(results.filter((code) => code === 'invalid_credentials')).toHaveLength(5);
  });
});

describe('sign-up limit', () => {
  test('an address that signs up more often than allowed is rate_limited with Retry-After; another address is not', async () => {
    const limited = new AccountStore(
      redis,
      new LoginThrottle(redis),
      new SignupLimit(redis, { perIp: 2, windowSeconds: 60 }),
    );
    const ip = uniqueIp();
    await limited.signup(uniqueEmail(), PASSWORD, ip);
    await limited.signup(uniqueEmail(), PASSWORD, ip);
    const refused = await limited.signup(uniqueEmail(), PASSWORD, ip).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(Number((refused as { headers: Record<string, string> }).headers['Retry-After'])).toBeGreaterThan(50);
    await expect(limited.signup(uniqueEmail(), PASSWORD, uniqueIp())).resolves.toMatchObject({
      id: expect.any(String),
    });
  });

  test('parallel sign-ups from one address cannot exceed the limit', async () => {
    const limited = new AccountStore(
      redis,
      new LoginThrottle(redis),
      new SignupLimit(redis, { perIp: 3, windowSeconds: 60 }),
    );
    const ip = uniqueIp();
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, () => limited.signup(uniqueEmail(), PASSWORD, ip)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
  });

  test('a failure counter that lost its expiry still blocks for a window only, not for ever', async () => {
    const prefix = `reelay-test-throttle-${Date.now()}:`;
    const throttle = new LoginThrottle(redis, { perAccountAddress: 2, perIp: 50, windowSeconds: 60 }, prefix);
    const ip = uniqueIp();
    const email = uniqueEmail();
    await throttle.attempt(email, ip);
    await throttle.attempt(email, ip);
    // KEYS runs on one node: on a cluster, ask every primary.
    const nodes: RedisClient[] = 'nodes' in redis ? redis.nodes('master') : [redis];
    const [accountKey] = (await Promise.all(nodes.map((node) => node.keys(`${prefix}*:pair:*`)))).flat();
    await redis.persist(accountKey); // e.g. restored from a dump without TTLs
    await expect(throttle.attempt(email, ip)).rejects.toMatchObject({
      code: 'rate_limited',
      headers: { 'Retry-After': '60' },
    });
    const ttl = await redis.ttl(accountKey);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
  });
});
