// Feeds built to exhaust an extract, as the extract meets them through the guarded fetch: the
// largest feed accepted (5 MB, ~9,000 items), an endless body, a gzip bomb. Each is read or refused
// within a stated time, with the peak memory of this process in the assertion. The reader's own
// hostile inputs (10^5 items, 10^5-deep nesting, an entity bomb) are @reelay/manifests'.
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
