// Platform collections against recorded-shape API answers served locally (API bases overridden as for
// the single-item extractors): PeerTube playlists, channels and accounts; Mastodon and Bluesky
// profiles (posts with video); Reddit subreddit and user listings; Dailymotion playlists and users.
// Each is followed page to page by its own paging (start, max_id, cursor, after, page), and a page
// state it did not write is refused.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Egress } from '@reelay/egress';
import { startOrigin, type Origin } from '@reelay/testkit';
import { createRegistry, type Extraction, type PageRef } from '../../src/index.js';
import { failure, fixture, fixtureJson, serveJson } from './public-api-fixtures.js';

let origin: Origin;
let blog: Origin;
let endpoints: Record<string, string>;
const egress = new Egress({ allowlist: ['127.0.0.1'] });
const registry = createRegistry();

function extract(url: string, page?: PageRef): Promise<Extraction> {
  return registry.extract(new URL(url), { egress, endpoints, page });
}

/** Every page of a collection, following `next`, at most `max` pages. */
async function allPages(url: string, max = 10): Promise<Extraction[]> {
  const pages: Extraction[] = [];
  let page: PageRef | undefined;
  do {
    const got = await extract(url, page);
    pages.push(got);
    page = got.next;
  } while (page && pages.length < max);
  return pages;
}

function query(req: IncomingMessage): URLSearchParams {
  return new URL(req.url ?? '/', 'http://x').searchParams;
}

function json(res: ServerResponse, body: unknown, status = 200): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(text);
}

const seen: string[] = [];

