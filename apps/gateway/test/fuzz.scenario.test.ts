// Property-based fuzzing of every JSON route with fast-check: odd types, sizes, unicode (lone
// surrogates, bidi controls), control characters, content types and encodings, malformed ids. Whatever
// arrives, the gateway answers with a status below 500 and, for errors, the envelope; and it stays up.
// URLs in the generated bodies only ever name 127.0.0.1 (the local origin) or addresses the egress
// check refuses before connecting, so no traffic leaves the machine.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import request from 'supertest';
import { SourceRegistry } from '@reelay/sources';
import { startOrigin, type Origin } from '@reelay/testkit';
import { buildGateway, type TestGateway } from './helpers.js';
import { PASSWORD } from './account-helpers.js';
import { wellFormed } from '../src/http/disposition.js';

let gw: TestGateway;
let origin: Origin;
let cookie: string;
let apiKey: string;
let keyId: string;

const RUNS = 60;
const ip = () => `10.${[...randomBytes(3)].join('.')}`;

beforeAll(async () => {
  origin = await startOrigin();
  origin.body(
    '/page.html',
    '<html><head><title>t</title></head><body><video src="/missing.mp4"></video></body></html>',
    'text/html',
  );
  // Surface B's and the subscriptions API's limits per client at their defaults, so the fuzzing goes
  // through them too; each request comes from an address of its own, so they refuse nothing the tests
  // expect to pass.
  // Mail is on (to a closed port: nothing is delivered), so the mail routes are fuzzed past their 503.
  gw = await buildGateway({
    env: {
      TRUST_PROXY: 'true',
      RATE_LIMIT_V1_PER_MIN: '60',
      RATE_LIMIT_SUBSCRIPTIONS_PER_MIN: '60',
      MAX_ACTIVE_JOBS_PER_CLIENT: '4',
      SMTP_URL: 'smtp://127.0.0.1:9',
      MAIL_FROM: 'fuzz@example.com',
      PUBLIC_URL: 'http://localhost',
    },
  });
  const agent = request(gw.app);
  const email = `fuzz-${randomBytes(6).toString('hex')}@example.com`;
  const signup = await agent
    .post('/account/signup')
    .set('X-Forwarded-For', ip())
    .send({ email, password: PASSWORD })
    .expect(201);
  cookie = String(
    ([] as string[]).concat(signup.headers['set-cookie'] ?? []).find((c) => c.startsWith('reelay_session=')),
  ).split(';')[0];
  // Keys need a confirmed address while mail is on; the fuzz account's is confirmed by hand.
  const record = `reelay:account:${createHash('sha256').update(email).digest('hex')}`;
  await gw.redis.set(record, JSON.stringify({ ...JSON.parse((await gw.redis.get(record))!), email_verified: true }));
  const key = (await agent.post('/account/keys').set('Cookie', cookie).send({ name: 'fuzz' }).expect(201)).body.data;
  apiKey = key.secret;
  keyId = key.id;
});

afterAll(async () => {
  await gw.close();
  await origin.close();
});

// Strings that stress text handling: any unicode (lone surrogates included), bidi and C0/C1 controls.
const nasty = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom(
      '\u202e',
      '\u2066',
      '\u0000',
      '\u001b',
      '\u0085',
      '\ud800',
      '\udc00',
      '\ufeff',
      '%',
      '/',
      '\\',
      '..',
      '"',
      'é',
      '🎬',
    ),
    maxLength: 20,
  }),
  fc.constantFrom('', ' ', '.', '..', '%zz', 'a\ud800b', 'x'.repeat(5000), 'CON', 'nul.mp4'),
);

// URL-ish values that never reach the network: local, refused before connecting, or not URLs at all.
const url = () =>
  fc.oneof(
    nasty,
    fc.constantFrom(
      origin.url('/page.html'),
      origin.url('/missing'),
      origin.url('/%zz'),
      'http://127.0.0.2/x.mp4',
      'http://[::1]/x',
      'http://[::a9fe:a9fe]/',
      'http://0x7f.0.0.2/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'http://',
      origin.url(`/${'a'.repeat(3000)}`),
    ),
  );

// Any JSON value in a field: the right type, a wrong one, or something huge.
const anyValue = () =>
  fc.oneof(
    url(),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(nasty, { maxLength: 3 }),
    fc.dictionary(nasty, nasty, { maxKeys: 3 }),
  );

