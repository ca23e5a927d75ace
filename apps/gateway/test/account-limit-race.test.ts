// "Limits are atomic" (DESIGN.md "Trust at the public edge"): an account's keys, passkeys and
// subscriptions stop at their limit exactly, however many requests arrive at once. Each limit is
// checked and taken in one Redis step on the account's own index (one key, so one hash slot on a
// Redis Cluster too); these tests send the requests together at the real gateway and real Redis.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startOrigin, type Origin } from '@reelay/testkit';
import { MAX_KEYS_PER_ACCOUNT, MAX_PASSKEYS_PER_ACCOUNT } from '@reelay/accounts';
import { buildGateway, type TestGateway } from './helpers.js';
import { createKey, expectError, signUp } from './account-helpers.js';
import { SoftAuthenticator } from './soft-authenticator.js';

const PUBLIC_URL = 'https://reelay.example.org';
const MAX_SUBSCRIPTIONS = 3;
let gw: TestGateway;
let origin: Origin;

beforeAll(async () => {
  origin = await startOrigin();
  origin.body(
    '/feed.xml',
    `<?xml version="1.0"?><rss version="2.0"><channel><title>Race</title><link>${origin.url('/')}</link>` +
      `<item><title>One</title><guid>one</guid><enclosure url="${origin.url('/1.mp3')}" length="1" type="audio/mpeg"/></item>` +
      '</channel></rss>',
    'application/rss+xml',
  );
  gw = await buildGateway({
    env: { TRUST_PROXY: 'true', PUBLIC_URL, MAX_SUBSCRIPTIONS_PER_ACCOUNT: String(MAX_SUBSCRIPTIONS) },
  });
});
afterAll(async () => {
  await gw.close();
  await origin.close();
});

/** How many answered each status. */
function tally(statuses: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
}

describe('per-account limits under concurrent requests', () => {
  test(`${MAX_KEYS_PER_ACCOUNT + 20} keys asked for at once: exactly ${MAX_KEYS_PER_ACCOUNT} are made`, async () => {
    const user = await signUp(gw.app);
    const answers = await Promise.all(
      Array.from({ length: MAX_KEYS_PER_ACCOUNT + 20 }, (_, i) =>
        user.agent.post('/account/keys').send({ name: `k${i}` }),
      ),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 201: MAX_KEYS_PER_ACCOUNT, 409: 20 });
    expectError(
      answers.find((a) => a.status === 409)!,
      409,
      'key_limit_reached',
    );
    expect((await user.agent.get('/account/keys').expect(200)).body.data.keys).toHaveLength(MAX_KEYS_PER_ACCOUNT);
  });

  test(`${MAX_PASSKEYS_PER_ACCOUNT + 10} passkeys registered at once: exactly ${MAX_PASSKEYS_PER_ACCOUNT} are kept`, async () => {
    const user = await signUp(gw.app);
    // Each registration answers options of its own (a challenge works once), all fetched first.
    const answers = [];
    for (let i = 0; i < MAX_PASSKEYS_PER_ACCOUNT + 10; i++) {
      const options = (await user.agent.post('/account/passkeys/register/options').expect(200)).body.data;
      answers.push(new SoftAuthenticator(PUBLIC_URL).create(options));
    }
    const results = await Promise.all(
      answers.map((response, i) => user.agent.post('/account/passkeys/register').send({ name: `p${i}`, response })),
    );
    expect(tally(results.map((r) => r.status))).toEqual({ 201: MAX_PASSKEYS_PER_ACCOUNT, 400: 10 });
    expectError(
      results.find((r) => r.status === 400)!,
      400,
      'invalid_request',
    );
    expect((await user.agent.get('/account/passkeys').expect(200)).body.data.passkeys).toHaveLength(
      MAX_PASSKEYS_PER_ACCOUNT,
    );
  });

  test(`10 subscriptions made at once with MAX_SUBSCRIPTIONS_PER_ACCOUNT=${MAX_SUBSCRIPTIONS}: exactly ${MAX_SUBSCRIPTIONS} are made`, async () => {
    const user = await signUp(gw.app);
    const { secret } = await createKey(user.agent);
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        user.agent
          .post('/api/v1/subscriptions')
          .set('X-API-Key', secret)
          .send({ url: origin.url('/feed.xml') }),
      ),
    );
    expect(tally(results.map((r) => r.status))).toEqual({ 201: MAX_SUBSCRIPTIONS, 409: 10 - MAX_SUBSCRIPTIONS });
    expectError(
      results.find((r) => r.status === 409)!,
      409,
      'subscription_limit_reached',
    );
    const listed = (await user.agent.get('/api/v1/subscriptions').set('X-API-Key', secret).expect(200)).body.data;
    expect(listed).toHaveLength(MAX_SUBSCRIPTIONS);
    // A place freed by a deletion is taken again, once.
    await user.agent.delete(`/api/v1/subscriptions/${listed[0].id}`).set('X-API-Key', secret).expect(204);
    const again = await Promise.all(
      Array.from({ length: 4 }, () =>
        user.agent
          .post('/api/v1/subscriptions')
          .set('X-API-Key', secret)
          .send({ url: origin.url('/feed.xml') }),
      ),
    );
    expect(tally(again.map((r) => r.status))).toEqual({ 201: 1, 409: 3 });
  });
});
