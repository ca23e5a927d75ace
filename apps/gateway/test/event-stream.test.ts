// The event stream writer on a real socket: a client that stops reading is dropped once its unsent
// backlog passes the bound, and the backlog never grows past the bound by more than one event.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import express from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventStream } from '../src/http/sse.js';

const BOUND = 64 * 1024;
const EVENT = { text: 'x'.repeat(2000) };
let server: http.Server;
let base: string;
const TOTAL = 3_000; // 6 MB for a client that reads
const FLOOD = 20_000; // 40 MB: more than the loopback socket buffers of a client that stops reading hold
let outcome: { reason?: string; peak?: number; sent?: number } = {};

beforeAll(async () => {
  const app = express();
  app.get('/events', (req, res) => {
    const total = Number(req.query.total);
    const perTick = Number(req.query.rate);
    let stream: EventStream | undefined = undefined;
    stream = new EventStream(res, { heartbeatMs: 60_000, maxBufferedBytes: BOUND, retryMs: 1000 }, (reason) => {
      outcome.reason = reason;
      outcome.peak = stream?.peakBuffered;
    });
    // A few events every 5 ms: a client that reads keeps up, so only one that stops reading builds a
    // backlog in the server.
    let sent = 0;
    const pump = setInterval(() => {
      for (let i = 0; i < perTick && stream!.open && sent < total; i++) stream!.send(++sent, 'job', EVENT);
      outcome.sent = sent;
      if (sent >= total) stream!.end();
      if (!stream!.open) clearInterval(pump);
    }, 5);
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test('a client that reads receives every event, with the backlog under the bound throughout', async () => {
  outcome = {};
  const body = await new Promise<string>((resolve, reject) => {
    http
      .get(`${base}/events?total=${TOTAL}&rate=20`, { agent: false }, (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (c: string) => (text += c))
          .on('end', () => resolve(text));
      })
      .on('error', reject);
  });
  expect(body.match(/^event: job$/gm)).toHaveLength(TOTAL);
  expect(outcome).toMatchObject({ reason: 'ended', sent: TOTAL });
  expect(outcome.peak).toBeLessThanOrEqual(BOUND);
}, 30_000);

test('a client that stops reading is dropped once its unsent events pass the bound, and memory stays bounded', async () => {
  outcome = {};
  const req = http.get(`${base}/events?total=${FLOOD}&rate=20`, { agent: false }, (res) => {
    res.pause(); // the client stops reading: events now wait in socket buffers, then in the server
  });
  req.on('error', () => undefined);
  const deadline = Date.now() + 20_000;
  while (!outcome.reason && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  req.destroy();
  expect(outcome.reason).toBe('slow');
  expect(outcome.sent).toBeLessThan(FLOOD); // dropped before the pump ran out
  // ...but only after the socket buffers were full: the same pace to a reading client drops nothing.
  expect(outcome.sent! * EVENT.text.length).toBeGreaterThan(4 * BOUND);
  expect(outcome.peak).toBeGreaterThan(BOUND);
  expect(outcome.peak).toBeLessThanOrEqual(BOUND + JSON.stringify(EVENT).length + 100);
}, 30_000);
