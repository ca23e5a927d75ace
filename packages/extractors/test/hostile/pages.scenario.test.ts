// Pages built to exhaust an extract: deep nesting (HTML and JSON-LD), a 5 MB single line, a body
// that never ends, compression bombs, and an origin that trickles. Each ends with a clear answer
// within a stated time, with the peak memory of this process in the assertion.
import type http from 'node:http';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { endlessBody, startOrigin, type Origin } from '@reelay/testkit';
import { failureOf, hostileExtract } from './helpers.js';

const MiB = 1024 * 1024;
/** Peak memory an extract may add over what the process held before it, in MiB. */
const GROWTH_BOUND_MB = 96;

let origin: Origin;
let bombs: { gzip: Buffer; br: Buffer };
const open = new Set<http.ServerResponse>();

/** 1 GiB of zeros, compressed (made here, never committed): gzip ~1 MB, brotli ~1.6 KB. */
function compressGiB(kind: 'gzip' | 'br'): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const c =
      kind === 'br'
        ? zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } })
        : zlib.createGzip({ level: 9 });
    const out: Buffer[] = [];
    c.on('data', (d: Buffer) => out.push(d));
    c.on('end', () => resolve(Buffer.concat(out)));
    c.on('error', reject);
    const zero = Buffer.alloc(MiB);
    let n = 0;
    const write = () => {
      while (n < 1024) {
        n++;
        if (!c.write(zero)) return void c.once('drain', write);
      }
      c.end();
    };
    write();
  });
}

beforeAll(async () => {
  origin = await startOrigin();
  bombs = { gzip: await compressGiB('gzip'), br: await compressGiB('br') };
}, 30_000);
afterAll(async () => {
  for (const res of open) res.destroy();
  await origin.close();
});

const page = (inner: string) => `<!doctype html><html><head><title>t</title></head><body>${inner}</body></html>`;

