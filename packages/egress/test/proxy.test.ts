// The shared guarded proxy as a client that does its own TLS (yt-dlp) sees it: CONNECT tunnels to
// checked addresses and ports only, per-session credentials, byte counting, and absolute-form
// requests fetched by egress. (The worker's tests cover the same proxy without CONNECT.)
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startOrigin, type Origin } from '@reelay/testkit';
import { Egress } from '../src/egress.js';
import { GuardedProxy, type ProxyEgress } from '../src/proxy.js';
import { parseAuthority } from '../src/proxy-tunnel.js';
import { closed, connectThrough, credentialsOf, echo, startTcp, type TcpServer } from './proxy-helpers.js';

const egress = new Egress({ allowlist: ['127.0.0.1'], responseTimeoutMs: 2_000, idleTimeoutMs: 2_000 });
let origin: Origin;
let echoServer: TcpServer;
let trap: TcpServer;
let proxy: GuardedProxy;
const counted = { bytes: 0, blocked: 0 };

beforeAll(async () => {
  origin = await startOrigin();
  origin.body('/page', '<html>hello</html>', 'text/html');
  echoServer = await startTcp('127.0.0.1', 'echo');
  trap = await startTcp('127.0.0.2', 'trap');
  proxy = await GuardedProxy.start({
    egress,
    allowConnect: true,
    hooks: { onBytes: (n) => (counted.bytes += n), onBlocked: () => counted.blocked++ },
  });
});

afterAll(async () => {
  await proxy.close();
  await Promise.all([origin.close(), echoServer.close(), trap.close()]);
});

const session = (maxBytes = 1_000_000, onCutOff?: () => void) => proxy.openSession('run-1', { maxBytes, onCutOff });

