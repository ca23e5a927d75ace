// Feeds built to exhaust an extract: the largest feed accepted (5 MB, ~9,000 items), 10^5 items,
// 10^5-deep nesting, an entity bomb, an endless body, a gzip bomb. Each is read or refused within a stated time,
// with the peak memory of this process in the assertion.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { endlessBody, gzipBomb, startOrigin, type Origin } from '@reelay/testkit';
import { failureOf, hostileExtract } from './helpers.js';

const RSS = 'application/rss+xml';
const GROWTH_BOUND_MB = 64;
const TIME_BOUND_MS = 5_000;

let origin: Origin;
beforeAll(async () => {
  origin = await startOrigin();
});
afterAll(async () => {
  await origin.close();
});

const feed = (items: string) =>
  `<?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Hostile</title>${items}</channel></rss>`;

describe('feeds at and past their bounds', () => {
  test('the largest feed accepted (just under 5 MB, thousands of full items) lists its first page within the bounds', async () => {
    const item = (n: number) =>
      `<item><title>Episode ${n} with a title of some length</title><link>/ep/${n}</link><guid>ep-${n}</guid><pubDate>Tue, 17 Nov 2026 08:00:00 +0000</pubDate><itunes:duration>01:02:03</itunes:duration><enclosure url="/ep/${n}.mp3" length="12345678" type="audio/mpeg"/><description>${'words '.repeat(40)}</description></item>`;
    const items: string[] = [];
    let size = 0;
    for (let n = 1; size < 5 * 1024 * 1024 - 2048; n++) {
      items.push(item(n));
      size += items[items.length - 1].length;
    }
    items.pop();
    origin.body('/large.xml', feed(items.join('')), RSS);
    const m = await hostileExtract('feed: 5 MB, first page', origin.url('/large.xml'));
    expect('value' in m.outcome && m.outcome.value.result.entries?.length).toBe(100);
    expect('value' in m.outcome && m.outcome.value.result.collection?.entry_count).toBe(items.length);
    expect(m.ms).toBeLessThan(TIME_BOUND_MS);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('10^5 items are refused before they are parsed', async () => {
    origin.body('/many.xml', feed('<item><link>/x</link></item>\n'.repeat(100_000)), RSS);
    const m = await hostileExtract('feed: 10^5 items', origin.url('/many.xml'));
    expect(failureOf(m).message).toMatch(/more than 10000 items/);
    expect(m.ms).toBeLessThan(TIME_BOUND_MS);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('elements nested 10^5 deep are refused at depth 32', async () => {
    origin.body('/deep.xml', feed(`<item>${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}</item>`), RSS);
    const m = await hostileExtract('feed: nested 10^5 deep', origin.url('/deep.xml'));
    expect(failureOf(m).message).toMatch(/nested deeper than 32/);
    expect(m.ms).toBeLessThan(TIME_BOUND_MS);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('an entity bomb (a billion laughs) is refused, never expanded', async () => {
    const lol = [
      '<!ENTITY lol0 "lol">',
      ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`),
    ].join('');
    origin.body(
      '/lol.xml',
      `<?xml version="1.0"?><!DOCTYPE rss [${lol}]><rss version="2.0"><channel><title>&lol9;</title></channel></rss>`,
      RSS,
    );
    const m = await hostileExtract('feed: billion laughs', origin.url('/lol.xml'));
    expect(failureOf(m).message).toMatch(/entities/);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('a gzip bomb (256 MiB of feed in a few hundred KB) is cut at 5 MB decoded', async () => {
    const bomb = await gzipBomb(
      Buffer.from('<?xml version="1.0"?><rss version="2.0"><channel><title>bomb</title>'),
      256 * 1024 ** 2,
      0x20,
    );
    origin.body('/bomb.xml', bomb, RSS, { 'content-encoding': 'gzip' });
    const m = await hostileExtract('feed: gzip bomb', origin.url('/bomb.xml'));
    expect(failureOf(m).message).toMatch(/larger than 5 MB/);
    expect(m.ms).toBeLessThan(TIME_BOUND_MS);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('an endless feed body is cut at the 5 MB page limit', async () => {
    origin.route('/endless.xml', (_req, res) =>
      endlessBody(res, RSS, '<?xml version="1.0"?><rss version="2.0"><channel><title>forever</title>'),
    );
    const m = await hostileExtract('feed: endless body', origin.url('/endless.xml'));
    expect(failureOf(m).message).toMatch(/larger than 5 MB/);
    expect(m.ms).toBeLessThan(TIME_BOUND_MS);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });
});