describe('deep nesting', () => {
  test('a page of 200,000 nested elements is read to its video within the time and memory bounds', async () => {
    const n = 200_000;
    origin.body(
      '/deep.html',
      page(`${'<div>'.repeat(n)}<video src="/deep.mp4"></video>${'</div>'.repeat(n)}`),
      'text/html',
    );
    const m = await hostileExtract('html: 2*10^5 nested elements', origin.url('/deep.html'));
    expect('value' in m.outcome && m.outcome.value.result.media[0].sources[0].url).toBe(origin.url('/deep.mp4'));
    expect(m.ms).toBeLessThan(10_000);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test.each(['svg', 'video', 'script'])(
    '200,000 nested <%s> elements and as many stray end tags end within the time and memory bounds',
    async (tag) => {
      const n = 200_000;
      const path = `/deep-${tag}.html`;
      origin.body(
        path,
        page(`<video src="/first.mp4"></video>${`<${tag}>`.repeat(n)}${'</span>'.repeat(n)}`),
        'text/html',
      );
      const m = await hostileExtract(`html: 2*10^5 nested <${tag}>`, origin.url(path));
      expect('value' in m.outcome && m.outcome.value.result.media[0].sources[0].url).toBe(origin.url('/first.mp4'));
      expect(m.ms).toBeLessThan(10_000);
      expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
    },
  );

  test.each([
    ['10^5 nested arrays', (leaf: string) => `${'['.repeat(100_000)}${leaf}${']'.repeat(100_000)}`],
    ['10^5 nested @graph objects', (leaf: string) => `${'{"@graph":['.repeat(100_000)}${leaf}${']}'.repeat(100_000)}`],
    [
      '10^5 nested ListItems',
      (leaf: string) => `${'{"@type":"ListItem","item":'.repeat(100_000)}${leaf}${'}'.repeat(100_000)}`,
    ],
  ])('JSON-LD of %s is walked to a bounded depth: no stack overflow, a clear no_media_found', async (name, nest) => {
    const leaf = '{"@type":"VideoObject","contentUrl":"/buried.mp4"}';
    const path = `/jsonld-${name.replace(/\W+/g, '-')}.html`;
    origin.body(path, page(`<script type="application/ld+json">${nest(leaf)}</script>`), 'text/html');
    const m = await hostileExtract(`json-ld: ${name}`, origin.url(path));
    expect(failureOf(m).code).toBe('no_media_found');
    expect(m.ms).toBeLessThan(10_000);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('JSON-LD nested a few levels, as real pages do, is still found', async () => {
    const block =
      '{"@graph":[[{"@type":"ItemList","itemListElement":[{"@type":"ListItem","item":{"@type":"VideoObject","contentUrl":"/found.mp4"}}]}]]}';
    origin.body('/shallow.html', page(`<script type="application/ld+json">${block}</script>`), 'text/html');
    const m = await hostileExtract('json-ld: shallow', origin.url('/shallow.html'));
    expect('value' in m.outcome && m.outcome.value.result.media[0].sources[0].url).toBe(origin.url('/found.mp4'));
  });
});

describe('huge and endless bodies', () => {
  test('a 5 MB page on a single line is read to its video', async () => {
    const shell = page(`<video src="/line.mp4"></video><p>${''}</p>`);
    const filler = 'x'.repeat(5 * MiB - shell.length - 16);
    origin.body('/line.html', page(`<video src="/line.mp4"></video><p>${filler}</p>`), 'text/html');
    const m = await hostileExtract('html: 5 MB single line', origin.url('/line.html'));
    expect('value' in m.outcome && m.outcome.value.result.media[0].sources[0].url).toBe(origin.url('/line.mp4'));
    expect(m.ms).toBeLessThan(10_000);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('a page one byte over 5 MB is refused as upstream_error', async () => {
    const body = page('x'.repeat(5 * MiB));
    origin.body('/over.html', body, 'text/html');
    const err = failureOf(await hostileExtract('html: over 5 MB', origin.url('/over.html')));
    expect(err).toMatchObject({ code: 'upstream_error', message: 'The page is larger than 5 MB.' });
  });

  test('an endless chunked page is cut at 5 MB as upstream_error, within 10 s', async () => {
    origin.route('/endless.html', (_req, res) => {
      open.add(res);
      endlessBody(res, 'text/html', '<!doctype html><html><body>');
    });
    const m = await hostileExtract('html: endless chunked body', origin.url('/endless.html'));
    expect(failureOf(m)).toMatchObject({ code: 'upstream_error', message: 'The page is larger than 5 MB.' });
    expect(m.ms).toBeLessThan(10_000);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test.each(['gzip', 'br'] as const)(
    'a %s bomb (1 GiB of zeros) sent as a page despite identity is cut at 5 MB decoded',
    async (kind) => {
      origin.body(`/bomb-${kind}.html`, bombs[kind], 'text/html', { 'content-encoding': kind });
      const m = await hostileExtract(
        `page: ${kind} bomb ${Math.round(bombs[kind].length / 1024)} KiB -> 1 GiB`,
        origin.url(`/bomb-${kind}.html`),
      );
      expect(failureOf(m)).toMatchObject({ code: 'upstream_error', message: 'The page is larger than 5 MB.' });
      expect(m.ms).toBeLessThan(10_000);
      expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
    },
  );

  test.each(['gzip', 'br'] as const)(
    'a %s bomb answering a manifest a page links to is cut at 5 MB decoded',
    async (kind) => {
      origin.body(`/bomb-${kind}.m3u8`, bombs[kind], 'application/vnd.apple.mpegurl', { 'content-encoding': kind });
      origin.body(`/links-${kind}.html`, page(`<video src="/bomb-${kind}.m3u8"></video>`), 'text/html');
      const m = await hostileExtract(`manifest: ${kind} bomb`, origin.url(`/links-${kind}.html`));
      expect(failureOf(m)).toMatchObject({
        code: 'upstream_error',
        message: "The origin's response is larger than 5 MB.",
      });
      expect(m.ms).toBeLessThan(10_000);
      expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
    },
  );
});

describe('an origin that trickles', () => {
  test('response headers trickled a byte a second are cut by the 15 s response timeout as upstream_timeout', async () => {
    origin.route('/slow-headers', (req) => {
      const socket = req.socket;
      const line = 'HTTP/1.1 200 OK\r\nX-Slow: ' + 'a'.repeat(100);
      let i = 0;
      const tick = setInterval(
        () => (socket.destroyed || i >= line.length ? clearInterval(tick) : socket.write(line[i++])),
        1000,
      );
      socket.once('close', () => clearInterval(tick));
    });
    const m = await hostileExtract('origin: trickled headers', origin.url('/slow-headers'));
    expect(failureOf(m).code).toBe('upstream_timeout');
    expect(m.ms).toBeGreaterThanOrEqual(14_000);
    expect(m.ms).toBeLessThan(20_000);
  }, 30_000);

  test('a page body trickled a byte every 100 ms is cut by the 20 s deadline as upstream_timeout', async () => {
    origin.route('/slow-body.html', (_req, res) => {
      open.add(res);
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<!doctype html><html><body>' + ' '.repeat(5000));
      const tick = setInterval(() => (res.destroyed ? clearInterval(tick) : res.write(' ')), 100);
      res.once('close', () => clearInterval(tick));
    });
    const m = await hostileExtract('origin: trickled body', origin.url('/slow-body.html'));
    expect(failureOf(m).code).toBe('upstream_timeout');
    expect(m.ms).toBeGreaterThanOrEqual(19_000);
    expect(m.ms).toBeLessThan(25_000);
  }, 35_000);
});
