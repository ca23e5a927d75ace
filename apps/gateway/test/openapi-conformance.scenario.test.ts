// The document's generated requests in their hundreds per operation (the suite's openapi-truth test
// runs a few of each from a fixed seed): every request the OpenAPI document allows is never refused
// for its form, every one it does not allow is refused with 400. Set REELAY_CONFORMANCE_RUNS (cases of
// each kind per operation) and REELAY_CONFORMANCE_SEED to go further or to replay a run.
import { once } from 'node:events';
import type { Server } from 'node:http';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { buildGateway, type TestGateway } from './helpers.js';
import { CONFORMANCE_ENV, runConformance, summarise } from './openapi-conformance-run.js';

let gw: TestGateway;
let server: Server;

beforeAll(async () => {
  gw = await buildGateway({ env: CONFORMANCE_ENV });
  server = gw.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await gw.close();
});

test('the server and its OpenAPI document agree on every generated request', async () => {
  const perKind = Number(process.env.REELAY_CONFORMANCE_RUNS ?? 100);
  const seed = Number(process.env.REELAY_CONFORMANCE_SEED ?? Date.now() % 1_000_000);
  const started = Date.now();
  const result = await runConformance(server, gw.redis, { perKind, seed });
  const operations = Object.keys(result.counts).length;
  const allowed = Object.values(result.counts).reduce((n, c) => n + c.allowed, 0);
  console.log(
    `conformance: seed ${seed}, ${operations} operations, ${result.sent} requests (${allowed} allowed by the document, ${result.sent - allowed} not) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  const summary = summarise(result.findings);
  if (summary.length) console.log(`disagreements:\n${summary.join('\n')}`);
  expect(summary).toEqual([]);
  expect(operations).toBeGreaterThan(20);
}, 600_000);
