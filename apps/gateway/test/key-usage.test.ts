// A key's usage counts every request made with it, not only /api's: subscription calls through the
// real routes (answered 2xx, 4xx) show in GET /account/keys as the owner's key list shows them, each
// request once, and a header that names no key counts for nobody.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { createKey, eventually, signUp } from './account-helpers.js';
import { buildGateway, type TestGateway } from './helpers.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await buildGateway();
});
afterAll(async () => {
  await gw?.close();
});

interface ListedKey {
  id: string;
  last_used_at: string | null;
  usage: { total_requests: number; successful_requests: number; success_rate: number | null };
}

test('subscription and download calls made with a key count for it, refused ones as unsuccessful, /api once each', async () => {
  const { agent } = await signUp(gw.app);
  const key = await createKey(agent, 'subscriptions');
  const other = await createKey(agent, 'unused');
  const withKey = (method: 'get' | 'post', url: string) => request(gw.app)[method](url).set('X-API-Key', key.secret);

  await withKey('get', '/api/v1/subscriptions').expect(200);
  await withKey('get', '/api/v1/subscriptions/no-such-subscription').expect(404);
  await withKey('post', '/api/v1/subscriptions').send({ url: 'https://example.com/feed.xml', every: 60 }).expect(400);
  // Surface A, as before: one request, one count (no double counting by the gate and the route).
  await withKey('post', '/api').send({ url: 'ftp://nope' }).expect(400);
  // A route that takes a key among other ways in (download: the key's account then controls the job).
  await withKey('post', '/api/v1/download').send({ url: 'ftp://nope' }).expect(400);
  // An unknown key is refused and counts for no key.
  await request(gw.app).get('/api/v1/subscriptions').set('X-API-Key', 'rly_not-a-key-of-anyone').expect(401);

  await eventually(async () => {
    const keys = (await agent.get('/account/keys').expect(200)).body.data.keys as ListedKey[];
    const used = keys.find((k) => k.id === key.id)!;
    expect(used.usage).toEqual({ total_requests: 5, successful_requests: 1, success_rate: 0.2 });
    expect(Date.now() - Date.parse(used.last_used_at!)).toBeLessThan(10_000);
    const unused = keys.find((k) => k.id === other.id)!;
    expect(unused).toMatchObject({ last_used_at: null, usage: { total_requests: 0, successful_requests: 0 } });
  });
  // The day's history counts the same requests.
  await eventually(async () => {
    const days = (await agent.get(`/account/keys/${key.id}/usage?days=1`).expect(200)).body.data as {
      requests: number;
      successful: number;
    }[];
    expect(days.at(-1)).toMatchObject({ requests: 5, successful: 1 });
  });
});
