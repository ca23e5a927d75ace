// Collections through the real gateway: a podcast feed's episodes as entries with their
// enclosures (downloadable, being recorded sources), Atom, pages of 100 and signed cursors, paged
// feeds, and what a hostile feed or cursor gets: endless paging, 10^5 items, nesting, entities, a
// next page that is itself, an edited cursor and a cursor for another URL; a Reddit listing paged
// through signed cursors, and pages cached apart by the extract cache.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { startOrigin, testMedia, type Origin, type TestMedia } from '@reelay/testkit';
import { buildGateway, binary, type TestGateway } from './helpers.js';

let origin: Origin;
let gw: TestGateway;
let media: TestMedia;

const RSS = 'application/rss+xml';

function podcast(items: string, extra = ''): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/">
<channel><title>Local Radio &amp; Friends</title><link>${origin.url('/')}</link>${extra}
${items}
</channel></rss>`;
}

function episode(n: number, opts: { enclosure?: string; link?: boolean } = {}): string {
  return `<item><title>Episode ${n}</title>${opts.link === false ? '' : `<link>${origin.url(`/episodes/${n}`)}</link>`}<guid isPermaLink="false">ep-${n}</guid>
<pubDate>Tue, 0${(n % 9) + 1} Sep 2026 10:00:00 +0000</pubDate><itunes:duration>01:02:0${n % 10}</itunes:duration>
<itunes:image href="${origin.url(`/art/${n}.jpg`)}"/>
${opts.enclosure ?? `<enclosure url="${origin.url(`/audio/${n}.m4a`)}" length="${1000 + n}" type="audio/mp4"/>`}</item>`;
}

function items(from: number, to: number): string {
  const out: string[] = [];
  for (let n = from; n <= to; n++)
    out.push(`<item><title>Item ${n}</title><link>${origin.url(`/items/${n}`)}</link></item>`);
  return out.join('\n');
}

const extract = (body: object) => request(gw.app).post('/api/v1/extract').send(body);

function expectError(res: request.Response, status: number, code: string, message?: RegExp): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.success).toBe(false);
  if (message) expect(res.body.error.message).toMatch(message);
}

beforeAll(async () => {
  media = await testMedia();
  origin = await startOrigin();
  origin.file('/audio/1.m4a', media.audioOnlyM4a, 'audio/mp4');
  origin.body(
    '/podcast.xml',
    podcast(
      [
        episode(1),
        episode(2, { enclosure: `<enclosure url="${origin.url('/video/2.mp4')}" length="2002" type="video/mp4"/>` }),
        episode(3, { link: false }),
      ].join('\n'),
    ),
    RSS,
  );
  origin.body(
    '/atom.xml',
    `<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/"><title type="text">Atom channel</title>
