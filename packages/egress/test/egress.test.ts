import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startOrigin, type Origin } from '@reelay/testkit';
import { Egress } from '../src/egress.js';

let origin: Origin;
const egress = new Egress({ allowlist: ['127.0.0.1'], responseTimeoutMs: 500, idleTimeoutMs: 500 });
const strict = new Egress();

beforeAll(async () => {
  origin = await startOrigin();
  origin.body('/page', '<html>hello</html>', 'text/html');
  origin.redirect('/to-page', '/page');
  origin.redirect('/to-blocked', 'http://127.0.0.2:1/secret');
  origin.redirect('/to-metadata', 'http://169.254.169.254/latest/meta-data/');
  origin.redirect('/to-file', 'file:///etc/passwd');
  origin.redirect('/to-port-zero', 'http://127.0.0.1:0/page');
  origin.redirect('/loop-a', '/loop-b');
  origin.redirect('/loop-b', '/loop-a');
  for (let i = 0; i < 7; i++) origin.redirect(`/chain/${i}`, `/chain/${i + 1}`);
  origin.body('/chain/7', 'end', 'text/plain');
  origin.status('/gone', 410);
  origin.status('/missing', 404);
  origin.status('/broken', 500);
  origin.route('/stall', () => {
    /* never answers */
  });
  origin.route('/trickle', (_req, res) => {
    // Headers at once, then a byte every 50 ms for 2 s: no idle timeout fires, only the deadline.
    res.writeHead(200, { 'content-type': 'text/plain' });
    let n = 0;
    const timer = setInterval(() => (++n > 40 ? (clearInterval(timer), res.end()) : res.write('x')), 50);
    res.once('close', () => clearInterval(timer));
  });
  origin.route('/stall-body', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('the first bytes, then silence');
  });
  origin.route('/big', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < 6 * 1024 * 1024) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
});

afterAll(() => origin.close());