describe('CONNECT tunnels', () => {
  test('a tunnel to an allowed address carries bytes both ways, and they are counted', async () => {
    const s = session();
    const before = counted.bytes;
    const answer = await connectThrough(proxy.port, `127.0.0.1:${echoServer.port}`, credentialsOf(s.proxyUrl));
    expect(answer.status).toBe(200);
    expect(await echo(answer.socket!, 'hello through the tunnel')).toBe('hello through the tunnel');
    expect(s.bytes).toBe(2 * 'hello through the tunnel'.length);
    expect(counted.bytes - before).toBe('hello through the tunnel'.length); // what reached the client
    expect(s.hasFailure()).toBe(false);
    answer.socket!.destroy();
    proxy.closeSession(s);
  });

  test('without credentials, or with wrong ones, CONNECT gets 407 with a Basic challenge', async () => {
    const s = session();
    const [user] = credentialsOf(s.proxyUrl).split(':');
    const before = echoServer.connections;
    const none = await connectThrough(proxy.port, `127.0.0.1:${echoServer.port}`);
    expect([none.status, none.headers['proxy-authenticate']]).toEqual([407, 'Basic realm="reelay"']);
    expect((await connectThrough(proxy.port, `127.0.0.1:${echoServer.port}`, `${user}:wrong`)).status).toBe(407);
    expect(echoServer.connections).toBe(before);
    proxy.closeSession(s);
  });

  test.each([
    ['a loopback address that is not allow-listed', () => `127.0.0.2:${trap.port}`, /127\.0\.0\.2.*loopback/],
    ['the cloud metadata address', () => '169.254.169.254:443', /169\.254\.169\.254 is a link-local address/],
  ])('CONNECT to %s is refused before dialling and recorded on the session', async (_what, authority, message) => {
    // Every port allowed here, so that it is the address check that refuses.
    const open = await GuardedProxy.start({ egress, allowConnect: true, connectPorts: [443, trap.port] });
    let cutOff = 0;
    const s = open.openSession('run-2', { maxBytes: 1_000, onCutOff: () => cutOff++ });
    const answer = await connectThrough(open.port, authority(), credentialsOf(s.proxyUrl));
    expect(answer.status).toBe(403);
    expect(s.failures.blocked).toMatch(message);
    expect(cutOff).toBe(1);
    expect(trap.connections).toBe(0);
    // The session is cut off: even an allowed target is refused now.
    expect((await connectThrough(open.port, `127.0.0.1:${echoServer.port}`, credentialsOf(s.proxyUrl))).status).toBe(
      403,
    );
    await open.close();
  });

  test('a host name that resolves to a blocked address is refused before dialling', async () => {
    const strict = await GuardedProxy.start({
      egress: new Egress(),
      allowConnect: true,
      connectPorts: [echoServer.port],
    });
    const s = strict.openSession('run-3', { maxBytes: 1_000 });
    const before = echoServer.connections;
    expect((await connectThrough(strict.port, `localhost:${echoServer.port}`, credentialsOf(s.proxyUrl))).status).toBe(
      403,
    );
    expect(s.failures.blocked).toMatch(/localhost \(127\.0\.0\.1\).*loopback/);
    expect(echoServer.connections).toBe(before);
    await strict.close();
  });

  test('only port 443 may be tunnelled to a host that is not allow-listed; nothing is dialled otherwise', async () => {
    const dialled: string[] = [];
    const fake: ProxyEgress = {
      open: () => Promise.reject(new Error('not used')),
      allow: new Egress().allow,
      connect: (host, port) => {
        dialled.push(`${host}:${port}`);
        return Promise.reject(new Error('not dialled in this test'));
      },
    };
    const strict = await GuardedProxy.start({ egress: fake, allowConnect: true });
    for (const port of [25, 80, 22, 6379]) {
      const s = strict.openSession('run-4', { maxBytes: 1_000 });
      expect((await connectThrough(strict.port, `mail.example.com:${port}`, credentialsOf(s.proxyUrl))).status).toBe(
        403,
      );
      expect(s.failures.blocked).toBe(`Connections to port ${port} are not allowed; only 443.`);
      strict.closeSession(s);
    }
    expect(dialled).toEqual([]);
    const s = strict.openSession('run-4', { maxBytes: 1_000 });
    expect((await connectThrough(strict.port, 'media.example.com:443', credentialsOf(s.proxyUrl))).status).toBe(502);
    expect(dialled).toEqual(['media.example.com:443']);
    await strict.close();
  });

  test('a malformed target is a bad request', async () => {
    const s = session();
    for (const target of ['127.0.0.1', 'http://127.0.0.1/', '127.0.0.1:99999', '[::1', 'user@host:443']) {
      expect((await connectThrough(proxy.port, target, credentialsOf(s.proxyUrl))).status).toBe(400);
    }
    expect(parseAuthority('[2001:db8::1]:443')).toEqual({ host: '2001:db8::1', port: 443 });
    expect(parseAuthority('cdn.example.com:8443')).toEqual({ host: 'cdn.example.com', port: 8443 });
    proxy.closeSession(s);
  });

  test('ending the session closes its open tunnels', async () => {
    const s = session();
    const answer = await connectThrough(proxy.port, `127.0.0.1:${echoServer.port}`, credentialsOf(s.proxyUrl));
    expect(answer.status).toBe(200);
    proxy.closeSession(s);
    await closed(answer.socket!);
  });

  test('a tunnel past the byte limit is cut off and the session told so', async () => {
    let cutOff = 0;
    const s = session(64, () => cutOff++);
    const answer = await connectThrough(proxy.port, `127.0.0.1:${echoServer.port}`, credentialsOf(s.proxyUrl));
    answer.socket!.on('error', () => {});
    answer.socket!.write('x'.repeat(100));
    await closed(answer.socket!);
    expect([s.failures.tooLarge, cutOff]).toEqual([true, 1]);
    proxy.closeSession(s);
  });

  test('a proxy without CONNECT answers 405 to an authorised tunnel and dials nothing', async () => {
    const plain = await GuardedProxy.start({ egress, allowConnect: false });
    const s = plain.openSession('run-5', { maxBytes: 1_000 });
    const before = echoServer.connections;
    expect((await connectThrough(plain.port, `127.0.0.1:${echoServer.port}`, credentialsOf(s.proxyUrl))).status).toBe(
      405,
    );
    expect(echoServer.connections).toBe(before);
    await plain.close();
  });
});

describe('absolute-form requests', () => {
  function get(target: string, auth: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const headers = { 'proxy-authorization': `Basic ${Buffer.from(auth).toString('base64')}` };
      const req = http.request(
        { host: '127.0.0.1', port: proxy.port, method: 'GET', path: target, headers, agent: false },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  test('an http URL is fetched through egress and counted', async () => {
    const s = session();
    expect(await get(origin.url('/page'), credentialsOf(s.proxyUrl))).toEqual({
      status: 200,
      body: '<html>hello</html>',
    });
    expect(s.bytes).toBe('<html>hello</html>'.length);
    proxy.closeSession(s);
  });

  test('a blocked address gets 403 and is never contacted', async () => {
    const s = session();
    expect((await get(`http://127.0.0.2:${trap.port}/`, credentialsOf(s.proxyUrl))).status).toBe(403);
    expect(s.failures.blocked).toMatch(/127\.0\.0\.2/);
    expect(trap.connections).toBe(0);
    proxy.closeSession(s);
  });

  test('a scheme other than http(s) is refused as blocked', async () => {
    const s = session();
    expect((await get('ftp://127.0.0.1/x', credentialsOf(s.proxyUrl))).status).toBe(403);
    expect(s.failures.blocked).toMatch(/Only http and https/);
    proxy.closeSession(s);
  });
});
