// Hostile bodies and clients against a real gateway process: compression bombs, an endless page
// and deep nesting sent to POST /api/v1/extract, a compressed media file streamed back, and
// clients that trickle their request headers. Each asserts the answer, a time bound and the
// gateway process's peak memory (VmHWM, reset before each case).
import net from 'node:net';
import type http from 'node:http';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { endlessBody, startOrigin, type Origin } from '@reelay/testkit';
import { buildGatewayApp, startGatewayProcess, type GatewayProcess } from './process.js';

const MiB = 1024 * 1024;
/** Peak memory a case may add to the gateway process, in MiB. */
const GROWTH_BOUND_MB = 64;

let origin: Origin;
let gateway: GatewayProcess;
const open = new Set<http.ServerResponse>();
let bombs: { gzip: Buffer; br: Buffer };

/** 1 GiB of zeros compressed in one call per MiB (made here, never committed). */
function compressGiB(kind: 'gzip' | 'br'): Buffer {
  const c =
    kind === 'br'
      ? zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } })
      : zlib.createGzip({ level: 9 });
  const out: Buffer[] = [];
  c.on('data', (d: Buffer) => out.push(d));
  const zero = Buffer.alloc(MiB);
  return (async () => {
    for (let n = 0; n < 1024; n++) if (!c.write(zero)) await new Promise((r) => c.once('drain', r));
    await new Promise((r) => c.end(r));
    return Buffer.concat(out);
  })() as unknown as Buffer;
}

beforeAll(async () => {
  buildGatewayApp();
  [origin, gateway] = await Promise.all([startOrigin(), startGatewayProcess()]);
  bombs = { gzip: await compressGiB('gzip'), br: await compressGiB('br') };
}, 120_000);
afterAll(async () => {
  for (const res of open) res.destroy();
  await gateway?.stop();
  await origin?.close();
});

interface Answer {
  status: number;
  body: {
    success: boolean;
    error?: { code: string; message: string };
    data?: { media: { sources: { url: string }[] }[] };
  };
}

async function extract(url: string): Promise<Answer> {
  const res = await fetch(`${gateway.base}/api/v1/extract`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

const code = (a: Answer) => (a.body.success ? `${a.status}` : `${a.status} ${a.body.error?.code}`);

describe('POST /api/v1/extract with hostile bodies', () => {
  test.each(['gzip', 'br'] as const)(
    'a page that is a %s bomb (1 GiB decoded) answers 502 upstream_error "larger than 5 MB"',
    async (kind) => {
      origin.body(`/bomb-${kind}.html`, bombs[kind], 'text/html', { 'content-encoding': kind });
      const m = await gateway.measure(
        `extract: ${kind} bomb page`,
        () => extract(origin.url(`/bomb-${kind}.html`)),
        code,
      );
      expect('value' in m.outcome && m.outcome.value).toEqual({
        status: 502,
        body: { success: false, error: { code: 'upstream_error', message: 'The page is larger than 5 MB.' } },
      });
      expect(m.ms).toBeLessThan(10_000);
      expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
    },
  );

  test.each(['gzip', 'br'] as const)(
    'a %s bomb answering the manifest a page links to answers 502 upstream_error "larger than 5 MB"',
    async (kind) => {
      origin.body(`/bomb-${kind}.m3u8`, bombs[kind], 'application/vnd.apple.mpegurl', { 'content-encoding': kind });
      origin.body(
        `/links-${kind}.html`,
        `<!doctype html><html><body><video src="/bomb-${kind}.m3u8"></video></body></html>`,
        'text/html',
      );
      const m = await gateway.measure(
        `extract: ${kind} bomb manifest`,
        () => extract(origin.url(`/links-${kind}.html`)),
        code,
      );
      expect('value' in m.outcome && m.outcome.value).toEqual({
        status: 502,
        body: {
          success: false,
          error: { code: 'upstream_error', message: "The origin's response is larger than 5 MB." },
        },
      });
      expect(m.ms).toBeLessThan(10_000);
      expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
    },
  );

  test('an endless chunked page answers 502 upstream_error "larger than 5 MB"', async () => {
    origin.route('/endless.html', (_req, res) => {
      open.add(res);
      endlessBody(res, 'text/html');
    });
    const m = await gateway.measure('extract: endless chunked page', () => extract(origin.url('/endless.html')), code);
    expect('value' in m.outcome && m.outcome.value).toEqual({
      status: 502,
      body: { success: false, error: { code: 'upstream_error', message: 'The page is larger than 5 MB.' } },
    });
    expect(m.ms).toBeLessThan(10_000);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('a page of 200,000 nested elements answers 200 with its video', async () => {
    const n = 200_000;
    origin.body(
      '/deep.html',
      `<!doctype html><html><body>${'<div>'.repeat(n)}<video src="/deep.mp4"></video>${'</div>'.repeat(n)}</body></html>`,
      'text/html',
    );
    const m = await gateway.measure('extract: 2*10^5 nested elements', () => extract(origin.url('/deep.html')), code);
    expect('value' in m.outcome && m.outcome.value.status).toBe(200);
    expect('value' in m.outcome && m.outcome.value.body.data?.media[0].sources[0].url).toBe(origin.url('/deep.mp4'));
    expect(m.ms).toBeLessThan(10_000);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });

  test('a playlist of 380,000 segments (all 5 MB can hold) answers 502 upstream_error naming the limit', async () => {
    origin.body(
      '/380k.m3u8',
      `#EXTM3U\n#EXT-X-TARGETDURATION:1\n${'#EXTINF:1,\ns\n'.repeat(380_000)}#EXT-X-ENDLIST\n`,
      'application/vnd.apple.mpegurl',
    );
    const m = await gateway.measure(
      'extract: 3.8*10^5-segment playlist',
      () => extract(origin.url('/380k.m3u8')),
      code,
    );
    expect('value' in m.outcome && m.outcome.value.body.error).toEqual({
      code: 'upstream_error',
      message: 'The HLS playlist names more than 20000 segments, the most this service accepts.',
    });
    expect(m.ms).toBeLessThan(10_000);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });
});

describe('request bodies', () => {
  test.each(['gzip', 'br'] as const)(
    'a %s bomb sent as the request body answers 413 payload_too_large, counted decoded',
    async (kind) => {
      const m = await gateway.measure(
        `request body: ${kind} bomb`,
        async () => {
          const res = await fetch(`${gateway.base}/api/v1/extract`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-encoding': kind },
            body: bombs[kind],
          });
          return { status: res.status, body: (await res.json()) as Answer['body'] };
        },
        code,
      );
      expect('value' in m.outcome && m.outcome.value).toEqual({
        status: 413,
        body: {
          success: false,
          error: { code: 'payload_too_large', message: 'The request body is larger than 16 KiB.' },
        },
      });
      expect(m.ms).toBeLessThan(10_000);
      expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
    },
  );
});

describe('direct streams', () => {
  test('a media file the origin gzips anyway is passed on as sent, never inflated', async () => {
    origin.body('/zeros.mp4', bombs.gzip, 'video/mp4', { 'content-encoding': 'gzip' });
    const extracted = await extract(origin.url('/zeros.mp4'));
    expect(extracted.status).toBe(200);
    const source = extracted.body.data!.media[0].sources[0].url;
    const m = await gateway.measure(
      'download: gzip-encoded media stream',
      async () => {
        const res = await fetch(`${gateway.base}/api/v1/download`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url: source }),
        });
        // Counted raw: fetch would inflate a declared gzip, so the gateway must not declare one it never decoded.
        expect(res.headers.get('content-encoding')).toBeNull();
        return { status: res.status, bytes: (await res.arrayBuffer()).byteLength };
      },
      (r) => `${r.status} ${r.bytes} bytes`,
    );
    expect('value' in m.outcome && m.outcome.value).toEqual({ status: 200, bytes: bombs.gzip.length });
    expect(m.ms).toBeLessThan(10_000);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });
});