<entry><id>yt:video:abc</id><title>First video</title><link rel="alternate" href="/watch/abc"/><published>2026-10-01T08:00:00+00:00</published>
<media:group><media:title>First video</media:title><media:thumbnail url="/thumb/abc.jpg" width="480" height="360"/></media:group></entry>
<entry><id>tag:x,2026:2</id><title type="html">Second &lt;b&gt;one&lt;/b&gt;</title><link href="/watch/def"/><link rel="enclosure" href="/files/def.mp3" type="audio/mpeg" length="5000"/><updated>2026-09-30T08:00:00Z</updated></entry>
</feed>`,
    'application/atom+xml',
  );
  // Served as plain XML: the root element says it is a feed.
  origin.body('/big.xml', podcast(items(1, 250)), 'text/xml');
  // RFC 5005 paging: page n links to page n+1.
  for (let p = 1; p <= 3; p++) {
    const next = p < 3 ? `<atom:link rel="next" href="${origin.url(`/paged-${p + 1}.xml`)}"/>` : '';
    origin.body(`/paged-${p}.xml`, podcast(items(p * 10 - 9, p * 10), next), RSS);
  }
  // Endless: every page names the next, with new items, for ever.
  origin.route('/endless', (req, res) => {
    const n = Number(new URL(req.url ?? '/', origin.base).searchParams.get('p') ?? '1');
    res
      .writeHead(200, { 'content-type': RSS })
      .end(podcast(items(n * 60 - 59, n * 60), `<atom:link rel="next" href="${origin.url(`/endless?p=${n + 1}`)}"/>`));
  });
  // Endless and empty: pages with nothing on them, each naming the next.
  origin.route('/empty-pages', (req, res) => {
    const n = Number(new URL(req.url ?? '/', origin.base).searchParams.get('p') ?? '1');
    res
      .writeHead(200, { 'content-type': RSS })
      .end(podcast('', `<atom:link rel="next" href="${origin.url(`/empty-pages?p=${n + 1}`)}"/>`));
  });
  origin.body('/self.xml', podcast(items(1, 3), `<atom:link rel="next" href="${origin.url('/self.xml')}"/>`), RSS);
  origin.body('/huge.xml', podcast('<item><link>/x</link></item>\n'.repeat(100_000)), RSS);
  origin.body(
    '/nested.xml',
    podcast(`<item><title>t</title><link>/x</link>${'<a>'.repeat(5000)}${'</a>'.repeat(5000)}</item>`),
    RSS,
  );
  origin.body(
    '/entities.xml',
    `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><rss version="2.0"><channel><title>&b;</title><item><link>/x</link></item></channel></rss>`,
    RSS,
  );
  origin.body(
    '/hostile-links.xml',
    podcast(
      `<item><title>file</title><link>file:///etc/passwd</link></item><item><title>meta</title><link>http://169.254.169.254/latest</link></item><item><title>ok</title><link>/fine</link></item><item><title>itself</title><link>/hostile-links.xml</link></item>`,
    ),
    RSS,
  );
  // A subreddit of 150 posts with video, in Reddit's listing shape, 100 a page by `after`.
  const post = (n: number) => ({
    kind: 't3',
    data: {
      id: `p${n}`,
      title: `Post ${n}`,
      permalink: `/r/clips/comments/p${n}/post_${n}/`,
      is_video: true,
      created_utc: 1763900000,
      secure_media: { reddit_video: { duration: n } },
    },
  });
  origin.route('/r/clips/hot.json', (req, res) => {
    const after = new URL(req.url ?? '/', origin.base).searchParams.get('after');
    const from = after ? Number(after.slice(4)) : 0;
    const children = Array.from({ length: Math.min(100, 150 - from) }, (_, i) => post(from + i + 1));
    const next = from + children.length < 150 ? `t3_p${from + children.length}` : null;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ kind: 'Listing', data: { after: next, children } }));
  });
  gw = await buildGateway({ env: { MAX_COLLECTION_ENTRIES: '200', PLATFORM_REDDIT_WWW: origin.base } });
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await origin?.close();
});

