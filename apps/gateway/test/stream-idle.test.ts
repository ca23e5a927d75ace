import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import type http from 'node:http';
import request from 'supertest';
import { Egress } from '@reelay/egress';
import { startOrigin, type Origin } from '@reelay/testkit';
import { buildGateway, type TestGateway } from './helpers.js';

let origin: Origin;
let gw: TestGateway;
let server: http.Server;
// The upstream socket's own idle timeout is long here, so only the stream's idle deadline can act.
const egress = new Egress({
  allowlist: ['127.0.0.1'],
  responseTimeoutMs: 30_000,
  idleTimeoutMs: 30_000,
  streamIdleMs: 300,
});

beforeAll(async () => {
  origin = await startOrigin();
  origin.route('/media/endless.mp4', (_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4' });
    const chunk = Buffer.alloc(64 * 1024, 1);
    const pump = () => {
      while (res.write(chunk));
      res.once('drain', pump);
    };
    pump();
  });
  gw = await buildGateway({ deps: { egress } });
  server = gw.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await gw.close();
  await origin.close();
});

describe('direct streams whose client does not read', () => {
  test('a download client that stops reading is cut, and the origin request and host slot are released', async () => {
    const url = origin.url('/media/endless.mp4');
    await request(gw.app).post('/api/v1/extract').send({ url }).expect(200);
    const body = JSON.stringify({ url });
    const client = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    client.write(
      `POST /api/v1/download HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    // Read the first bytes (the answer started), then never read again.
    const first = await new Promise<Buffer>((resolve) => client.once('data', resolve));
    expect(first.toString('latin1')).toMatch(/^HTTP\/1\.1 200/);
    client.pause();
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    client.on('error', () => {});
    const host = `127.0.0.1:${origin.port}`;
    const released = () => origin.aborted.includes('/media/endless.mp4') && egress.hosts.usage(host).held === 0;
    const deadline = Date.now() + 10_000;
    while (!released() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(origin.aborted).toContain('/media/endless.mp4');
    expect(egress.hosts.usage(host)).toEqual({ fresh: 0, held: 0, queued: 0 });
    client.resume(); // drain what was buffered so the cut connection's close is seen
    await closed;
  });
});