describe('direct streams under MAX_MEDIA_BYTES', () => {
  let small: GatewayProcess;
  beforeAll(async () => {
    small = await startGatewayProcess({ MAX_MEDIA_BYTES: String(256 * 1024) });
  }, 30_000);
  afterAll(async () => {
    await small?.stop();
  });

  test('a gzip-encoded stream without a length is cut at the limit, counted in the bytes it sends', async () => {
    origin.route('/chunked-zeros.mp4', (_req, res) => {
      open.add(res);
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-encoding': 'gzip' });
      res.end(bombs.gzip);
    });
    const extracted = await fetch(`${small.base}/api/v1/extract`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: origin.url('/chunked-zeros.mp4') }),
    });
    const source = ((await extracted.json()) as Answer['body']).data!.media[0].sources[0].url;
    const m = await small.measure(
      'download: encoded stream over MAX_MEDIA_BYTES',
      async () => {
        const res = await fetch(`${small.base}/api/v1/download`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url: source }),
        });
        let bytes = 0;
        // Headers are out when the limit is passed: the honest signal is a cut connection.
        const cut = await (async () => {
          for await (const chunk of res.body!) bytes += (chunk as Uint8Array).byteLength;
        })().then(
          () => false,
          () => true,
        );
        return { status: res.status, bytes, cut };
      },
      (r) => `${r.status} ${r.bytes} bytes${r.cut ? ', cut' : ''}`,
    );
    const r = 'value' in m.outcome ? m.outcome.value : undefined;
    expect(r).toMatchObject({ status: 200, cut: true });
    expect(r!.bytes).toBeLessThanOrEqual(256 * 1024);
    expect(m.ms).toBeLessThan(10_000);
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  });
});

describe('slow clients', () => {
  /** Opens a connection that sends a request line, then one header byte a second; resolves with what the gateway answered and when. */
  function slowloris(): Promise<{ ms: number; answer: string }> {
    return new Promise((resolve) => {
      const started = Date.now();
      const socket = net.connect(Number(new URL(gateway.base).port), '127.0.0.1');
      let answer = '';
      socket.write('POST /api/v1/extract HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const tick = setInterval(() => socket.writable && socket.write('X'), 1000);
      socket.on('data', (d) => (answer += d.toString('utf8')));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearInterval(tick);
        resolve({ ms: Date.now() - started, answer });
      });
    });
  }

  test('clients trickling their request headers are cut at the 20 s headers timeout with 408 request_timeout', async () => {
    const m = await gateway.measure(
      'slowloris: 50 connections trickling headers',
      () => Promise.all(Array.from({ length: 50 }, slowloris)),
      (all) => all[0].answer.split('\r\n')[0],
    );
    const all = 'value' in m.outcome ? m.outcome.value : [];
    expect(all).toHaveLength(50);
    for (const { ms, answer } of all) {
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toContain('"code":"request_timeout"');
      expect(ms).toBeGreaterThanOrEqual(19_000);
      expect(ms).toBeLessThan(23_000);
    }
    expect(m.growthMb).toBeLessThan(GROWTH_BOUND_MB);
  }, 60_000);
});
