// The proxy's window of segments fetched ahead (@reelay/egress proxy-ahead.ts), through the worker's
// job proxy and a local origin: what it buffers stays under its bound however large the segments.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Egress, SEGMENT_CAP_BYTES } from '@reelay/egress';
import { createLogger } from '@reelay/observability';
import { startOrigin, type Origin } from '@reelay/testkit';
import { startJobProxy, type JobProxy } from '../src/proxy.js';
import { credentialsOf, proxyGet, sleep } from './helpers.js';

const MiB = 1024 * 1024;
const egress = new Egress({ allowlist: ['127.0.0.1'] });
let origin: Origin;
let proxy: JobProxy;
// Near the cap, and one over it (fetched by the client's own request instead).
const sizes = [7, 7, 7, 7, 7, 9, 7, 7].map((m) => m * MiB - 1);
const segments = sizes.map((size, i) => Buffer.alloc(size, i + 1));
const fetched = new Map<number, number>();

beforeAll(async () => {
  origin = await startOrigin();
  proxy = await startJobProxy({
    egress,
    logger: createLogger({ name: 'proxy-ahead-test', level: 'silent' }),
    maxSegments: 100,
    fetchConcurrency: 4,
  });
  origin.route('/big/index.m3u8', (_req, res) => {
    const lines = [
      '#EXTM3U',
      '#EXT-X-TARGETDURATION:2',
      ...segments.flatMap((_s, i) => ['#EXTINF:2,', `s${i}.ts`]),
      '#EXT-X-ENDLIST',
    ];
    res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' }).end(lines.join('\n'));
  });
  segments.forEach((data, i) =>
    origin.route(`/big/s${i}.ts`, (_req, res) => {
      fetched.set(i, (fetched.get(i) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'video/mp2t', 'content-length': data.length }).end(data);
    }),
  );
});

afterAll(async () => {
  await proxy.close();
  await origin.close();
});

test('segments of up to the cap are served ahead, in order, and the window never holds more than concurrency × the cap', async () => {
  const session = proxy.openSession('AAAAAAAAAAAAAAAAAAAAAB', { maxBytes: 200 * MiB, maxRequests: 64 });
  const auth = credentialsOf(session.env);
  expect((await proxyGet(proxy.port, origin.url('/big/index.m3u8'), { auth })).status).toBe(200);
  const window = session.ahead!;
  expect(window.limitBytes).toBe(4 * SEGMENT_CAP_BYTES);
  for (let i = 0; i < segments.length; i++) {
    const res = await proxyGet(proxy.port, origin.url(`/big/s${i}.ts`), { auth });
    expect(res.status).toBe(200);
    expect(res.body.equals(segments[i])).toBe(true);
    await sleep(50); // a slow reader: the window fills while it waits
  }
  // It did fetch ahead (more than one segment held at once), and never past its bound.
  expect(window.peakBytes).toBeGreaterThan(2 * 7 * MiB);
  expect(window.peakBytes).toBeLessThanOrEqual(window.limitBytes);
  // The segment over the cap was tried ahead, given up at the cap, and fetched by the client itself.
  expect(fetched.get(5)).toBe(2);
  for (const i of [0, 1, 2, 3, 4, 6, 7]) expect(fetched.get(i)).toBe(1);
  expect(window.bytes).toBe(0);
  proxy.closeSession(session);
});
