import http from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Egress, type EgressResponse, type RequestOptions } from '@reelay/egress';
import { createLogger } from '@reelay/observability';
import { startOrigin, type Origin } from '@reelay/testkit';
import type { JobProxySession } from '../src/proxy-session.js';
import { startJobProxy, type JobProxy } from '../src/proxy.js';
import { credentialsOf, proxyGet, startTrap, until } from './helpers.js';

const logger = createLogger({ name: 'proxy-test', level: 'silent' });
const egress = new Egress({ allowlist: ['127.0.0.1'], responseTimeoutMs: 2_000, idleTimeoutMs: 2_000 });
let origin: Origin;
let proxy: JobProxy;
let trap: Awaited<ReturnType<typeof startTrap>>;
const counted = { bytes: 0, blocked: 0 };

beforeAll(async () => {
  origin = await startOrigin();
  trap = await startTrap('127.0.0.2');
  proxy = await startJobProxy({
    egress,
    logger,
    maxSegments: 20_000,
    hooks: { onBytes: (n) => (counted.bytes += n), onBlocked: () => counted.blocked++ },
  });
  origin.route('/echo', (req, res) => {
    res.writeHead(200, {
      'content-type': 'application/json',
      connection: 'keep-alive',
      'x-kept': 'yes',
      'keep-alive': 'timeout=5',
    });
    res.end(JSON.stringify(req.headers));
  });
  origin.body('/data.bin', Buffer.alloc(64 * 1024, 7), 'application/octet-stream');
  origin.status('/gone', 404, 'no such thing');
  origin.status('/busy', 503, 'try later');
  origin.redirect('/moved', 'https://cdn.example.com/elsewhere.ts');
});

afterAll(async () => {
  await proxy.close();
  await origin.close();
  await trap.close();
});

function session(options: Partial<Parameters<JobProxy['openSession']>[1]> = {}): JobProxySession {
  return proxy.openSession('AAAAAAAAAAAAAAAAAAAAAA', { maxBytes: 1_000_000, ...options });
}

describe('authentication: not an open proxy', () => {
  test('a request without credentials gets 407 with a Basic challenge, and nothing is fetched', async () => {
    const before = origin.hits.get('/echo') ?? 0;
    const res = await proxyGet(proxy.port, origin.url('/echo'));
    expect(res.status).toBe(407);
    expect(res.headers['proxy-authenticate']).toBe('Basic realm="reelay"');
    expect(origin.hits.get('/echo') ?? 0).toBe(before);
  });

  test('wrong credentials, and the credentials of an ended session, get 407', async () => {
    const s = session();
    const [user] = credentialsOf(s.env).split(':');
    expect((await proxyGet(proxy.port, origin.url('/echo'), { auth: `${user}:wrong` })).status).toBe(407);
    expect((await proxyGet(proxy.port, origin.url('/echo'), { auth: credentialsOf(s.env) })).status).toBe(200);
    proxy.closeSession(s);
    expect((await proxyGet(proxy.port, origin.url('/echo'), { auth: credentialsOf(s.env) })).status).toBe(407);
  });

  test('the session environment points ffmpeg at the proxy and removes no_proxy', () => {
    const s = session();
    expect(s.env.http_proxy).toMatch(new RegExp(`^http://[0-9a-f]{24}:[0-9a-f]{48}@127\\.0\\.0\\.1:${proxy.port}$`));
    expect(s.env).toHaveProperty('no_proxy', undefined);
    proxy.closeSession(s);
  });
});