describe('a podcast feed is a collection of its episodes', () => {
  test('entries carry title, duration, image, date, guid and the enclosure as media', async () => {
    const res = await extract({ url: origin.url('/podcast.xml') }).expect(200);
    const data = res.body.data;
    expect(data).toMatchObject({
      content_type: 'collection',
      media: [],
      platform: 'generic',
      extract_profile: 'feed',
      title: 'Local Radio & Friends',
    });
    expect(data.collection).toEqual({ kind: 'feed', entry_count: 3 });
    expect(data.entries).toHaveLength(3);
    expect(data.entries[0]).toEqual({
      index: 1,
      url: origin.url('/episodes/1'),
      title: 'Episode 1',
      id: 'ep-1',
      duration: 3721,
      thumbnail: origin.url('/art/1.jpg'),
      upload_date: '2026-09-02',
      media: [
        {
          index: 0,
          type: 'audio',
          title: 'Episode 1',
          duration: 3721,
          thumbnail: origin.url('/art/1.jpg'),
          upload_date: '2026-09-02',
          sources: [
            {
              quality: 'original',
              url: origin.url('/audio/1.m4a'),
              stream_profile: 'audio_only',
              mime_type: 'audio/mp4',
              ext: 'm4a',
              size: 1001,
              has_audio: true,
              has_video: false,
            },
          ],
        },
      ],
    });
    expect(data.entries[1].media[0]).toMatchObject({
      type: 'video',
      sources: [{ stream_profile: 'muxed_progressive', mime_type: 'video/mp4', size: 2002 }],
    });
    // An episode without a page of its own is its audio file.
    expect(data.entries[2]).toMatchObject({ index: 3, url: origin.url('/audio/3.m4a') });
  });

  test('an enclosure is a recorded source: download streams it', async () => {
    const res = await extract({ url: origin.url('/podcast.xml') }).expect(200);
    const url = res.body.data.entries[0].media[0].sources[0].url;
    const got = await request(gw.app)
      .post('/api/v1/download')
      .send({ url, extraction_id: res.body.data.extraction_id })
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect((got.body as Buffer).equals(fs.readFileSync(media.audioOnlyM4a))).toBe(true);
    expect(got.headers['content-disposition']).toContain('Episode 1');
  });

  test('an Atom feed (a channel feed): alternate links, ids, media:thumbnail, enclosure links, dates', async () => {
    const data = (await extract({ url: origin.url('/atom.xml') }).expect(200)).body.data;
    expect(data.title).toBe('Atom channel');
    expect(data.entries[0]).toEqual({
      index: 1,
      url: origin.url('/watch/abc'),
      title: 'First video',
      id: 'yt:video:abc',
      thumbnail: origin.url('/thumb/abc.jpg'),
      upload_date: '2026-10-01',
    });
    expect(data.entries[1]).toMatchObject({
      index: 2,
      url: origin.url('/watch/def'),
      title: 'Second <b>one</b>',
      upload_date: '2026-09-30',
      media: [{ type: 'audio', sources: [{ url: origin.url('/files/def.mp3'), size: 5000 }] }],
    });
  });

  test('entries at file:, metadata or other refused addresses, or at the feed itself, are left out', async () => {
    const data = (await extract({ url: origin.url('/hostile-links.xml') }).expect(200)).body.data;
    expect(data.entries).toEqual([{ index: 1, url: origin.url('/fine'), title: 'ok' }]);
  });
});

