// Helpers of the platform tests.
// Fixtures are hand-written JSON in the shape of each API's answers (test/fixtures/{platform}/);
// their media URLs point at the local origin through placeholders: {{origin}} is http://127.0.0.1:PORT,
// {{host}} is 127.0.0.1:PORT (protocol-relative URLs), {{tenor}} the stand-in for media.tenor.com.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { Egress } from '@reelay/egress';
import type { Origin } from '@reelay/testkit';
import { createRegistry, type Extraction } from '../../src/index.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

/** A fixture file with its placeholders filled for this origin. */
export function fixture(origin: Origin, name: string): string {
  const text = fs.readFileSync(path.join(FIXTURES, name), 'utf8');
  return text
    .replaceAll('{{origin}}', origin.base)
    .replaceAll('{{host}}', new URL(origin.base).host)
    .replaceAll('{{tenor}}', `${origin.base}/tenor`);
}

export function fixtureJson<T = Record<string, unknown>>(origin: Origin, name: string): T {
  return JSON.parse(fixture(origin, name)) as T;
}

/** Serves a fixture (or a literal body) as JSON with a status. */
export function serveJson(origin: Origin, routePath: string, body: { fixture: string } | string, status = 200, contentType = 'application/json; charset=utf-8'): void {
  origin.route(routePath, (_req, res) => {
    const text = typeof body === 'string' ? body : fixture(origin, body.fixture);
    res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) }).end(text);
  });
}

/** Extraction through the real registry against the local origin, with the given endpoint overrides. */
export function extractor(endpoints: Record<string, string> = {}) {
  const egress = new Egress({ allowlist: ['127.0.0.1'] });
  const registry = createRegistry();
  return (url: string): Promise<Extraction> => registry.extract(new URL(url), { egress, endpoints });
}

/** The ReelayError code (and message) a promise fails with. */
export async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ReelayError);
    return { code: (err as ReelayError).code, message: (err as ReelayError).message };
  }
  throw new Error('expected the extraction to fail');
}

/** The request paths (with queries) the origin saw that start with a prefix. */
export function hitsUnder(origin: Origin, prefix: string): string[] {
  return [...origin.hits.keys()].filter((p) => p.startsWith(prefix));
}
