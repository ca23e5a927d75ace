// What an operator reads on /metrics: bad bodies labelled with their route, streams that end badly
// counted with how they ended, request duration for aborted streams, and METRICS_PUBLIC=false.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { startOrigin, type Origin } from '@reelay/testkit';
import { serveMetrics } from '../src/metrics.js';
import { buildGateway, type TestGateway } from './helpers.js';

let origin: Origin;
let gw: TestGateway;
let server: http.Server;
let base: string;

beforeAll(async () => {
  origin = await startOrigin();
  // Sends half of what it promised, then cuts the connection: an origin failing mid-stream.
  origin.route('/media/cut.mp4', (_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': '200000' });
    res.write(Buffer.alloc(100_000, 1), () => setTimeout(() => res.destroy(), 50));
  });
  origin.route('/media/endless.mp4', (_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4' });
    const timer = setInterval(() => res.write(Buffer.alloc(64 * 1024, 1)), 5);
    res.on('close', () => clearInterval(timer));
  });
  gw = await buildGateway();
  server = gw.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await gw?.close();
  await origin?.close();
});

/** The value of one series, matching the given labels (others ignored); 0 when absent. */
async function value(name: string, labels: Record<string, string>): Promise<number> {
  const text = await gw.metrics.registry.metrics();
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a malformed JSON body on a real route is counted under that route, not as unmatched', async () => {
  const before = await value('reelay_http_requests_total', { route: '/api/v1/extract', status: '400' });
  const unmatched = await value('reelay_http_requests_total', { route: 'unmatched' });
  const res = await request(gw.app).post('/api/v1/extract').set('content-type', 'application/json').send('{"url": ');
  expect(res.status).toBe(400);
  expect(res.body.success).toBe(false);
  expect(await value('reelay_http_requests_total', { method: 'POST', route: '/api/v1/extract', status: '400' })).toBe(
    before + 1,
  );
  expect(await value('reelay_http_requests_total', { route: 'unmatched' })).toBe(unmatched);
  // A template with a parameter matches too; a path that is no route stays unmatched.
  expect(gw.metrics.routeOf('GET', '/api/v1/jobs/abc123')).toBe('/api/v1/jobs/:id');
  expect(gw.metrics.routeOf('GET', '/api/v1/jobs/abc/artifact')).toBe('/api/v1/jobs/:id/artifact');
  expect(gw.metrics.routeOf('GET', '/api/v1/nothing-here')).toBe('unmatched');
  expect(gw.metrics.routeOf('DELETE', '/api/v1/extract')).toBe('unmatched');
});

test('a direct stream the origin cuts short is counted as origin_error, with its bytes', async () => {
  await request(gw.app)
    .post('/api/v1/extract')
    .send({ url: origin.url('/media/cut.mp4') })
    .expect(200);
  const before = await value('reelay_streams_total', { outcome: 'origin_error' });
  const bytesBefore = await value('reelay_stream_bytes_total', {});
  await new Promise<void>((resolve) => {
    const req = http.request(
      `${base}/api/v1/download`,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('close', () => resolve());
      },
    );
    req.on('error', () => resolve());
    req.end(JSON.stringify({ url: origin.url('/media/cut.mp4') }));
  });
  await until(
    async () => (await value('reelay_streams_total', { outcome: 'origin_error' })) === before + 1,
    'the cut stream to be counted',
  );
  expect(await value('reelay_stream_bytes_total', {})).toBeGreaterThanOrEqual(bytesBefore + 100_000);
  expect(await value('reelay_active_streams', {})).toBe(0);
});

test('a client that abandons a stream is counted as client_aborted, and its request still appears in the request metrics', async () => {
  await request(gw.app)
    .post('/api/v1/extract')
    .send({ url: origin.url('/media/endless.mp4') })
    .expect(200);
  const before = await value('reelay_streams_total', { outcome: 'client_aborted' });
  const requests = await value('reelay_http_requests_total', { route: '/api/v1/download' });
  const durations = await value('reelay_http_request_duration_seconds_count', { route: '/api/v1/download' });
  await new Promise<void>((resolve) => {
    const req = http.request(
      `${base}/api/v1/download`,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      },
    );
    req.on('error', () => resolve());
    req.end(JSON.stringify({ url: origin.url('/media/endless.mp4') }));
  });
  await until(
    async () => (await value('reelay_streams_total', { outcome: 'client_aborted' })) === before + 1,
    'the abandoned stream to be counted',
  );
  expect(await value('reelay_http_requests_total', { route: '/api/v1/download' })).toBe(requests + 1);
  expect(await value('reelay_http_request_duration_seconds_count', { route: '/api/v1/download' })).toBe(durations + 1);
});

test('with METRICS_PUBLIC=false the public port answers 404 on /metrics and the metrics port serves them', async () => {
  const hidden = await buildGateway({ env: { METRICS_PUBLIC: 'false' } });
  const metricsServer = await serveMetrics(hidden.metrics.registry, '127.0.0.1', 0);
  try {
    const res = await request(hidden.app).get('/metrics');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    await request(hidden.app).get('/healthz').expect(200);
    const port = (metricsServer.address() as AddressInfo).port;
    const scraped = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('reelay_http_requests_total');
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
  } finally {
    metricsServer.close();
    await hidden.close();
  }
});
