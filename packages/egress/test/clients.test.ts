import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ReelayError } from '@reelay/contracts';
import { startOrigin, type Origin } from '@reelay/testkit';
import { decodeBody } from '../src/decode.js';
import { Egress, type EgressClient } from '../src/egress.js';

// The guarantees both transports give (got, the default, and node:http, kept as the benchmark's
// baseline with EGRESS_CLIENT=http): egress.test.ts covers got in depth, this file holds them side by side.
let origin: Origin;
const big = zlib.gzipSync(Buffer.alloc(2 * 1024 * 1024, 'a'));

beforeAll(async () => {
  origin = await startOrigin();
  origin.body('/page', '<html>hello</html>', 'text/html');
  origin.redirect('/to-page', '/page');
  origin.redirect('/to-metadata', 'http://169.254.169.254/latest/meta-data/');
  origin.redirect('/to-file', 'file:///etc/passwd');
  origin.redirect('/loop-a', '/loop-b');
  origin.redirect('/loop-b', '/loop-a');
  origin.route('/stall', () => {
    /* never answers */
  });
  // gzip although the request asked for identity: decoded, and the cap counts the decoded bytes.
  origin.route('/gzip-anyway', (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(big),
  );
  origin.route('/echo-method', (req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(req.method));
});

afterAll(() => origin.close());

async function failure(promise: Promise<unknown>): Promise<ReelayError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ReelayError);
    return err as ReelayError;
  }
  throw new Error('expected the request to fail');
}

describe.each<EgressClient>(['got', 'http'])('egress on %s', (client) => {
  const egress = new Egress({ allowlist: ['127.0.0.1'], client, responseTimeoutMs: 400 });

  test('follows a redirect, names the final URL, and leaves the host lanes empty afterwards', async () => {
    const res = await egress.fetchText(origin.url('/to-page'));
    expect([res.status, res.url, res.text]).toEqual([200, origin.url('/page'), '<html>hello</html>']);
    expect(egress.hosts.usage(new URL(origin.base).host)).toEqual({ fresh: 0, held: 0, queued: 0 });
  });

  test('checks every redirect hop: a private address or another scheme is url_blocked', async () => {
    expect((await failure(egress.fetchText(origin.url('/to-metadata')))).code).toBe('url_blocked');
    expect((await failure(egress.fetchText(origin.url('/to-file')))).code).toBe('url_blocked');
  });

  test('stops a redirect loop', async () => {
    const err = await failure(egress.fetchText(origin.url('/loop-a')));
    expect([err.code, err.message]).toEqual(['upstream_error', 'The origin redirects in a loop.']);
  });

  test('an origin that never answers is upstream_timeout, and its slot comes back', async () => {
    expect((await failure(egress.fetchText(origin.url('/stall')))).code).toBe('upstream_timeout');
    expect(egress.hosts.usage(new URL(origin.base).host)).toEqual({ fresh: 0, held: 0, queued: 0 });
  });

  test('a body gzipped against an identity request is decoded (as documents are) and capped by its decoded size', async () => {
    const res = await egress.open(origin.url('/gzip-anyway'), { identity: true });
    const err = await failure(egress.read(decodeBody(res.body, res.headers), 1024 * 1024));
    expect(err.message).toMatch(/larger than 1 MB/);
    expect((await failure(egress.fetchText(origin.url('/gzip-anyway'), { maxBytes: 1024 * 1024 }))).message).toMatch(
      /larger than 1 MB/,
    );
    const whole = await egress.fetchText(origin.url('/gzip-anyway'), { maxBytes: 3 * 1024 * 1024 });
    expect(whole.text.length).toBe(2 * 1024 * 1024);
  });

  test('sends the method and body it is given', async () => {
    expect((await egress.fetchText(origin.url('/echo-method'), { method: 'POST', body: 'x' })).text).toBe('POST');
  });
});