beforeAll(async () => {
  origin = await startOrigin();
  endpoints = { bluesky_api: origin.base, reddit_www: origin.base, dailymotion_api: origin.base };
  const record = (req: IncomingMessage) => void seen.push(req.url ?? '');

  // PeerTube
  serveJson(origin, '/api/v1/video-playlists/eYqdLmXvkcGC1b2Xc3d4eF', { fixture: 'peertube/playlist.json' });
  origin.route('/api/v1/video-playlists/eYqdLmXvkcGC1b2Xc3d4eF/videos', (req, res) => {
    record(req);
    json(res, fixture(origin, 'peertube/playlist-videos.json'));
  });
  serveJson(origin, '/api/v1/video-channels/talks', { fixture: 'peertube/channel.json' });
  const template = fixtureJson<{ data: { video: Record<string, unknown> }[] }>(origin, 'peertube/playlist-videos.json')
    .data[0].video;
  origin.route('/api/v1/video-channels/talks/videos', (req, res) => {
    record(req);
    const start = Number(query(req).get('start'));
    const count = Math.min(Number(query(req).get('count')), 150 - start);
    const data = Array.from({ length: Math.max(0, count) }, (_, i) => ({
      ...template,
      url: undefined,
      uuid: `00000000-0000-4000-8000-${String(start + i).padStart(12, '0')}`,
      shortUUID: undefined,
      name: `Talk ${start + i + 1}`,
    }));
    json(res, { total: 150, data });
  });
  origin.route('/api/v1/accounts/nobody/videos', (_req, res) =>
    json(
      res,
      {
        type: 'https://docs.joinpeertube.org/api-rest-reference.html#section/Errors/account_not_found',
        detail: 'Account not found',
        status: 404,
      },
      404,
    ),
  );
  serveJson(origin, '/api/v1/accounts/nobody', '{"detail":"Account not found","status":404}', 404);

  // Mastodon
  origin.route('/api/v1/accounts/lookup', (req, res) => {
    const acct = query(req).get('acct');
    if (acct === 'carol') return json(res, fixture(origin, 'mastodon/lookup.json'));
    if (acct === 'busy')
      return json(res, {
        ...fixtureJson<Record<string, unknown>>(origin, 'mastodon/lookup.json'),
        id: '42',
        acct: 'busy',
        display_name: 'Busy',
      });
    json(res, { error: 'Record not found' }, 404);
  });
  serveJson(origin, '/api/v1/accounts/109301850430485021/statuses', { fixture: 'mastodon/statuses-page-1.json' });
  const video = fixtureJson<Record<string, unknown>[]>(origin, 'mastodon/statuses-page-1.json')[0];
  origin.route('/api/v1/accounts/42/statuses', (req, res) => {
    record(req);
    const maxId = query(req).get('max_id');
    const base = maxId ? Number(maxId) - 1 : 1000;
    const count = maxId ? 5 : 40;
    json(
      res,
      Array.from({ length: count }, (_, i) => ({
        ...video,
        id: String(base - i),
        url: `${origin.base}/@busy/${base - i}`,
      })),
    );
  });
  // A blog on another host, whose /@name pages are no Mastodon profiles.
  blog = await startOrigin();
  blog.body(
    '/@writer',
    `<html><head><title>A blog</title></head><body><video src="${blog.url('/clip.mp4')}"></video></body></html>`,
    'text/html',
  );
  blog.body('/api/v1/accounts/lookup', '<html>no such page</html>', 'text/html');

  // Bluesky
  origin.route('/xrpc/app.bsky.feed.getAuthorFeed', (req, res) => {
    record(req);
    const q = query(req);
    if (q.get('actor') === 'loop.example')
      return json(res, {
        ...fixtureJson<Record<string, unknown>>(origin, 'bluesky/author-feed.json'),
        cursor: 'same-cursor',
      });
    if (q.get('actor') === 'ghost.example')
      return json(res, { error: 'InvalidRequest', message: 'Profile not found' }, 400);
    if (q.get('cursor')) return json(res, { feed: [] });
    json(res, fixture(origin, 'bluesky/author-feed.json'));
  });

  // Reddit
  origin.route('/r/videos/hot.json', (req, res) => {
    record(req);
    if (query(req).get('after')) return json(res, { kind: 'Listing', data: { after: null, children: [] } });
    json(res, fixture(origin, 'reddit/listing.json'));
  });
  origin.route('/r/videos/top.json', (req, res) => {
    record(req);
    json(res, { kind: 'Listing', data: { after: null, children: [] } });
  });
  origin.route('/user/someone/submitted.json', (req, res) => {
    record(req);
    json(res, fixture(origin, 'reddit/listing.json'));
  });
  origin.route('/r/secret/hot.json', (_req, res) =>
    json(res, { reason: 'private', message: 'Forbidden', error: 403 }, 403),
  );
  origin.route(
    '/r/blocked/hot.json',
    (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>blocked</html>'),
  );

  // Dailymotion
  serveJson(origin, '/playlist/x7best/videos', { fixture: 'dailymotion/playlist-videos.json' });
  serveJson(origin, '/playlist/x7best', { fixture: 'dailymotion/playlist.json' });
  serveJson(origin, '/playlist/xnope/videos', { fixture: 'dailymotion/not-found.json' }, 404);
  serveJson(origin, '/playlist/xnope', { fixture: 'dailymotion/not-found.json' }, 404);
  serveJson(origin, '/user/goalkeeper', '{"screenname":"The Goalkeeper","videos_total":150}');
  const dm = fixtureJson<{ list: Record<string, unknown>[] }>(origin, 'dailymotion/playlist-videos.json').list[0];
  origin.route('/user/goalkeeper/videos', (req, res) => {
    record(req);
    const page = Number(query(req).get('page'));
    const n = page === 1 ? 100 : 50;
    json(res, {
      page,
      limit: 100,
      has_more: page === 1,
      list: Array.from({ length: n }, (_, i) => ({
        ...dm,
        id: `x9${page}${String(i).padStart(3, '0')}`,
        url: undefined,
        title: `Clip ${(page - 1) * 100 + i + 1}`,
      })),
    });
  });
});

afterAll(async () => {
  await origin.close();
  await blog?.close();
});

describe('PeerTube', () => {
  test("a playlist lists its videos in playlist order, skipping a deleted one, with the instance's URLs", async () => {
    const { result, next } = await extract(origin.url('/w/p/eYqdLmXvkcGC1b2Xc3d4eF'));
    expect(result).toMatchObject({
      platform: 'peertube',
      content_type: 'collection',
      title: 'Conference talks 2026',
      collection: { kind: 'playlist', entry_count: 3 },
    });
    expect(result.entries).toEqual([
      {
        index: 1,
        url: origin.url('/videos/watch/9c9de5e8-0a1e-484a-b099-e80766180a6d'),
        id: '9c9de5e8-0a1e-484a-b099-e80766180a6d',
        title: 'Opening keynote',
        duration: 2712,
        thumbnail: origin.url('/lazy-static/thumbnails/9c9de5e8.jpg'),
        upload_date: '2026-05-02',
      },
      {
        index: 2,
        url: origin.url('/w/4fGhJkLmNpQrStUvWxYz2a'),
        id: '1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d',
        title: 'Closing panel',
        duration: 3600,
        thumbnail: origin.url('/lazy-static/thumbnails/1b2c3d4e.jpg'),
        upload_date: '2026-05-03',
      },
    ]);
    expect(next).toBeUndefined();
    // The same playlist by its other URL shape.
    expect((await extract(origin.url('/videos/watch/playlist/eYqdLmXvkcGC1b2Xc3d4eF'))).result.entries).toHaveLength(2);
  });

  test('a channel of 150 videos comes as pages of 100 and 50, by start and count', async () => {
    seen.length = 0;
    const pages = await allPages(origin.url('/c/talks/videos'));
    expect(pages.map((p) => p.result.entries!.length)).toEqual([100, 50]);
    expect(pages[0].result).toMatchObject({ title: 'Talks', collection: { kind: 'channel', entry_count: 150 } });
    expect(pages[1].result.entries![0]).toMatchObject({
      index: 101,
      title: 'Talk 101',
      url: origin.url('/w/00000000-0000-4000-8000-000000000100'),
    });
    expect(seen.filter((u) => u.startsWith('/api/v1/video-channels/talks/videos'))).toEqual([
      '/api/v1/video-channels/talks/videos?start=0&count=100&sort=-publishedAt',
      '/api/v1/video-channels/talks/videos?start=100&count=100&sort=-publishedAt',
    ]);
  });

  test('an account that does not exist is content_not_found', async () => {
    const error = await failure(extract(origin.url('/a/nobody')));
    expect(error.code).toBe('content_not_found');
    expect(error.message).toBe('The PeerTube account does not exist or is not public (Account not found).');
  });
});

describe('Mastodon', () => {
  test('a profile lists its posts with video or audio (boosts too), not its pictures', async () => {
    const { result, next } = await extract(origin.url('/@carol'));
    expect(result).toMatchObject({ platform: 'mastodon', title: 'Carol Films', collection: { kind: 'profile' } });
    expect(result.entries).toEqual([
      {
        index: 1,
        url: origin.url('/@carol/113400000000000040'),
        id: '113400000000000040',
        title: 'A short film about the sea',
        duration: 12.5,
        thumbnail: origin.url('/media/sea-small.jpg'),
        upload_date: '2026-11-20',
      },
      {
        index: 2,
        url: 'https://other.example/@dan/113399999999999999',
        id: '113399999999999999',
        title: 'Boosted: a loop',
        duration: 3,
        thumbnail: 'https://files.other.example/loop.jpg',
        upload_date: '2026-11-17',
      },
    ]);
    expect(next).toBeUndefined();
  });

  test('a full page goes on by max_id, with the account id kept in the page state', async () => {
    seen.length = 0;
    const pages = await allPages(origin.url('/@busy'));
    expect(pages.map((p) => p.result.entries!.length)).toEqual([40, 5]);
    expect(pages[0].next).toMatchObject({ extractor: 'mastodon_profile', state: '42:961' });
    expect(seen).toEqual([
      '/api/v1/accounts/42/statuses?only_media=true&exclude_replies=true&limit=40',
      '/api/v1/accounts/42/statuses?only_media=true&exclude_replies=true&limit=40&max_id=961',
    ]);
    expect(
      (
        await failure(
          extract(origin.url('/@busy'), { extractor: 'mastodon_profile', state: '42:../../admin', index: 40, page: 1 }),
        )
      ).code,
    ).toBe('invalid_request');
  });

  test('a /@name page of a host that is no instance is left to the generic extractors', async () => {
    const { result } = await extract(blog.url('/@writer'));
    expect(result).toMatchObject({ content_type: 'video', extract_profile: 'html5' });
  });

  test('an unknown account is content_not_found', async () => {
    expect((await failure(extract(origin.url('/@nobody')))).code).toBe('content_not_found');
  });
});

describe('Bluesky', () => {
  test('a profile lists its posts with video (a quote with a clip too), as post URLs, paged by cursor', async () => {
    seen.length = 0;
    const pages = await allPages('https://bsky.app/profile/alice.bsky.social');
    const [first] = pages;
    expect(first.result).toMatchObject({ platform: 'bluesky', title: 'Alice', collection: { kind: 'profile' } });
    expect(first.result.entries).toEqual([
      {
        index: 1,
        url: 'https://bsky.app/profile/alice.bsky.social/post/3lbvideoone1',
        id: '3lbvideoone1',
        title: 'My first video',
        thumbnail: 'https://video.bsky.app/watch/did%3Aplc%3Az72i7hdynmk6r22z27h6tvur/bafkreivideo1/thumbnail.jpg',
        upload_date: '2026-11-01',
      },
      {
        index: 2,
        url: 'https://bsky.app/profile/alice.bsky.social/post/3lbquotevid2',
        id: '3lbquotevid2',
        title: 'Quoting with a clip',
        thumbnail: 'https://video.bsky.app/watch/x/bafkreivideo2/thumbnail.jpg',
        upload_date: '2026-10-30',
      },
    ]);
    expect(pages).toHaveLength(2);
    expect(pages[1].result.entries).toEqual([]);
    expect(seen).toEqual([
      '/xrpc/app.bsky.feed.getAuthorFeed?actor=alice.bsky.social&filter=posts_with_video&limit=100',
      `/xrpc/app.bsky.feed.getAuthorFeed?actor=alice.bsky.social&filter=posts_with_video&limit=100&cursor=${encodeURIComponent('2026-10-29T10:00:01.000Z')}`,
    ]);
  });

  test('an API whose next cursor is the one it was given is refused: the page would repeat for ever', async () => {
    const first = await extract('https://bsky.app/profile/loop.example');
    expect(first.next?.state).toBe('same-cursor');
    const err = await failure(extract('https://bsky.app/profile/loop.example', first.next));
    expect(err).toMatchObject({ code: 'upstream_error', message: expect.stringMatching(/page itself/) });
  });

  test('an unknown profile is content_not_found', async () => {
    expect((await failure(extract('https://bsky.app/profile/ghost.example'))).code).toBe('content_not_found');
  });
});

describe('Reddit', () => {
  test('a subreddit lists its posts with media (video, gallery), not its text posts, paged by after', async () => {
    seen.length = 0;
    const pages = await allPages('https://www.reddit.com/r/videos/');
    expect(pages[0].result).toMatchObject({ platform: 'reddit', title: 'r/videos', collection: { kind: 'channel' } });
    expect(pages[0].result.entries).toEqual([
      {
        index: 1,
        url: 'https://www.reddit.com/r/videos/comments/1gabc01/cat_jumps_over_a_fence/',
        id: '1gabc01',
        title: 'Cat jumps over a fence',
        duration: 31,
        thumbnail: 'https://external-preview.redd.it/p1.jpg?width=640&s=abc',
        upload_date: '2025-11-23',
      },
      {
        index: 2,
        url: 'https://www.reddit.com/r/videos/comments/1gabc03/gallery_of_the_trip/',
        id: '1gabc03',
        title: 'Gallery of the trip',
        thumbnail: 'https://b.thumbs.redditmedia.com/t3.jpg',
        upload_date: '2025-11-21',
      },
    ]);
    expect(pages).toHaveLength(2);
    expect(seen).toEqual([
      '/r/videos/hot.json?limit=100&raw_json=1',
      '/r/videos/hot.json?limit=100&raw_json=1&after=t3_1gabc03',
    ]);
  });

  test("a sorted listing keeps its sort and period; a user's posts come from /submitted", async () => {
    seen.length = 0;
    await extract('https://old.reddit.com/r/videos/top/?t=week');
    const user = await extract('https://www.reddit.com/user/someone/');
    expect(user.result).toMatchObject({ title: 'u/someone', collection: { kind: 'profile' } });
    expect(seen).toEqual([
      '/r/videos/top.json?limit=100&raw_json=1&t=week',
      '/user/someone/submitted.json?limit=100&raw_json=1',
    ]);
  });

  test('a private subreddit is content_not_found; an HTML answer is the IP block', async () => {
    expect(await failure(extract('https://www.reddit.com/r/secret'))).toMatchObject({
      code: 'content_not_found',
      message: expect.stringMatching(/private/),
    });
    expect(await failure(extract('https://www.reddit.com/r/blocked'))).toMatchObject({
      code: 'upstream_error',
      message: expect.stringMatching(/blocked/),
    });
  });

  test('a page state that is no Reddit fullname is refused before anything is asked', async () => {
    seen.length = 0;
    expect(
      (
        await failure(
          extract('https://www.reddit.com/r/videos/', {
            extractor: 'reddit_listing',
            state: 't3_x&limit=1000',
            index: 2,
            page: 1,
          }),
        )
      ).code,
    ).toBe('invalid_request');
    expect(seen).toEqual([]);
  });
});

describe('Dailymotion', () => {
  test("a playlist lists its videos with the Data API's fields", async () => {
    const { result, next } = await extract('https://www.dailymotion.com/playlist/x7best');
    expect(result).toMatchObject({
      platform: 'dailymotion',
      title: 'Best goals',
      collection: { kind: 'playlist', entry_count: 2 },
    });
    expect(result.entries![0]).toEqual({
      index: 1,
      url: 'https://www.dailymotion.com/video/x8abc12',
      id: 'x8abc12',
      title: 'Goal of the year',
      duration: 95,
      thumbnail: 'https://s1.dmcdn.net/v/x8abc12/x720',
      upload_date: '2025-10-09',
    });
    expect(next).toBeUndefined();
  });

  test("a user's videos go on by page while has_more says so", async () => {
    seen.length = 0;
    const pages = await allPages('https://www.dailymotion.com/goalkeeper');
    expect(pages.map((p) => p.result.entries!.length)).toEqual([100, 50]);
    expect(pages[0].result).toMatchObject({
      title: 'The Goalkeeper',
      collection: { kind: 'channel', entry_count: 150 },
    });
    expect(pages[1].result.entries![0]).toMatchObject({
      index: 101,
      title: 'Clip 101',
      url: 'https://www.dailymotion.com/video/x92000',
    });
    expect(seen.map((u) => new URL(u, 'http://x').searchParams.get('page'))).toEqual(['1', '2']);
  });

  test('a playlist that does not exist is content_not_found; video URLs stay with the video extractor', async () => {
    expect((await failure(extract('https://www.dailymotion.com/playlist/xnope'))).code).toBe('content_not_found');
    expect(registry.find(new URL('https://www.dailymotion.com/video/x8abc12'))?.name).toBe('dailymotion');
    expect(registry.find(new URL('https://www.dailymotion.com/search/goals'))).toBeUndefined();
  });
});
