// The yt-dlp bridge in the registry: real Debian yt-dlp on local pages (JW Player and video.js pages
// the generic extractors cannot read, YTDLP_HOSTS, the network restriction), and fake yt-dlp scripts
// for what the real one cannot show on demand (its command line and environment, the time limit,
// the concurrency limit, failures).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { CookieFile, Egress } from '@reelay/egress';
import { startOrigin, testMedia, type Origin } from '@reelay/testkit';
import { createRegistry, type ExtractorRegistry, type YtdlpOptions } from '../src/index.js';
import type { Extraction } from '../src/types.js';
import { alive, fakeYtdlp, realYtdlp, removeFakes, startTrap } from './ytdlp-helpers.js';

const ytdlp = await realYtdlp();
const describeReal = ytdlp ? describe : describe.skip;

const egress = new Egress({ allowlist: ['127.0.0.1'], responseTimeoutMs: 3_000, idleTimeoutMs: 3_000 });
let origin: Origin;
let trap: Awaited<ReturnType<typeof startTrap>>;
const registries: ExtractorRegistry[] = [];

function registry(options: Partial<YtdlpOptions> = {}): ExtractorRegistry {
  const r = createRegistry({
    ytdlp: { binary: ytdlp, hosts: [], egress, baseEnv: { PATH: process.env.PATH }, ...options },
  });
  registries.push(r);
  return r;
}

async function extract(
  r: ExtractorRegistry,
  url: string,
  log?: (msg: string, fields?: Record<string, unknown>) => void,
): Promise<Extraction> {
  return r.extract(new URL(url), { egress, endpoints: {}, log });
}

async function failure(promise: Promise<unknown>): Promise<ReelayError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ReelayError)) throw new Error(`expected a ReelayError, got ${String(err)}`);
  return err;
}

const jwPage = (file: string, extraHead = '') =>
  `<html><head><title>JW page</title>${extraHead}</head><body><div id="player"></div>` +
  `<script>jwplayer("player").setup({file: "${file}", image: "/poster.jpg", title: "A JW clip"});</script></body></html>`;

beforeAll(async () => {
  const media = await testMedia();
  origin = await startOrigin();
  trap = await startTrap('127.0.0.2');
  origin.file('/media/clip.mp4', media.muxedMp4, 'video/mp4');
  origin.body('/jw.html', jwPage('/media/clip.mp4'), 'text/html');
  origin.body(
    '/jw-with-picture.html',
    jwPage('/media/clip.mp4', '<meta property="og:image" content="/poster.jpg">'),
    'text/html',
  );
  origin.body(
    '/videojs.html',
    `<html><head><title>video.js page</title></head><body><video id="v" class="video-js"></video><script>var player = videojs('v'); player.src({src: "/media/clip.mp4", type: "video/mp4"});</script></body></html>`,
    'text/html',
  );
  origin.body(
    '/og.html',
    '<html><head><title>OG</title><meta property="og:title" content="An OG clip"><meta property="og:video" content="/media/clip.mp4"><meta property="og:video:type" content="video/mp4"></head><body></body></html>',
    'text/html',
  );
  origin.body('/words.txt', 'just words', 'text/plain');
  origin.body('/nothing.html', '<html><head><title>Nothing</title></head><body>words</body></html>', 'text/html');
  origin.body('/blocked-hls.html', jwPage(`http://127.0.0.2:${trap.port}/master.m3u8`), 'text/html');
  origin.body('/blocked-https.html', jwPage(`https://127.0.0.2:${trap.port}/master.m3u8`), 'text/html');
  origin.body(
    '/blocked-with-picture.html',
    jwPage(`http://127.0.0.2:${trap.port}/master.m3u8`, '<meta property="og:image" content="/poster.jpg">'),
    'text/html',
  );
  origin.body('/blocked-file.html', jwPage(`http://127.0.0.2:${trap.port}/clip.mp4`), 'text/html');
});

afterAll(async () => {
  for (const r of registries) await r.close();
  removeFakes();
  await origin.close();
  await trap.close();
});

