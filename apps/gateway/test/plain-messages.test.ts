// Every 400 a route's schema gives says in plain words what was wrong and what the field takes: the
// bad bodies of several routes (subscriptions, sign-up, keys, download, extract, passwords) through
// the real gateway, then the formatter itself on each kind of zod issue. zod's own wording ("Too
// small: expected number to be >=300") must never reach a person.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { z } from 'zod';
import { plainIssue, plainParse } from '../src/http/plain-issues.js';
import { createKey, signUp, uniqueEmail, uniqueIp } from './account-helpers.js';
import { buildGateway, type TestGateway } from './helpers.js';

let gw: TestGateway;
let key: string;
beforeAll(async () => {
  gw = await buildGateway();
  const { agent } = await signUp(gw.app);
  key = (await createKey(agent)).secret;
});
afterAll(async () => {
  await gw?.close();
});

/** zod's own phrases: none may appear in a message for people. */
const ZOD_WORDS = /Too small|Too big|Invalid input|Invalid option|expected \w+ to|received \w+|>=|<=|Invalid string/;

async function refused(res: request.Response, code = 'invalid_request'): Promise<string> {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe(code);
  const message = res.body.error.message as string;
  expect(message).not.toMatch(ZOD_WORDS);
  return message;
}

describe('400s over the real routes say what was wrong and what is allowed', () => {
  const subscribe = (body: unknown) =>
    request(gw.app)
      .post('/api/v1/subscriptions')
      .set('X-API-Key', key)
      .send(body as object);

  test('a subscription checked too often names the allowed range and the value sent', async () => {
    const url = 'https://example.com/feed.xml';
    expect(await refused(await subscribe({ url, every: 60 }))).toBe('every must be from 300 to 604800, not 60.');
    expect(await refused(await subscribe({ url, every: 10_000_000 }))).toBe(
      'every must be from 300 to 604800, not 10000000.',
    );
    expect(await refused(await subscribe({ url, every: 900.5 }))).toBe('every must be a whole number, not 900.5.');
    expect(await refused(await subscribe({ url, every: '3600' }))).toBe('every must be a number, not a string.');
    expect(await refused(await subscribe({ url, since: 'yesterday' }))).toBe(
      'since must be one of "now" or "all", not "yesterday".',
    );
    expect(await refused(await subscribe({ url, preset: { quality: '4k' } }))).toBe(
      'preset.quality must be one of "best", "worst", "2160p", "1440p", "1080p", "720p", "480p", "360p" or "240p", not "4k".',
    );
    expect(await refused(await subscribe({}))).toBe(
      'url is missing; it takes a string (a collection: a feed, playlist, channel or profile).',
    );
  });

  test('sign-up and keys: lengths in characters, a missing field, an address', async () => {
    const signup = (body: object) =>
      request(gw.app).post('/account/signup').set('X-Forwarded-For', uniqueIp()).send(body);
    // The password's rule has its own words in its schema: kept, after the field's name.
    expect(await refused(await signup({ email: uniqueEmail(), password: 'short' }))).toBe(
      'password: Passwords need at least 10 characters.',
    );
    expect(await refused(await signup({ email: uniqueEmail(), password: 'x'.repeat(1025) }))).toBe(
      'password must be at most 1024 characters long (it has 1025 characters).',
    );
    expect(await refused(await signup({ email: uniqueEmail() }))).toMatch(/^password is missing; it takes a string/);
    expect(await refused(await signup({ email: 'not-an-address', password: 'long enough password' }))).toMatch(
      /^email: Not an e-mail address this service takes/,
    );
    const { agent } = await signUp(gw.app);
    expect(await refused(await agent.post('/account/keys').send({ name: 'x'.repeat(101) }))).toBe(
      'name must be at most 100 characters long (it has 101 characters).',
    );
  });

  test('download and extract: an unknown format, a wrong type, a clip of the wrong shape', async () => {
    const download = (body: object) => request(gw.app).post('/api/v1/download').send(body);
    expect(await refused(await download({ url: 'https://example.com/a.mp4', format: 'avi' }))).toBe(
      'format must be one of "mp4", "webm", "mkv", "mp3", "m4a", "opus", "wav", "vtt" or "srt", not "avi".',
    );
    expect(await refused(await download({ url: 'https://example.com/a.mp4', metadata: 'no' }))).toBe(
      'metadata must be true or false, not a string.',
    );
    expect(await refused(await download({ url: 'https://example.com/a.mp4', clip: { start: 'soon', end: 2 } }))).toBe(
      'clip.start must be a number, not a string.',
    );
    expect(await refused(await request(gw.app).post('/api/v1/extract').send({ url: 42 }))).toBe(
      'url must be a string, not 42.',
    );
  });

  test("a schema's own message is kept, prefixed with its field as before", async () => {
    // The clip's own rule (end after start) is stated by its schema in its own words.
    const res = await request(gw.app)
      .post('/api/v1/download')
      .send({ url: 'https://example.com/a.mp4', clip: { start: 5, end: 2 } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_clip');
    expect(res.body.error.message).not.toMatch(ZOD_WORDS);
  });
});

describe('plainIssue, one kind of zod issue at a time', () => {
  const Schema = z.object({
    n: z.number().gt(0).optional(),
    m: z.number().max(10).optional(),
    tags: z.array(z.string()).min(1).max(2).optional(),
    code: z
      .string()
      .regex(/^[a-z]+$/)
      .describe('Lower-case letters')
      .optional(),
    name: z.string().min(1).optional(),
    pick: z.union([z.literal('all'), z.array(z.number())]).optional(),
    only: z.literal('yes').optional(),
    step: z.number().multipleOf(5).optional(),
    site: z.url().optional(),
  });
  const message = (body: unknown) => {
    const { result } = plainParse(Schema, body);
    return result.success ? undefined : result.error.issues[0].message;
  };

  test('numbers, lists, patterns, unions, literals, multiples and URLs', () => {
    expect(message({ n: 0 })).toBe('n must be greater than 0, not 0.');
    expect(message({ m: 11 })).toBe('m must be at most 10, not 11.');
    expect(message({ tags: [] })).toBe('tags needs at least 1 item (it has 0).');
    expect(message({ tags: ['a', 'b', 'c'] })).toBe('tags takes at most 2 items (it has 3).');
    expect(message({ code: 'A1' })).toBe('code is not in the form it takes (lower-case letters).');
    expect(message({ name: '' })).toBe('name must not be empty.');
    expect(message({ pick: {} })).toBe('pick must be "all" or a list, not an object.');
    expect(message({ only: 'no' })).toBe('only must be "yes", not "no".');
    expect(message({ step: 7 })).toBe('step must be a multiple of 5, not 7.');
    expect(message({ site: 'nope' })).toBe('site must be an absolute http(s) URL such as https://example.com/video.');
    expect(message({ tags: 'a'.repeat(50) })).toBe('tags must be a list, not a string.');
  });

  test('without the schema it still speaks plainly, and an issue at the top names the body', () => {
    expect(
      plainIssue({ code: 'too_small', origin: 'number', minimum: 3, inclusive: true, input: 1, path: ['x'] }),
    ).toBe('x must be at least 3, not 1.');
    expect(plainIssue({ code: 'invalid_type', expected: 'object', input: [], path: [] })).toBe(
      'the body must be a JSON object, not a list.',
    );
  });
});