const bodies = (fields: string[]) =>
  fc.oneof(
    fc.record(Object.fromEntries(fields.map((f) => [f, anyValue()])), { requiredKeys: [] }),
    fc.jsonValue({ maxDepth: 3 }).filter((v) => !JSON.stringify(v).includes('http')),
    fc.constant({ ['a'.repeat(20_000)]: 1 }),
  );

interface Shot {
  status: number;
  type: string | undefined;
  body: unknown;
}

function expectSane(res: Shot, what: string): void {
  if (res.status >= 500) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.body)}`);
  if (res.status >= 400 && res.status !== 416) {
    expect(res.type).toMatch(/^application\/json/);
    expect(res.body).toEqual({ success: false, error: { code: expect.any(String), message: expect.any(String) } });
  }
}

const JSON_ROUTES: { path: string; fields: string[]; auth?: 'key' | 'session' }[] = [
  { path: '/api/v1/extract', fields: ['url', 'cursor'] },
  {
    path: '/api/v1/download',
    fields: [
      'url',
      'video_url',
      'audio_url',
      'format',
      'filename',
      'clip',
      'metadata',
      'cover',
      'page_url',
      'item',
      'quality',
      'audio_only',
      'collection_url',
      'entries',
      'bundle',
      'archive',
    ],
  },
  { path: '/api/playground', fields: ['url'] },
  { path: '/api', fields: ['url'], auth: 'key' },
  { path: '/account/signup', fields: ['email', 'password'] },
  { path: '/account/login', fields: ['email', 'password'] },
  { path: '/account/keys', fields: ['name'], auth: 'session' },
  { path: '/account/verify', fields: ['token'] },
  { path: '/account/password/forgot', fields: ['email'] },
  { path: '/account/password/reset', fields: ['token', 'password'] },
  { path: '/account/password', fields: ['current_password', 'password'], auth: 'session' },
  { path: '/account/passkeys/login', fields: ['response'] },
  { path: '/account/passkeys/register', fields: ['name', 'response'], auth: 'session' },
  {
    path: '/api/v1/subscriptions',
    fields: ['url', 'every', 'since', 'preset', 'webhook_url', 'webhook_secret', 'name'],
    auth: 'key',
  },
  { path: '/api/v1/subscriptions', fields: ['url', 'every', 'since', 'preset', 'name'], auth: 'session' },
  { path: '/api/v1/subscriptions/sub_unknown/check', fields: ['url'], auth: 'key' },
];

function post(path: string, auth?: 'key' | 'session') {
  let req = request(gw.app).post(path).set('X-Forwarded-For', ip());
  if (auth === 'key') req = req.set('X-API-Key', apiKey);
  if (auth === 'session') req = req.set('Cookie', cookie);
  return req;
}

describe('fuzzing every JSON route', () => {
  test.each(JSON_ROUTES)(
    'POST $path with any JSON body never answers 5xx and errors carry the envelope',
    async ({ path, fields, auth }) => {
      await fc.assert(
        fc.asyncProperty(bodies(fields), async (body) => {
          const res = await post(path, auth)
            .set('Content-Type', 'application/json')
            .send(JSON.stringify(body) ?? 'null');
          expectSane(
            { status: res.status, type: res.headers['content-type'], body: res.body },
            `POST ${path} ${JSON.stringify(body).slice(0, 200)}`,
          );
        }),
        { numRuns: RUNS },
      );
    },
  );

  test('a clip of any numbers on a known source is a job or 400 invalid_clip / invalid_request, never 5xx', async () => {
    const known = 'http://127.0.0.1:9/fuzz/known.mp4';
    await new SourceRegistry(gw.redis, 600).record('generic', [
      {
        url: known,
        stream_profile: 'muxed_progressive',
        media_index: 0,
        media_type: 'video',
        title: 'f',
        ext: 'mp4',
        duration: 6,
      },
    ]);
    const time = fc.oneof(
      fc.double(),
      fc.double({ min: 0, max: 10 }),
      fc.integer(),
      fc.constantFrom(0, -0, 5.9999, 6, 1e-4, 86_400, 86_400.0004, Number.MAX_VALUE, Number.MIN_VALUE),
      anyValue(),
    );
    const clip = fc.oneof(
      fc.record(
        { start: time, end: time, mode: fc.oneof(fc.constantFrom('fast', 'precise'), anyValue()) },
        { requiredKeys: [] },
      ),
      anyValue(),
    );
    await fc.assert(
      fc.asyncProperty(clip, fc.oneof(fc.constant(undefined), anyValue()), async (c, metadata) => {
        const res = await post('/api/v1/download').send({ url: known, format: 'mp3', clip: c, metadata });
        expectSane(
          { status: res.status, type: res.headers['content-type'], body: res.body },
          `clip ${JSON.stringify(c)}`,
        );
        expect([202, 400]).toContain(res.status);
        if (res.status === 400) expect(['invalid_clip', 'invalid_request']).toContain(res.body.error.code);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  test('a page_url with any preset is a download, 400, 403 or 422, never 5xx', async () => {
    const preset = fc.record(
      {
        page_url: fc.oneof(fc.constant(origin.url('/page.html')), url()),
        item: fc.oneof(fc.integer({ min: -2, max: 3 }), anyValue()),
        quality: fc.oneof(fc.constantFrom('best', 'worst', '720p', '240p'), anyValue()),
        audio_only: fc.oneof(fc.boolean(), anyValue()),
        format: fc.oneof(fc.constantFrom('mp4', 'mp3', 'wav', 'vtt'), anyValue()),
      },
      { requiredKeys: ['page_url'] },
    );
    await fc.assert(
      fc.asyncProperty(preset, async (body) => {
        const res = await post('/api/v1/download').send(body);
        expectSane(
          { status: res.status, type: res.headers['content-type'], body: res.body },
          `preset ${JSON.stringify(body).slice(0, 200)}`,
        );
      }),
      { numRuns: RUNS },
    );
  });

  test('a collection download with any selection, bundle and archive is a job, 400 or 4xx, never 5xx', async () => {
    origin.body(
      '/fuzz-coll.xml',
      `<rss version="2.0"><channel><title>c</title><item><title>a</title><enclosure url="${origin.url('/missing.mp4')}" type="video/mp4"/></item><item><title>b</title><enclosure url="${origin.url('/missing2.mp4')}" type="video/mp4"/></item></channel></rss>`,
      'application/rss+xml',
    );
    const selection = fc.oneof(
      fc.constantFrom('all', '1', '1-2', '2-1', '0', '1-999999', '1,,2', ' 1 , 2 '),
      fc.array(fc.integer({ min: -2, max: 5 }), { maxLength: 4 }),
      fc.string({ maxLength: 12 }),
      anyValue(),
    );
    const body = fc.record(
      {
        collection_url: fc.oneof(fc.constant(origin.url('/fuzz-coll.xml')), url()),
        entries: selection,
        bundle: fc.oneof(fc.constantFrom('zip', 'none'), anyValue()),
        archive: fc.oneof(
          fc.constantFrom('fuzz-archive-0123456789', 'short'),
          fc.string({ maxLength: 140 }),
          anyValue(),
        ),
        quality: fc.oneof(fc.constantFrom('best', '720p'), anyValue()),
      },
      { requiredKeys: ['collection_url'] },
    );
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const res = await post('/api/v1/download').send(b);
        expectSane(
          { status: res.status, type: res.headers['content-type'], body: res.body },
          `collection ${JSON.stringify(b).slice(0, 200)}`,
        );
      }),
      { numRuns: RUNS },
    );
  });

  test('raw bodies in any content type and encoding never answer 5xx', async () => {
    const contentType = fc.constantFrom(
      'application/json',
      'application/json; charset=utf-16',
      'application/json; charset=bogus',
      'application/merge-patch+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
      'application/json; charset=utf-8; x="\\"',
    );
    const encoding = fc.constantFrom(undefined, 'gzip', 'deflate', 'br', 'identity', 'zstd', 'gzip, gzip', 'x');
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 200 }),
      fc.string({ unit: 'binary', maxLength: 100 }).map((s) => Buffer.from(s)),
      fc.constant(Buffer.alloc(17 * 1024, 0x7b)),
    );
    const route = fc.constantFrom(...JSON_ROUTES);
    await fc.assert(
      fc.asyncProperty(route, contentType, encoding, bytes, async ({ path, auth }, type, enc, body) => {
        let req = post(path, auth).serialize((data: Buffer) => data as unknown as string);
        if (type) req = req.set('Content-Type', type);
        if (enc) req = req.set('Content-Encoding', enc);
        const res = await req.send(Buffer.from(body));
        expectSane(
          { status: res.status, type: res.headers['content-type'], body: res.body },
          `POST ${path} (${type}, ${enc})`,
        );
      }),
      { numRuns: RUNS * 2 },
    );
  });

  test('ids in the path, however malformed or encoded, never answer 5xx', async () => {
    const raw = fc.oneof(
      fc.string({ maxLength: 40 }).map((s) => encodeURIComponent(wellFormed(s))),
      fc.stringMatching(/^[A-Za-z0-9%._~:-]{0,40}$/),
      fc.constantFrom('%zz', '%', '%E0%A4%A', '%ED%A0%80', '..%2F..%2Fetc%2Fpasswd', '%00', 'a'.repeat(3000), keyId),
    );
    const target = fc.constantFrom(
      (id: string) => request(gw.app).get(`/api/v1/jobs/${id}`),
      (id: string) => request(gw.app).get(`/api/v1/jobs/${id}/artifact`),
      (id: string) => request(gw.app).delete(`/api/v1/jobs/${id}`),
      (id: string) => request(gw.app).post(`/api/v1/jobs/${id}/stop`),
      (id: string) => request(gw.app).post(`/account/keys/${id}/disable`).set('Cookie', cookie),
      (id: string) => request(gw.app).post(`/account/keys/${id}/enable`).set('Cookie', cookie),
      (id: string) => request(gw.app).delete(`/account/keys/${id}`).set('Cookie', cookie),
      (id: string) => request(gw.app).get(`/assets/${id}`),
      (id: string) => request(gw.app).get(`/account/keys/${id}/usage?days=${id}`).set('Cookie', cookie),
      (id: string) => request(gw.app).get(`/account/oauth/${id}/start?return_to=${id}`),
      (id: string) =>
        request(gw.app).get(`/account/oauth/${id}/callback?code=${id}&state=${id}`).set('Cookie', `reelay_oauth=${id}`),
      (id: string) => request(gw.app).delete(`/account/oauth/${id}`).set('Cookie', cookie),
      (id: string) => request(gw.app).post(`/account/passkeys/${id}/name`).set('Cookie', cookie).send({ name: 'n' }),
      (id: string) => request(gw.app).delete(`/account/passkeys/${id}`).set('Cookie', cookie),
    );
    await fc.assert(
      fc.asyncProperty(raw, target, async (id, call) => {
        const res = await call(id === keyId ? `${id}x` : id);
        expectSane(
          { status: res.status, type: res.headers['content-type'], body: res.body },
          `path id ${id.slice(0, 100)}`,
        );
      }),
      { numRuns: RUNS * 2 },
    );
  });

  test('odd headers (request ids, keys, ranges, origins) never answer 5xx', async () => {
    const printable = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      maxLength: 60,
    });
    await fc.assert(
      fc.asyncProperty(
        printable,
        printable,
        printable,
        fc.constantFrom(...JSON_ROUTES),
        async (requestId, key, range, { path }) => {
          const res = await post(path)
            .set('X-Request-Id', requestId)
            .set('X-API-Key', key)
            .set('Range', range)
            .set('Origin', range)
            .send({ url: 'http://127.0.0.2/' });
          expectSane({ status: res.status, type: res.headers['content-type'], body: res.body }, `headers on ${path}`);
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('a collection cursor, however mangled, is 400 invalid_request or exactly the page it names, never 5xx', async () => {
    const items = Array.from({ length: 150 }, (_, i) => `<item><title>${i}</title><link>/i/${i}</link></item>`).join(
      '',
    );
    origin.body(
      '/fuzz-feed.xml',
      `<rss version="2.0"><channel><title>f</title>${items}</channel></rss>`,
      'application/rss+xml',
    );
    const url = origin.url('/fuzz-feed.xml');
    const real: string = (await post('/api/v1/extract').send({ url }).expect(200)).body.data.collection.next_cursor;
    const mangled = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc
        .tuple(fc.nat({ max: real.length - 1 }), fc.constantFrom(...'AZaz09-_.=+/ %'))
        .map(([i, c]) => real.slice(0, i) + c + real.slice(i + 1)),
      fc.nat({ max: real.length }).map((n) => real.slice(0, n)),
      fc.string({ maxLength: 20 }).map((tail) => real + tail),
    );
    await fc.assert(
      fc.asyncProperty(mangled, async (cursor) => {
        const res = await post('/api/v1/extract').send({ url, cursor });
        expectSane(
          { status: res.status, type: res.headers['content-type'], body: res.body },
          `cursor ${JSON.stringify(cursor).slice(0, 200)}`,
        );
        if (cursor === real) expect(res.body.data.entries[0].index).toBe(101);
        else
          expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'invalid_request' });
      }),
      { numRuns: RUNS * 2 },
    );
  });

  test('the gateway is still alive and ready to answer afterwards', async () => {
    await request(gw.app).get('/healthz').expect(200);
    await request(gw.app)
      .post('/api/v1/extract')
      .send({ url: origin.url('/page.html') })
      .expect(200);
  });
});