describeReal('pages only yt-dlp can read', () => {
  test.each([
    ['a JW Player setup() script', '/jw.html', 'A JW clip'],
    ['a video.js src() call', '/videojs.html', 'video.js page'],
  ])('a page with %s, which the generic extractors cannot read, is extracted by yt-dlp', async (_what, page, title) => {
    const without = await failure(extract(createRegistry(), origin.url(page)));
    expect(without.code).toBe('no_media_found');

    const { result, records } = await extract(registry(), origin.url(page));
    expect(result).toMatchObject({
      url: origin.url(page),
      platform: 'generic',
      extract_profile: 'ytdlp',
      content_type: 'video',
      title,
    });
    expect(result.media).toHaveLength(1);
    expect(result.media[0].sources).toEqual([
      expect.objectContaining({
        url: origin.url('/media/clip.mp4'),
        stream_profile: 'muxed_progressive',
        ext: 'mp4',
        mime_type: 'video/mp4',
      }),
    ]);
    // What yt-dlp would send to download it goes with the source.
    expect(records[0].headers?.['User-Agent']).toMatch(/Mozilla/);
  });

  test('a JW page whose only meta tag is a picture gives the video, not the picture', async () => {
    const { result } = await extract(registry(), origin.url('/jw-with-picture.html'));
    expect(result).toMatchObject({ extract_profile: 'ytdlp', content_type: 'video' });
    expect(result.media[0].sources[0].url).toBe(origin.url('/media/clip.mp4'));
  });

  test('when yt-dlp finds nothing better on such a page, the picture is the answer', async () => {
    const logged: unknown[] = [];
    const { result } = await extract(registry(), origin.url('/blocked-with-picture.html'), (msg, fields) =>
      logged.push({ msg, fields }),
    );
    expect(result).toMatchObject({ extract_profile: 'opengraph', content_type: 'image' });
    expect(logged).toContainEqual({
      msg: 'the fallback found nothing more on a scripted page',
      fields: { extractor: 'ytdlp', code: 'url_blocked' },
    });
    expect(trap.connections).toBe(0);
  });

  test('a page without media is still no_media_found after yt-dlp had its look', async () => {
    const logged: string[] = [];
    const err = await failure(extract(registry(), origin.url('/nothing.html'), (msg) => logged.push(msg)));
    expect(err.code).toBe('no_media_found');
    expect(logged).toContain('the generic extractors found no media; asking the fallback');
    // Not "yt-dlp found no media": yt-dlp was the last of several places looked.
    expect(err.message).toBe(
      'No video, audio or image found at this URL: looked for a media file, OpenGraph, Twitter card and JSON-LD tags, HTML5 media elements, HLS/DASH manifests, and yt-dlp.',
    );
  });

  test('a file that is no media stays no_media_found: yt-dlp\'s "could be a direct link" guess is not taken', async () => {
    const err = await failure(extract(registry(), origin.url('/words.txt')));
    expect(err.code).toBe('no_media_found');
    expect(err.message).toMatch(/^No video, audio or image found at this URL: .*, and yt-dlp\.$/);
  });

  test('a host on YTDLP_HOSTS goes straight to yt-dlp, even when the page has og:video', async () => {
    expect((await extract(registry(), origin.url('/og.html'))).result.extract_profile).toBe('opengraph');
    const listed = registry({ hosts: ['127.0.0.1'] });
    expect(listed.platformOf(new URL(origin.url('/og.html')))).toBe('ytdlp');
    const { result } = await extract(listed, origin.url('/og.html'));
    expect(result).toMatchObject({ extract_profile: 'ytdlp', platform: 'generic' });
    expect(result.media[0].sources[0].url).toBe(origin.url('/media/clip.mp4'));
  });
});

describeReal('yt-dlp reaches only what egress allows', () => {
  test.each([
    ['an HLS manifest on a blocked address (plain http through the proxy)', '/blocked-hls.html'],
    ['an https manifest on a blocked address (a CONNECT tunnel)', '/blocked-https.html'],
    ['a media file on a blocked address (never fetched, but not offered)', '/blocked-file.html'],
  ])(
    'a page pointing at %s fails cleanly with url_blocked, and the address sees no connection',
    async (_what, page) => {
      const err = await failure(extract(registry(), origin.url(page)));
      expect([err.code, err.status]).toEqual(['url_blocked', 403]);
      expect(trap.connections).toBe(0);
    },
  );

  test('with a strict egress yt-dlp cannot reach even the page: its requests go through the guard, not around it', async () => {
    const strict = new Egress();
    const r = createRegistry({ ytdlp: { binary: ytdlp, hosts: ['localhost'], egress: strict } });
    registries.push(r);
    const before = origin.hits.get('/jw.html') ?? 0;
    const err = await failure(
      r.extract(new URL(`http://localhost:${origin.port}/jw.html`), { egress: strict, endpoints: {} }),
    );
    expect(err.code).toBe('url_blocked');
    expect(err.message).toMatch(/localhost \(127\.0\.0\.1\).*loopback/);
    expect(origin.hits.get('/jw.html') ?? 0).toBe(before);
  });
});

