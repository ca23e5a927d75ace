// Helpers of the platform tests. Fixtures are hand-written JSON in the shape of each API's answers
// (test/fixtures/{platform}/), read through @reelay/testkit's fixture() with the origin filled in.
import { expect } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { Egress } from '@reelay/egress';
import { fixture, type Origin } from '@reelay/testkit';
import { createRegistry, type Extraction } from '../../src/index.js';

export { fixture };

export function fixtureJson<T = Record<string, unknown>>(origin: Origin, name: string): T {
  return JSON.parse(fixture(origin, name)) as T;
}

/** Serves a fixture (or a literal body) as JSON with a status. */
export function serveJson(
  origin: Origin,
  routePath: string,
  body: { fixture: string } | string,
  status = 200,
  contentType = 'application/json; charset=utf-8',
): void {
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