describe('forwarding', () => {
  test('passes only safe request headers and the ones the job recorded, and drops hop-by-hop response headers', async () => {
    const s = session({ headerNames: ['Referer', 'Cookie'] });
    const res = await proxyGet(proxy.port, origin.url('/echo'), {
      auth: credentialsOf(s.env),
      headers: {
        range: 'bytes=0-',
        referer: 'https://site.example/',
        cookie: 'a=1',
        authorization: 'Bearer secret',
        'user-agent': 'Lavf/59.27.100',
        'x-other': '1',
        'icy-metadata': '1',
      },
    });
    expect(res.status).toBe(200);
    const seen = JSON.parse(res.body.toString()) as Record<string, string>;
    expect(seen).toMatchObject({
      range: 'bytes=0-',
      referer: 'https://site.example/',
      cookie: 'a=1',
      'icy-metadata': '1',
      'accept-encoding': 'identity',
    });
    expect(seen).not.toHaveProperty('authorization');
    expect(seen).not.toHaveProperty('x-other');
    expect(seen).not.toHaveProperty('proxy-authorization');
    expect(seen['user-agent']).not.toContain('Lavf'); // egress's own, unless the job recorded one
    expect(res.headers['x-kept']).toBe('yes');
    expect(res.headers['keep-alive']).toBeUndefined();
    proxy.closeSession(s);
  });

  test('streams the body and counts its bytes for the job and the metrics', async () => {
    const s = session();
    const before = counted.bytes;
    const res = await proxyGet(proxy.port, origin.url('/data.bin'), { auth: credentialsOf(s.env) });
    expect(res.body.length).toBe(64 * 1024);
    expect(s.bytes).toBe(64 * 1024);
    expect(counted.bytes - before).toBe(64 * 1024);
    expect(s.hasFailure()).toBe(false);
    proxy.closeSession(s);
  });

  test('a 404 and a 503 are passed to ffmpeg and remembered for the job', async () => {
    const s = session();
    expect((await proxyGet(proxy.port, origin.url('/gone'), { auth: credentialsOf(s.env) })).status).toBe(404);
    expect((await proxyGet(proxy.port, origin.url('/busy'), { auth: credentialsOf(s.env) })).status).toBe(503);
    expect(s.failures.notFound).toBe(404);
    expect(s.failures.unavailable).toMatchObject({ code: 'upstream_error' });
    proxy.closeSession(s);
  });

  test('a redirect to https is handed back under its stand-in name, for ffmpeg to ask the proxy again', async () => {
    const s = session();
    const res = await proxyGet(proxy.port, origin.url('/moved'), { auth: credentialsOf(s.env) });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('http://cdn.example.com.443.reelay-https.invalid/elsewhere.ts');
    proxy.closeSession(s);
  });

  test('a job past its byte limit is cut off and told so', async () => {
    let cutOff = 0;
    const s = session({ maxBytes: 10_000, onCutOff: () => cutOff++ });
    await proxyGet(proxy.port, origin.url('/data.bin'), { auth: credentialsOf(s.env) }).catch(() => undefined);
    await until(() => cutOff === 1, 2_000, 'the cut-off');
    expect(s.failures.tooLarge).toBe(true);
    expect((await proxyGet(proxy.port, origin.url('/echo'), { auth: credentialsOf(s.env) })).status).toBe(403);
    proxy.closeSession(s);
  });
});

