import { afterAll, describe, expect, test } from '@jest/globals';
import { testRedisClient } from '@reelay/testkit';
import type { SourceRecord } from '@reelay/contracts';
import { SourceRegistry } from '../src/index.js';

const redis = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
const prefix = `test:sources:${process.pid}:`;

afterAll(async () => {
  await redis.quit();
});

const record = (url: string, media_index = 0): SourceRecord => ({
  url,
  stream_profile: 'muxed_progressive',
  media_index,
  media_type: 'video',
  title: 'Clip',
  mime_type: 'video/mp4',
});

describe('the source registry', () => {
  test('a recorded source is found again by its exact URL, with what a download needs', async () => {
    const sources = new SourceRegistry(redis, 60, prefix);
    await sources.record('reddit', [record('http://127.0.0.1/a.mp4')]);
    const found = await sources.get('http://127.0.0.1/a.mp4');
    expect(found).toMatchObject({
      url: 'http://127.0.0.1/a.mp4',
      platform: 'reddit',
      stream_profile: 'muxed_progressive',
      mime_type: 'video/mp4',
    });
    expect(await sources.get('http://127.0.0.1/a.mp4?other')).toBeUndefined();
  });

  test('sources of one media item share an item key; another item or another extraction does not', async () => {
    const sources = new SourceRegistry(redis, 60, prefix);
    await sources.record('generic', [
      record('http://127.0.0.1/v.mp4', 0),
      record('http://127.0.0.1/a.m4a', 0),
      record('http://127.0.0.1/other.mp4', 1),
    ]);
    await sources.record('generic', [record('http://127.0.0.1/later.mp4', 0)]);
    const [video, audio, other, later] = await Promise.all(
      ['v.mp4', 'a.m4a', 'other.mp4', 'later.mp4'].map((f) => sources.get(`http://127.0.0.1/${f}`)),
    );
    expect(video!.item_key).toBe(audio!.item_key);
    expect(other!.item_key).not.toBe(video!.item_key);
    expect(later!.item_key).not.toBe(video!.item_key);
  });

  test("two extractions naming one URL each keep their own title and headers; by URL alone the latest one's", async () => {
    const sources = new SourceRegistry(redis, 60, prefix);
    const url = 'http://127.0.0.1/shared.mp4';
    const first = await sources.record('generic', [
      { ...record(url), title: 'Page A', headers: { referer: 'http://127.0.0.1/a.html' } },
    ]);
    const second = await sources.record('generic', [
      { ...record(url), title: 'Page B', headers: { referer: 'http://127.0.0.1/b.html' } },
    ]);
    expect(first).not.toBe(second);
    expect(await sources.get(url, first)).toMatchObject({
      title: 'Page A',
      headers: { referer: 'http://127.0.0.1/a.html' },
      item_key: `${first}:0`,
    });
    expect(await sources.get(url, second)).toMatchObject({
      title: 'Page B',
      headers: { referer: 'http://127.0.0.1/b.html' },
      item_key: `${second}:0`,
    });
    expect(await sources.get(url)).toMatchObject({ title: 'Page B' });
    expect(await redis.ttl(sources.key(url, first))).toBeGreaterThan(50);
    expect(await sources.get(url, 'another-extraction')).toBeUndefined();
  });

  test('a cache re-registering an answer passes its extraction id, and gets the same id back', async () => {
    const sources = new SourceRegistry(redis, 60, prefix);
    const id = await sources.record('generic', [record('http://127.0.0.1/cached-again.mp4')]);
    expect(await sources.record('generic', [record('http://127.0.0.1/cached-again.mp4')], [], id)).toBe(id);
    expect(await sources.get('http://127.0.0.1/cached-again.mp4', id)).toMatchObject({ item_key: `${id}:0` });
  });

  test('recording works whether or not Redis has the script cached (after SCRIPT FLUSH, a restart, a failover)', async () => {
    const sources = new SourceRegistry(redis, 60, prefix);
    await redis.script('FLUSH');
    await sources.record('generic', [record('http://127.0.0.1/flushed.mp4')]);
    await sources.record('generic', [record('http://127.0.0.1/cached.mp4')]);
    expect(await sources.get('http://127.0.0.1/flushed.mp4')).toMatchObject({ url: 'http://127.0.0.1/flushed.mp4' });
    expect(await sources.get('http://127.0.0.1/cached.mp4')).toMatchObject({ url: 'http://127.0.0.1/cached.mp4' });
  });

  test('a source expires after SOURCE_TTL_SECONDS', async () => {
    const sources = new SourceRegistry(redis, 60, prefix);
    await sources.record('generic', [record('http://127.0.0.1/ttl.mp4')]);
    const ttl = await redis.ttl(sources.key('http://127.0.0.1/ttl.mp4'));
    expect(ttl).toBeGreaterThan(50);
    expect(ttl).toBeLessThanOrEqual(60);
  });

  test('a stored value that is not a source (or names another URL) reads as unknown, not as a crash', async () => {
    const sources = new SourceRegistry(redis, 60, prefix);
    await redis.set(sources.key('http://127.0.0.1/bad'), JSON.stringify({ url: 'http://127.0.0.1/bad' }));
    expect(await sources.get('http://127.0.0.1/bad')).toBeUndefined();
    await redis.set(sources.key('http://127.0.0.1/garbled'), '{"url": "http://127.0.0.1/gar');
    expect(await sources.get('http://127.0.0.1/garbled')).toBeUndefined();
    await sources.record('generic', [record('http://127.0.0.1/real.mp4')]);
    await redis.set(
      sources.key('http://127.0.0.1/alias.mp4'),
      (await redis.get(sources.key('http://127.0.0.1/real.mp4')))!,
    );
    expect(await sources.get('http://127.0.0.1/alias.mp4')).toBeUndefined();
  });

  test('an unreachable Redis is service_unavailable, for record and for get', async () => {
    const down = testRedisClient('redis://127.0.0.1:1', {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    const sources = new SourceRegistry(down, 60, prefix);
    await expect(sources.get('http://127.0.0.1/x')).rejects.toMatchObject({ code: 'service_unavailable' });
    await expect(sources.record('generic', [record('http://127.0.0.1/x')])).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    down.disconnect();
  });
});