describe('pages and cursors', () => {
  test('250 items come as two pages of 100, numbered on, and stop at MAX_COLLECTION_ENTRIES (200)', async () => {
    const first = (await extract({ url: origin.url('/big.xml') }).expect(200)).body.data;
    expect(first.entries).toHaveLength(100);
    expect(first.collection).toMatchObject({ kind: 'feed', entry_count: 250, next_cursor: expect.any(String) });
    const second = (await extract({ url: origin.url('/big.xml'), cursor: first.collection.next_cursor }).expect(200))
      .body.data;
    expect(second.entries.map((e: { index: number }) => e.index)).toEqual(
      Array.from({ length: 100 }, (_, i) => 101 + i),
    );
    expect(second.entries[0]).toMatchObject({ index: 101, title: 'Item 101' });
    // The limit is reached with items left: the listing ends there and says so.
    expect(second.collection.next_cursor).toBeUndefined();
    expect(second.collection.truncated).toBe(true);
  });

  test('a paged feed (rel="next") is followed page by page to its end', async () => {
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 5; i++) {
      const data = (await extract({ url: origin.url('/paged-1.xml'), cursor }).expect(200)).body.data;
      seen.push(...data.entries.map((e: { index: number }) => e.index));
      expect(data.entries[0].title).toBe(`Item ${i * 10 + 1}`);
      cursor = data.collection.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });

  test('an endless feed ends at MAX_COLLECTION_ENTRIES, marked truncated', async () => {
    let cursor: string | undefined;
    let pages = 0;
    let last: { entries: { index: number }[]; collection: { truncated?: boolean; next_cursor?: string } } | undefined;
    do {
      last = (await extract({ url: origin.url('/endless'), cursor }).expect(200)).body.data;
      cursor = last!.collection.next_cursor;
      pages++;
    } while (cursor && pages < 20);
    expect(pages).toBe(4); // 60 + 60 + 60 + 20
    expect(last!.entries.at(-1)!.index).toBe(200);
    expect(last!.collection.truncated).toBe(true);
  });

  test('an endless run of empty pages is refused after MAX_COLLECTION_PAGES pages', async () => {
    let cursor: string | undefined;
    let res: request.Response;
    let pages = 0;
    for (;;) {
      res = await extract({ url: origin.url('/empty-pages'), cursor });
      if (res.status !== 200) break;
      cursor = res.body.data.collection.next_cursor;
      pages++;
      if (!cursor || pages > 60) break;
    }
    expect(pages).toBe(49);
    expectError(res, 502, 'upstream_error', /past 50 pages.*endless/);
  }, 20_000);

  test('a feed whose next page is itself is refused', async () => {
    expectError(await extract({ url: origin.url('/self.xml') }), 502, 'upstream_error', /page itself/);
  });

  test('an edited cursor, a cursor for another URL, garbage and wrong types are 400 invalid_request', async () => {
    const first = (await extract({ url: origin.url('/big.xml') }).expect(200)).body.data;
    const cursor: string = first.collection.next_cursor;
    const [body, tag] = cursor.split('.');
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
    // Skip ahead or point at another document: the signature no longer matches.
    const edited = `${Buffer.from(JSON.stringify({ ...payload, s: JSON.stringify({ o: 0, d: 'http://127.0.0.1:1/other.xml' }) })).toString('base64url')}.${tag}`;
    const flipped = `${body}.${tag.startsWith('A') ? 'B' : 'A'}${tag.slice(1)}`;
    for (const bad of [edited, flipped, 'x', `${body}.`, '.'.repeat(10)]) {
      expectError(await extract({ url: origin.url('/big.xml'), cursor: bad }), 400, 'invalid_request', /cursor/);
    }
    // A genuine cursor of one URL names nothing for another (and fetches nothing).
    const before = origin.hits.get('/podcast.xml') ?? 0;
    expectError(await extract({ url: origin.url('/podcast.xml'), cursor }), 400, 'invalid_request', /cursor/);
    expect(origin.hits.get('/podcast.xml') ?? 0).toBe(before);
    for (const wrong of [42, null, {}, [], '', 'x'.repeat(5000)])
      expectError(await extract({ url: origin.url('/big.xml'), cursor: wrong }), 400, 'invalid_request');
  });

  test('surface A (/api/playground) follows the same cursors', async () => {
    const first = (
      await request(gw.app)
        .post('/api/playground')
        .send({ url: origin.url('/big.xml') })
        .expect(200)
    ).body.data;
    const second = (
      await request(gw.app)
        .post('/api/playground')
        .send({ url: origin.url('/big.xml'), cursor: first.collection.next_cursor })
        .expect(200)
    ).body.data;
    expect(second.entries[0].index).toBe(101);
  });

  test('listCollection, for collection downloads and subscriptions: every page in order, undefined for a non-collection', async () => {
    const indexes: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await gw.collections.listCollection(origin.url('/paged-1.xml'), cursor);
      expect(page).toMatchObject({
        platform: 'generic',
        collection: { kind: 'feed' },
        extraction_id: expect.any(String),
      });
      indexes.push(...page!.entries.map((e) => e.index));
      cursor = page!.collection.next_cursor;
    } while (cursor);
    expect(indexes).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(await gw.collections.listCollection(origin.url('/audio/1.m4a'))).toBeUndefined();
  });

  test('a cursor signed by another gateway (another secret) is refused', async () => {
    const other = await buildGateway({ env: { COLLECTION_CURSOR_SECRET: 'another-deployment-secret-of-32-chars!' } });
    try {
      const cursor = (
        await request(other.app)
          .post('/api/v1/extract')
          .send({ url: origin.url('/big.xml') })
          .expect(200)
      ).body.data.collection.next_cursor;
      expect(
        (
          await request(other.app)
            .post('/api/v1/extract')
            .send({ url: origin.url('/big.xml'), cursor })
            .expect(200)
        ).body.data.entries[0].index,
      ).toBe(101);
      expectError(await extract({ url: origin.url('/big.xml'), cursor }), 400, 'invalid_request', /cursor/);
    } finally {
      await other.close();
    }
  });
});

