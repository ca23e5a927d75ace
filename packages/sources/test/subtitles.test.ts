import { afterAll, describe, expect, test } from '@jest/globals';
import type { SourceRecord, SubtitleRecord } from '@reelay/contracts';
import { testRedisClient } from '@reelay/testkit';
import { SourceRegistry } from '../src/index.js';

const redis = testRedisClient(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
const prefix = `test:subtitles:${process.pid}:`;

afterAll(async () => {
  await redis.quit();
});

const source = (url: string, media_index = 0): SourceRecord => ({
  url,
  stream_profile: 'muxed_progressive',
  media_index,
  media_type: 'video',
  title: 'Clip',
});
const track = (url: string, language: string, media_index = 0): SubtitleRecord => ({
  kind: 'subtitle',
  url,
  language,
  format: 'vtt',
  media_index,
  title: 'Clip',
});

describe('subtitle tracks in the source registry', () => {
  test('a recorded track is found by its exact URL as a subtitle, and never as a source', async () => {
    const sources = new SourceRegistry(redis, 60, prefix);
    await sources.record('generic', [source('http://127.0.0.1/v.mp4')], [track('http://127.0.0.1/en.vtt', 'en')]);
    const found = await sources.lookup('http://127.0.0.1/en.vtt');
    expect(found).toMatchObject({
      kind: 'subtitle',
      subtitle: { url: 'http://127.0.0.1/en.vtt', language: 'en', format: 'vtt', platform: 'generic' },
    });
    expect(await sources.get('http://127.0.0.1/en.vtt')).toBeUndefined();
    expect(await sources.lookup('http://127.0.0.1/v.mp4')).toMatchObject({
      kind: 'source',
      source: { url: 'http://127.0.0.1/v.mp4' },
    });
    expect(await sources.lookup('http://127.0.0.1/unknown.vtt')).toBeUndefined();
  });

  test("an item's tracks are listed under its sources' item key, and only that item's", async () => {
    const sources = new SourceRegistry(redis, 60, prefix);
    await sources.record(
      'generic',
      [source('http://127.0.0.1/a.mp4', 0), source('http://127.0.0.1/b.mp4', 1)],
      [
        track('http://127.0.0.1/a-en.vtt', 'en', 0),
        track('http://127.0.0.1/a-fr.vtt', 'fr', 0),
        track('http://127.0.0.1/b-de.vtt', 'de', 1),
      ],
    );
    const a = (await sources.get('http://127.0.0.1/a.mp4'))!;
    const b = (await sources.get('http://127.0.0.1/b.mp4'))!;
    expect((await sources.subtitlesOf(a.item_key)).map((s) => s.language)).toEqual(['en', 'fr']);
    expect((await sources.subtitlesOf(b.item_key)).map((s) => s.language)).toEqual(['de']);
    expect(await sources.subtitlesOf('no-such-item:0')).toEqual([]);
  });

  test('the tracks expire with the sources', async () => {
    const sources = new SourceRegistry(redis, 60, prefix);
    await sources.record('generic', [source('http://127.0.0.1/ttl.mp4')], [track('http://127.0.0.1/ttl.vtt', 'en')]);
    const ttl = await redis.ttl(sources.key('http://127.0.0.1/ttl.vtt'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
  });
});
