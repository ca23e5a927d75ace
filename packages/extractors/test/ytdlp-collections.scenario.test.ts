// The yt-dlp bridge lists playlists flat: the real yt-dlp reads a local RSS feed (its generic
// extractor's playlist) as a collection, a page of 100 at a time bounded by --playlist-start/-end,
// and a fake yt-dlp shows that an answer ignoring the bounds is still cut to a page and to
// MAX_COLLECTION_ENTRIES.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Egress } from '@reelay/egress';
import { startOrigin, type Origin } from '@reelay/testkit';
import { createRegistry, type ExtractorRegistry, type YtdlpOptions } from '../src/index.js';
import type { Extraction, PageRef } from '../src/types.js';
import { ytdlpArgs } from '../src/ytdlp-process.js';
import { fakeYtdlp, realYtdlp, removeFakes } from './ytdlp-helpers.js';

const ytdlp = await realYtdlp();
const describeReal = ytdlp ? describe : describe.skip;

const egress = new Egress({ allowlist: ['127.0.0.1'], responseTimeoutMs: 3_000, idleTimeoutMs: 3_000 });
let origin: Origin;
const registries: ExtractorRegistry[] = [];

function registry(options: Partial<YtdlpOptions> = {}): ExtractorRegistry {
  // 127.0.0.1 on YTDLP_HOSTS: yt-dlp is asked before the native feed reader.
  const r = createRegistry({
    ytdlp: { binary: ytdlp, hosts: ['127.0.0.1'], egress, baseEnv: { PATH: process.env.PATH }, ...options },
  });
  registries.push(r);
  return r;
}

function extract(r: ExtractorRegistry, url: string, page?: PageRef, maxEntries?: number): Promise<Extraction> {
  return r.extract(new URL(url), { egress, endpoints: {}, page, maxEntries });
}

function feed(count: number): string {
  const items = Array.from(
    { length: count },
    (_, i) =>
      `<item><title>Video ${i + 1}</title><link>${origin.url(`/v/${i + 1}.html`)}</link><guid>g${i + 1}</guid></item>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>A yt-dlp playlist</title><link>${origin.url('/')}</link>${items.join('')}</channel></rss>`;
}

beforeAll(async () => {
  origin = await startOrigin();
  origin.body('/five.xml', feed(5), 'application/rss+xml');
  origin.body('/many.xml', feed(130), 'application/rss+xml');
});

afterAll(async () => {
  for (const r of registries) await r.close();
  removeFakes();
  await origin.close();
});

test('a playlist is listed flat between --playlist-start and --playlist-end', () => {
  const args = ytdlpArgs(new URL('https://x.example/list'), 'http://127.0.0.1:9', undefined, { start: 101, end: 201 });
  expect(args).toEqual(expect.arrayContaining(['--flat-playlist', '--no-playlist']));
  expect(args.slice(args.indexOf('--playlist-start'), args.indexOf('--playlist-start') + 4)).toEqual([
    '--playlist-start',
    '101',
    '--playlist-end',
    '201',
  ]);
  expect(args.slice(-2)).toEqual(['--', 'https://x.example/list']);
});

describeReal('the real yt-dlp on a local feed', () => {
  test("a feed yt-dlp reads as a playlist is a collection of its entries, which are the items' pages", async () => {
    const { result, next } = await extract(registry(), origin.url('/five.xml'));
    expect(result).toMatchObject({
      content_type: 'collection',
      media: [],
      extract_profile: 'ytdlp',
      platform: 'generic',
      title: 'A yt-dlp playlist',
    });
    expect(result.collection).toEqual({ kind: 'playlist', entry_count: 5 });
    expect(result.entries).toHaveLength(5);
    // yt-dlp's own "smuggled" fragment is not part of the entry's URL.
    expect(result.entries![0]).toMatchObject({ index: 1, url: origin.url('/v/1.html'), title: 'Video 1' });
    expect(result.entries!.map((e) => e.url)).toEqual([1, 2, 3, 4, 5].map((n) => origin.url(`/v/${n}.html`)));
    expect(next).toBeUndefined();
  }, 20_000);

  test('130 entries come as a page of 100 and a page of 30, each one yt-dlp run of its own range', async () => {
    const r = registry();
    const first = await extract(r, origin.url('/many.xml'));
    expect(first.result.entries).toHaveLength(100);
    expect(first.next).toEqual({ extractor: 'ytdlp', state: '101', index: 100, page: 1 });
    const second = await extract(r, origin.url('/many.xml'), first.next);
    expect(second.result.entries!.map((e) => e.index)).toEqual(Array.from({ length: 30 }, (_, i) => 101 + i));
    expect(second.result.entries![0]).toMatchObject({ url: origin.url('/v/101.html'), title: 'Video 101' });
    expect(second.next).toBeUndefined();
  }, 30_000);

  test('MAX_COLLECTION_ENTRIES cuts the listing and says it was cut', async () => {
    const { result, next } = await extract(registry(), origin.url('/many.xml'), undefined, 60);
    expect(result.entries).toHaveLength(60);
    expect(result.collection).toMatchObject({ truncated: true });
    expect(next).toBeUndefined();
  }, 20_000);
});

describe('a yt-dlp that ignores the range', () => {
  test('an answer of 20,000 entries is cut to a page, and the listing ends at MAX_COLLECTION_ENTRIES', async () => {
    const entries = Array.from({ length: 20_000 }, (_, i) => ({
      _type: 'url',
      url: `http://127.0.0.1:9/e/${i}`,
      title: `e${i}`,
    }));
    const { binary, dir } = fakeYtdlp('cat "$DIR/answer.json"');
    fs.writeFileSync(
      path.join(dir, 'answer.json'),
      JSON.stringify({ _type: 'playlist', id: 'p', title: 'Huge', extractor_key: 'Generic', entries }),
    );
    const r = registry({ binary });
    let page: PageRef | undefined;
    const indexes: number[] = [];
    let last: Extraction | undefined;
    for (let i = 0; i < 5; i++) {
      last = await extract(r, origin.url('/anything'), page, 250);
      indexes.push(...last.result.entries!.map((e) => e.index));
      page = last.next;
      if (!page) break;
    }
    expect(indexes).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
    expect(last!.result.collection!.truncated).toBe(true);
  }, 30_000);

  test('a cursor state that is not a playlist position is refused, not passed to yt-dlp', async () => {
    const { binary, dir } = fakeYtdlp('echo run >> "$DIR/runs"; echo "{}"');
    const err = await extract(registry({ binary }), origin.url('/anything'), {
      extractor: 'ytdlp',
      state: '--exec=rm',
      index: 0,
      page: 1,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'invalid_request' });
    expect(fs.existsSync(path.join(dir, 'runs'))).toBe(false);
  });
});