describe('egress guard', () => {
  test('fetches an allow-listed origin and follows a redirect to it', async () => {
    const res = await egress.fetchText(origin.url('/to-page'));
    expect(res.text).toBe('<html>hello</html>');
    expect(res.url).toBe(origin.url('/page'));
  });

  test('refuses loopback without the allowlist, before connecting', async () => {
    const before = origin.hits.get('/page') ?? 0;
    await expect(strict.fetchText(origin.url('/page'))).rejects.toMatchObject({ code: 'url_blocked' });
    expect(origin.hits.get('/page') ?? 0).toBe(before);
  });

  test('checkUrl runs the guard without a request: a literal address, and a name by what it resolves to', async () => {
    await expect(strict.checkUrl(new URL('http://127.0.0.2:9/hook'))).rejects.toMatchObject({ code: 'url_blocked' });
    // localhost comes from /etc/hosts: loopback, so refused without the allowlist, before any connection.
    await expect(strict.checkUrl(new URL(`http://localhost:${origin.port}/page`))).rejects.toMatchObject({
      code: 'url_blocked',
    });
    await expect(strict.checkUrl(new URL('ftp://127.0.0.1/'))).rejects.toMatchObject({ code: 'url_blocked' });
    await expect(egress.checkUrl(new URL(origin.url('/page')))).resolves.toBeUndefined();
  });

  test.each([
    'http://127.0.0.2:9/',
    'http://[::1]:9/',
    'http://2130706433/',
    'http://0x7f.0.0.1/',
    'http://0177.0.0.1/',
    'http://127.1/',
    'http://[::ffff:127.0.0.1]/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://169.254.169.254/',
    'http://0xa9fea9fe/',
  ])('refuses %s without the allowlist, whatever its spelling', async (url) => {
    await expect(strict.fetchText(url)).rejects.toMatchObject({ code: 'url_blocked' });
  });

  test.each([
    ['http://127.0.0.2:9/', 'url_blocked'],
    ['http://[::1]:9/', 'url_blocked'],
    ['http://0.0.0.0:9/', 'url_blocked'],
    // Other spellings of 127.0.0.1 are the allow-listed address itself: allowed, and port 1 refuses.
    ['http://2130706433:1/', 'upstream_error'],
    ['http://0x7f.0.0.1:1/', 'upstream_error'],
    ['http://[::ffff:127.0.0.1]:1/', 'upstream_error'],
  ])('with 127.0.0.1 allow-listed, %s gives %s', async (url, expected) => {
    await expect(egress.fetchText(url)).rejects.toMatchObject({ code: expected });
  });

  test('checks DNS answers: localhost resolves to loopback and is refused', async () => {
    await expect(strict.fetchText(`http://localhost:${origin.port}/page`)).rejects.toMatchObject({
      code: 'url_blocked',
    });
  });

  test('re-checks every redirect hop', async () => {
    await expect(egress.fetchText(origin.url('/to-blocked'))).rejects.toMatchObject({ code: 'url_blocked' });
    await expect(egress.fetchText(origin.url('/to-metadata'))).rejects.toMatchObject({ code: 'url_blocked' });
    await expect(egress.fetchText(origin.url('/to-file'))).rejects.toMatchObject({ code: 'url_blocked' });
  });

  test('port 0, which Node would send to port 80, is refused as url_blocked, directly or by a redirect', async () => {
    await expect(egress.fetchText('http://127.0.0.1:0/page')).rejects.toMatchObject({
      code: 'url_blocked',
      message: 'Port 0 cannot be contacted.',
    });
    await expect(egress.fetchText(origin.url('/to-port-zero'))).rejects.toMatchObject({
      code: 'url_blocked',
      message: 'Port 0 cannot be contacted.',
    });
  });

  test('stops redirect loops and chains longer than five hops', async () => {
    await expect(egress.fetchText(origin.url('/loop-a'))).rejects.toMatchObject({ code: 'upstream_error' });
    await expect(egress.fetchText(origin.url('/chain/0'))).rejects.toMatchObject({ code: 'upstream_error' });
    expect((await egress.fetchText(origin.url('/chain/2'))).text).toBe('end');
  });

  test('maps origin statuses', async () => {
    await expect(egress.fetchText(origin.url('/missing'))).rejects.toMatchObject({ code: 'content_not_found' });
    await expect(egress.fetchText(origin.url('/gone'))).rejects.toMatchObject({ code: 'content_not_found' });
    await expect(egress.fetchText(origin.url('/broken'))).rejects.toMatchObject({ code: 'upstream_error' });
    const allowed = await egress.fetchText(origin.url('/broken'), { allowErrorStatus: true });
    expect(allowed.status).toBe(500);
  });

  test('times out on an origin that never answers', async () => {
    await expect(egress.fetchText(origin.url('/stall'))).rejects.toMatchObject({ code: 'upstream_timeout' });
  });

  test('a body that goes silent times out after the idle limit, before the deadline', async () => {
    const started = Date.now();
    await expect(egress.fetchText(origin.url('/stall-body'), { deadlineMs: 10_000 })).rejects.toMatchObject({
      code: 'upstream_timeout',
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  test('the deadline covers the body, not only the headers', async () => {
    const started = Date.now();
    await expect(egress.fetchText(origin.url('/trickle'), { deadlineMs: 300 })).rejects.toMatchObject({
      code: 'upstream_timeout',
    });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  test("a finished request leaves nothing listening on the caller's signal", async () => {
    const caller = new AbortController();
    await egress.fetchText(origin.url('/page'), { signal: caller.signal });
    await expect(egress.fetchText(origin.url('/gone'), { signal: caller.signal })).rejects.toMatchObject({
      code: 'content_not_found',
    });
    await new Promise((r) => setImmediate(r)); // a body's 'close' follows its end or destroy by a tick
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  test("a caller's abort still cancels a request in flight", async () => {
    const caller = new AbortController();
    const pending = egress.fetchText(origin.url('/stall'), { signal: caller.signal, deadlineMs: 5_000 });
    setTimeout(() => caller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ code: 'upstream_error', message: 'The request was cancelled.' });
  });

  test('stops reading past the byte limit', async () => {
    // The 500 ms timeouts of `egress` are for the timeout tests; on a loaded CI machine 6 MB over
    // loopback may pause longer than that, and this test is about bytes, not time.
    const roomy = new Egress({ allowlist: ['127.0.0.1'] });
    const tooLarge = { code: 'upstream_error', message: expect.stringContaining('larger than') };
    await expect(roomy.fetchText(origin.url('/big'))).rejects.toMatchObject(tooLarge);
    await expect(roomy.fetchText(origin.url('/page'), { maxBytes: 5 })).rejects.toMatchObject(tooLarge);
  });

  test('refuses a closed port with upstream_error', async () => {
    await expect(egress.fetchText('http://127.0.0.1:1/')).rejects.toMatchObject({ code: 'upstream_error' });
  });
});

describe('egress for proxies', () => {
  test('redirects can be handed back instead of followed', async () => {
    const res = await egress.open(origin.url('/to-page'), { followRedirects: false });
    res.body.destroy();
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/page');
  });

  test('a guarded TCP connect reaches an allowed address and refuses others before connecting', async () => {
    const socket = await egress.connect('127.0.0.1', origin.port);
    expect(socket.remoteAddress).toBe('127.0.0.1');
    socket.destroy();
    await expect(egress.connect('127.0.0.2', origin.port)).rejects.toMatchObject({ code: 'url_blocked' });
    await expect(strict.connect('localhost', origin.port)).rejects.toMatchObject({ code: 'url_blocked' });
    await expect(strict.connect('127.0.0.1', origin.port)).rejects.toMatchObject({ code: 'url_blocked' });
    await expect(egress.connect('169.254.169.254', 80)).rejects.toMatchObject({ code: 'url_blocked' });
  });
});