describe('platform listings and the extract cache', () => {
  test('a Reddit subreddit pages through the gateway by its own `after`, kept in the signed cursor', async () => {
    const first = (await extract({ url: 'https://www.reddit.com/r/clips/' }).expect(200)).body.data;
    expect(first).toMatchObject({
      platform: 'reddit',
      content_type: 'collection',
      title: 'r/clips',
      collection: { kind: 'channel', next_cursor: expect.any(String) },
    });
    expect(first.entries[0]).toMatchObject({
      index: 1,
      url: 'https://www.reddit.com/r/clips/comments/p1/post_1/',
      title: 'Post 1',
      duration: 1,
    });
    const second = (
      await extract({ url: 'https://www.reddit.com/r/clips/', cursor: first.collection.next_cursor }).expect(200)
    ).body.data;
    expect(second.entries.map((e: { index: number }) => e.index)).toEqual(
      Array.from({ length: 50 }, (_, i) => 101 + i),
    );
    expect(second.entries[0].title).toBe('Post 101');
    expect(second.collection.next_cursor).toBeUndefined();
    // The same cursor on the same subreddit's other spelling is another URL: refused.
    expectError(
      await extract({ url: 'https://old.reddit.com/r/clips/', cursor: first.collection.next_cursor }),
      400,
      'invalid_request',
      /cursor/,
    );
  });

  test('with EXTRACT_CACHE_SECONDS each page is cached apart, and every answer has a cursor that works', async () => {
    const cached = await buildGateway({ env: { EXTRACT_CACHE_SECONDS: '60', PLATFORM_REDDIT_WWW: origin.base } });
    try {
      const url = origin.url('/big.xml?cache=1');
      const ask = (cursor?: string) => request(cached.app).post('/api/v1/extract').send({ url, cursor }).expect(200);
      const a = await ask();
      const b = await ask();
      expect(b.headers.age).toBeDefined();
      expect(b.body.data.collection.next_cursor).toBe(a.body.data.collection.next_cursor);
      const page2 = await ask(a.body.data.collection.next_cursor);
      expect(page2.headers.age).toBeUndefined();
      expect(page2.body.data.entries[0].index).toBe(101);
      expect((await ask(b.body.data.collection.next_cursor)).body.data.entries[0].index).toBe(101);
      expect(origin.hits.get('/big.xml?cache=1')).toBe(2);
    } finally {
      await cached.close();
    }
  });
});

describe('hostile feeds are refused within their bounds', () => {
  test('a feed of 10^5 items is refused before it is parsed', async () => {
    const started = Date.now();
    expectError(await extract({ url: origin.url('/huge.xml') }), 502, 'upstream_error', /more than 10000 items/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test('elements nested 5000 deep are refused', async () => {
    expectError(await extract({ url: origin.url('/nested.xml') }), 502, 'upstream_error', /nested deeper than 32/);
  });

  test('DTD entities (a billion laughs) are refused, not expanded', async () => {
    expectError(await extract({ url: origin.url('/entities.xml') }), 502, 'upstream_error', /entities/);
  });
});