describe('the egress guard', () => {
  test('a blocked address gets 403, is remembered for the job, and is never contacted', async () => {
    let cutOff = 0;
    const s = session({ onCutOff: () => cutOff++ });
    const blockedBefore = counted.blocked;
    const res = await proxyGet(proxy.port, `http://127.0.0.2:${trap.port}/seg.ts`, { auth: credentialsOf(s.env) });
    expect(res.status).toBe(403);
    expect(s.failures.blocked).toMatch(/127\.0\.0\.2.*loopback/);
    expect(cutOff).toBe(1);
    expect(counted.blocked - blockedBefore).toBe(1);
    expect(trap.connections).toBe(0);
    proxy.closeSession(s);
  });

  test('a URL that is not http is refused and remembered as blocked', async () => {
    const s = session();
    expect((await proxyGet(proxy.port, 'file:///etc/passwd', { auth: credentialsOf(s.env) })).status).toBe(403);
    expect(s.failures.blocked).toMatch(/Only http and https/);
    proxy.closeSession(s);
  });

  test('an origin-form request is no proxy request', async () => {
    const s = session();
    expect((await proxyGet(proxy.port, '/etc/passwd', { auth: credentialsOf(s.env) })).status).toBe(400);
    expect(s.hasFailure()).toBe(false);
    proxy.closeSession(s);
  });

  test.each([
    ['a blocked address', () => `127.0.0.2:${trap.port}`],
    ['an allowed address', () => `127.0.0.1:${origin.port}`],
  ])('CONNECT to %s is refused and nothing is dialled', async (_what, target) => {
    const s = session();
    const status = (auth?: string) =>
      new Promise<number>((resolve, reject) => {
        const headers = auth ? { 'proxy-authorization': `Basic ${Buffer.from(auth).toString('base64')}` } : undefined;
        const req = http.request({
          host: '127.0.0.1',
          port: proxy.port,
          method: 'CONNECT',
          path: target(),
          headers,
          agent: false,
        });
        req.on('connect', (res: http.IncomingMessage, socket) => {
          socket.destroy();
          resolve(res.statusCode ?? 0);
        });
        req.on('response', (res) => resolve(res.statusCode ?? 0));
        req.on('error', reject);
        req.end();
      });
    const trapBefore = trap.connections;
    expect(await status()).toBe(407);
    expect(await status(credentialsOf(s.env))).toBe(405);
    expect(trap.connections).toBe(trapBefore);
    proxy.closeSession(s);
  });
});

describe('https origins and manifests', () => {
  // A fake egress: no TLS origin is available here, and the point is what the proxy asks egress for.
  const asked: string[] = [];
  const fake = {
    open: async (url: string | URL, _options?: RequestOptions): Promise<EgressResponse> => {
      asked.push(String(url));
      const body = String(url).endsWith('.m3u8')
        ? '#EXTM3U\n#EXTINF:1,\nhttps://cdn.example.com/a/0.ts\n#EXTINF:1,\n1.ts\n#EXT-X-ENDLIST\n'
        : 'segment';
      return {
        url: String(url),
        status: 206,
        headers: {
          'content-type': 'application/vnd.apple.mpegurl',
          'content-length': String(body.length),
          'content-range': `bytes 0-${body.length - 1}/${body.length}`,
        },
        body: Readable.from([Buffer.from(body)]),
      };
    },
  };
  let fakeProxy: JobProxy;

  beforeAll(async () => {
    fakeProxy = await startJobProxy({ egress: fake, logger, maxSegments: 20_000 });
  });
  afterAll(async () => {
    await fakeProxy.close();
  });

  test('a stand-in name is fetched over https, and a playlist comes back with its https references rewritten', async () => {
    const s = fakeProxy.openSession('AAAAAAAAAAAAAAAAAAAAAA', { maxBytes: 1_000_000 });
    const res = await proxyGet(fakeProxy.port, 'http://site.example.com.443.reelay-https.invalid:80/live/index.m3u8', {
      auth: credentialsOf(s.env),
      headers: { range: 'bytes=0-' },
    });
    expect(asked).toEqual(['https://site.example.com/live/index.m3u8']);
    expect(res.status).toBe(200);
    expect(res.headers['content-range']).toBeUndefined();
    const text = res.body.toString();
    expect(text).toBe(
      '#EXTM3U\n#EXTINF:1,\nhttp://cdn.example.com.443.reelay-https.invalid/a/0.ts\n#EXTINF:1,\n1.ts\n#EXT-X-ENDLIST\n',
    );
    expect(res.headers['content-length']).toBe(String(text.length));
    fakeProxy.closeSession(s);
  });

  test('a media segment passes through untouched', async () => {
    const s = fakeProxy.openSession('AAAAAAAAAAAAAAAAAAAAAA', { maxBytes: 1_000_000 });
    const res = await proxyGet(fakeProxy.port, 'http://cdn.example.com.443.reelay-https.invalid/a/0.ts', {
      auth: credentialsOf(s.env),
    });
    expect(asked.at(-1)).toBe('https://cdn.example.com/a/0.ts');
    expect([res.status, res.body.toString(), res.headers['content-range']]).toEqual([206, 'segment', 'bytes 0-6/7']);
    fakeProxy.closeSession(s);
  });
});