describe('running yt-dlp (fake scripts)', () => {
  const answer = (url: string) =>
    `{"extractor_key":"Generic","title":"Fake","url":"${url}","ext":"mp4","protocol":"http"}`;

  test('a URL at a blocked address is refused before yt-dlp runs', async () => {
    const fake = fakeYtdlp('touch "$DIR/ran"');
    const r = registry({ binary: fake.binary, hosts: ['127.0.0.2'] });
    const err = await failure(extract(r, `http://127.0.0.2:${trap.port}/watch`));
    expect(err.code).toBe('url_blocked');
    expect(fs.existsSync(path.join(fake.dir, 'ran'))).toBe(false);
    expect(trap.connections).toBe(0);
  });

  test('yt-dlp gets the URL after --, the session proxy, and an environment without proxy variables', async () => {
    const fake = fakeYtdlp(
      `for a in "$@"; do echo "$a"; done > "$DIR/args"\nenv > "$DIR/env"\necho '${answer(origin.url('/media/clip.mp4'))}'`,
    );
    const r = registry({
      binary: fake.binary,
      hosts: ['127.0.0.1'],
      baseEnv: {
        PATH: '/usr/bin:/bin',
        HTTP_PROXY: 'http://bypass:1',
        https_proxy: 'x',
        ALL_PROXY: 'x',
        NO_PROXY: '*',
        no_proxy: '*',
        REDIS_URL: 'redis://:secret@x',
      },
    });
    const url = `${origin.url('/watch')}?v=-x&--exec=touch`;
    const { result } = await extract(r, url);
    expect(result).toMatchObject({ extract_profile: 'ytdlp', title: 'Fake' });
    const args = fs.readFileSync(path.join(fake.dir, 'args'), 'utf8').trimEnd().split('\n');
    expect(args.slice(-2)).toEqual(['--', url]);
    expect(args[args.indexOf('--proxy') + 1]).toMatch(/^http:\/\/[0-9a-f]{24}:[0-9a-f]{48}@127\.0\.0\.1:\d+$/);
    const env = fs.readFileSync(path.join(fake.dir, 'env'), 'utf8');
    expect(env).not.toMatch(/proxy=|REDIS_URL/i);
  });

  test('COOKIES_FILE reaches yt-dlp as --cookies on a private copy, removed when the run ends', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-ytdlp-cookies-')), 'cookies.txt');
    fs.writeFileSync(file, '# Netscape HTTP Cookie File\n.site.example\tTRUE\t/\tTRUE\t0\tsid\tabc\n');
    // The fake keeps what it was given and writes into the file, as yt-dlp saves its cookies back.
    const fake = fakeYtdlp(
      `for a in "$@"; do echo "$a"; done > "$DIR/args"\nwhile [ $# -gt 0 ] && [ "$1" != "--cookies" ]; do shift; done\ncp "$2" "$DIR/seen"\necho 'written by yt-dlp' >> "$2"\necho '${answer(origin.url('/media/clip.mp4'))}'`,
    );
    const r = registry({ binary: fake.binary, hosts: ['127.0.0.1'], cookies: new CookieFile(file) });
    await extract(r, origin.url('/watch'));
    const args = fs.readFileSync(path.join(fake.dir, 'args'), 'utf8').trimEnd().split('\n');
    const copy = args[args.indexOf('--cookies') + 1];
    expect(copy).not.toBe(file);
    expect(args.indexOf('--cookies')).toBeLessThan(args.indexOf('--'));
    expect(fs.readFileSync(path.join(fake.dir, 'seen'), 'utf8')).toBe(fs.readFileSync(file, 'utf8'));
    expect(fs.existsSync(copy)).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('written by yt-dlp');
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  test('a run past the time limit is killed: upstream_timeout, and the process is gone', async () => {
    const fake = fakeYtdlp('echo $$ > "$DIR/pid"\nexec sleep 30');
    const r = registry({ binary: fake.binary, hosts: ['127.0.0.1'], timeoutMs: 500 });
    const started = Date.now();
    const err = await failure(extract(r, origin.url('/watch')));
    expect([err.code, err.status]).toEqual(['upstream_timeout', 504]);
    expect(Date.now() - started).toBeLessThan(5_000);
    const pid = Number(fs.readFileSync(path.join(fake.dir, 'pid'), 'utf8'));
    expect(alive(pid)).toBe(false);
  });

  test('at most `concurrency` runs at once; a bounded number wait, and beyond that 503', async () => {
    const fake = fakeYtdlp(
      `echo "$(date +%s%N) 1" >> "$DIR/events"\nsleep 0.4\necho "$(date +%s%N) -1" >> "$DIR/events"\necho '${answer(origin.url('/media/clip.mp4'))}'`,
    );
    const r = registry({ binary: fake.binary, hosts: ['127.0.0.1'], concurrency: 2, maxWaiting: 3 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => extract(r, origin.url(`/watch?n=${i}`))),
    );
    const refused = outcomes
      .filter((o) => o.status === 'rejected')
      .map((o) => (o as PromiseRejectedResult).reason as ReelayError);
    expect(refused.map((e) => [e.code, e.status])).toEqual([['service_unavailable', 503]]);
    const events = fs
      .readFileSync(path.join(fake.dir, 'events'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ').map(BigInt))
      .sort((a, b) => (a[0] < b[0] ? -1 : 1));
    let running = 0;
    let most = 0;
    for (const [, delta] of events) most = Math.max(most, (running += Number(delta)));
    expect({ runs: events.length / 2, most }).toEqual({ runs: 5, most: 2 });
  });

  test("yt-dlp's failure reaches the client and the log as one short line, without its URLs", async () => {
    const fake = fakeYtdlp(
      `echo "[generic] Extracting URL: http://site.example/watch?token=SECRET" >&2\necho "ERROR: [generic] watch: Unable to download webpage: HTTP Error 503: Service Unavailable (http://site.example/watch?token=SECRET)" >&2\nexit 1`,
    );
    const r = registry({ binary: fake.binary, hosts: ['127.0.0.1'] });
    const logged: unknown[] = [];
    const err = await failure(extract(r, origin.url('/watch'), (msg, fields) => logged.push({ msg, fields })));
    expect([err.code, err.message]).toEqual([
      'upstream_error',
      'yt-dlp could not extract this URL: [generic] watch: Unable to download webpage: HTTP Error 503: Service Unavailable (<url>)',
    ]);
    expect(JSON.stringify(logged)).not.toContain('SECRET');
    expect(logged).toContainEqual({
      msg: 'yt-dlp failed',
      fields: {
        exit: 1,
        error: '[generic] watch: Unable to download webpage: HTTP Error 503: Service Unavailable (<url>)',
      },
    });
  });

  test('an answer that is not JSON is an upstream error', async () => {
    const r = registry({ binary: fakeYtdlp('echo "not json"').binary, hosts: ['127.0.0.1'] });
    expect((await failure(extract(r, origin.url('/watch')))).code).toBe('upstream_error');
  });
});

describe('without yt-dlp', () => {
  test('a YTDLP_HOSTS URL answers no_media_found saying it needs yt-dlp and how to enable it', async () => {
    const r = registry({ binary: undefined, hosts: ['127.0.0.1'] });
    const err = await failure(extract(r, origin.url('/og.html')));
    expect([err.code, err.status]).toEqual(['no_media_found', 422]);
    expect(err.message).toMatch(/needs yt-dlp.*install yt-dlp or set YTDLP_PATH/);
  });

  test('other URLs work as before, and what the generic extractors cannot read stays no_media_found', async () => {
    const r = registry({ binary: undefined, hosts: ['youtube.com'] });
    expect((await extract(r, origin.url('/og.html'))).result.extract_profile).toBe('opengraph');
    const err = await failure(extract(r, origin.url('/jw.html')));
    expect(err.code).toBe('no_media_found');
    expect(err.message).not.toMatch(/yt-dlp/); // the generic path's own answer: yt-dlp was never asked
  });
});
