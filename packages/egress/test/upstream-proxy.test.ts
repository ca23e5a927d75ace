import dns from 'node:dns/promises';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { inspect } from 'node:util';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import {
  describeWithTools,
  freePort,
  PROXY_TOOLS,
  startDante,
  startOrigin,
  startSocksWithAuth,
  startTinyproxy,
  type Origin,
  type RealProxy,
} from '@reelay/testkit';
import { Egress } from '../src/egress.js';
import { GuardedProxy } from '../src/proxy.js';
import { ProxyPool } from '../src/upstream-pool.js';
import { parseProxyUrl } from '../src/upstream-proxy.js';
import { connectThrough, credentialsOf } from './proxy-helpers.js';

const USER = 'alice';
const PASS = 's3cr3t-Pa55';
const LOOPBACK = ['127.0.0.1', '::1'];

let origin: Origin;
let named: { address: string; origin: Origin };
let tiny: RealProxy;
let tiny2: RealProxy;
let dante: RealProxy;
let socksAuth: RealProxy;
let deadPort: number;
const withAuth = (proxy: RealProxy) => `http://${USER}:${PASS}@127.0.0.1:${proxy.port}`;
/** Tunnel requests the proxy's log shows for a destination. */
const tunnelsTo = (proxy: RealProxy, authority: string) =>
  proxy
    .log()
    .split('\n')
    .filter((line) => line.includes(`CONNECT ${authority} `)).length;
const requests = (proxy: RealProxy) =>
  proxy
    .log()
    .split('\n')
    .filter((line) => line.includes('Request (')).length;
/** Everything an operator or a client could see of an error. */
const visible = (err: unknown) => `${String(err)} ${inspect(err, { depth: 5 })} ${JSON.stringify(err)}`;

describeWithTools('outbound proxies', [...PROXY_TOOLS, { bin: 'openssl', install: 'apt-get install openssl' }], () => {
  beforeAll(async () => {
    origin = await startOrigin();
    origin.body('/page', 'through the proxy', 'text/plain');
    // Whatever `localhost` resolves to first here, an origin listens there: the test follows the name.
    const { address } = await dns.lookup('localhost');
    named = { address, origin: await startOrigin(address) };
    named.origin.body('/page', 'by name', 'text/plain');
    [tiny, tiny2, dante, socksAuth] = await Promise.all([
      startTinyproxy({ user: USER, pass: PASS }),
      startTinyproxy(),
      startDante(),
      startSocksWithAuth({ user: USER, pass: PASS }),
    ]);
    deadPort = await freePort();
  });

  afterAll(async () => {
    await Promise.all([
      origin?.close(),
      named?.origin.close(),
      tiny?.stop(),
      tiny2?.stop(),
      dante?.stop(),
      socksAuth?.stop(),
    ]);
  });

  test('a request goes through the http proxy with its credentials, which is asked for the checked address', async () => {
    const egress = new Egress({ allowlist: LOOPBACK, proxies: { all: [withAuth(tiny)] } });
    const res = await egress.fetchText(`http://localhost:${named.origin.port}/page`);
    expect(res.text).toBe('by name');
    const authority = named.address.includes(':')
      ? `[${named.address}]:${named.origin.port}`
      : `${named.address}:${named.origin.port}`;
    expect(tunnelsTo(tiny, authority)).toBe(1);
    expect(tiny.log()).not.toContain('localhost');
  });

  test.each(['got', 'http'] as const)(
    'a request of the %s client goes through the SOCKS5 proxy to the checked address',
    async (client) => {
      const egress = new Egress({
        client,
        allowlist: LOOPBACK,
        proxies: { all: [`socks5://127.0.0.1:${dante.port}`] },
      });
      const before = dante.log().split('tcp/connect [').length;
      const res = await egress.fetchText(origin.url('/page'));
      expect(res.text).toBe('through the proxy');
      expect(dante.log()).toMatch(new RegExp(`tcp/connect \\[: .* -> .* 127\\.0\\.0\\.1\\.${origin.port}`));
      expect(dante.log().split('tcp/connect [').length - before).toBe(1);
    },
  );

  test.each(['got', 'http'] as const)(
    'a request of the %s client signs in to a SOCKS5 proxy with its credentials and asks for the checked address; wrong ones are refused',
    async (client) => {
      const egress = new Egress({
        client,
        allowlist: LOOPBACK,
        proxies: { all: [`socks5://${USER}:${PASS}@127.0.0.1:${socksAuth.port}`] },
      });
      const before = socksAuth.log().split('\n').length;
      const res = await egress.fetchText(`http://localhost:${named.origin.port}/page`);
      expect(res.text).toBe('by name');
      // The proxy was given the address reelay resolved and checked, never the name.
      expect(
        socksAuth
          .log()
          .split('\n')
          .slice(before - 1),
      ).toEqual(expect.arrayContaining([`auth ${USER} ok`, `connect ${named.address}:${named.origin.port}`]));
      expect(socksAuth.log()).not.toContain('localhost');
      const wrong = new Egress({
        client,
        allowlist: LOOPBACK,
        proxies: { all: [`socks5://${USER}:not-${PASS}@127.0.0.1:${socksAuth.port}`] },
      });
      const refused = await wrong.fetchText(origin.url('/page')).catch((err: unknown) => err);
      expect(refused).toMatchObject({ code: 'upstream_error', message: 'The outbound proxy refused the connection.' });
      expect(visible(refused)).not.toContain(PASS);
      expect(socksAuth.log().split('\n').at(-1)).toBe(`auth ${USER} refused`);
    },
  );

  test('a name that resolves to a private address is refused before any proxy is asked', async () => {
    const strict = new Egress({ proxies: { all: [withAuth(tiny)] } });
    const socks = new Egress({ proxies: { all: [`socks5://127.0.0.1:${dante.port}`] } });
    const before = requests(tiny);
    const danteBefore = dante.log().split('tcp/connect').length;
    await expect(strict.fetchText(`http://localhost:${origin.port}/page`)).rejects.toMatchObject({
      code: 'url_blocked',
    });
    await expect(socks.fetchText(`http://localhost:${origin.port}/page`)).rejects.toMatchObject({
      code: 'url_blocked',
    });
    await expect(strict.connect('localhost', origin.port)).rejects.toMatchObject({ code: 'url_blocked' });
    expect(requests(tiny)).toBe(before);
    expect(dante.log().split('tcp/connect').length).toBe(danteBefore);
  });

  test('extraction and media use their own pools, and CONNECT tunnels (yt-dlp) the extraction one', async () => {
    const egress = new Egress({
      allowlist: LOOPBACK,
      proxies: {
        all: [`http://127.0.0.1:${deadPort}`],
        extract: [withAuth(tiny)],
        media: [`http://127.0.0.1:${tiny2.port}`],
      },
    });
    const authority = `127.0.0.1:${origin.port}`;
    const [extractBefore, mediaBefore] = [tunnelsTo(tiny, authority), tunnelsTo(tiny2, authority)];
    await egress.fetchText(origin.url('/page'), { headers: { connection: 'close' } });
    await egress.fetchText(origin.url('/page'), { headers: { connection: 'close' }, purpose: 'media' });
    const socket = await egress.connect('127.0.0.1', origin.port);
    socket.destroy();
    expect(tunnelsTo(tiny, authority) - extractBefore).toBe(2);
    expect(tunnelsTo(tiny2, authority) - mediaBefore).toBe(1);
  });

  test("the guarded proxy's requests (ffmpeg's) go through the media pool, its tunnels (yt-dlp's) through the extraction pool", async () => {
    const dead = `http://127.0.0.1:${deadPort}`;
    const worker = new Egress({
      allowlist: LOOPBACK,
      purpose: 'media',
      proxies: { extract: [dead], media: [withAuth(tiny)] },
    });
    const gateway = new Egress({
      allowlist: LOOPBACK,
      proxies: { media: [dead], extract: [`http://127.0.0.1:${tiny2.port}`] },
    });
    const jobProxy = await GuardedProxy.start({ egress: worker, allowConnect: false });
    const bridge = await GuardedProxy.start({ egress: gateway, allowConnect: true, connectPorts: [origin.port] });
    try {
      const authority = `127.0.0.1:${origin.port}`;
      const before = [tunnelsTo(tiny, authority), tunnelsTo(tiny2, authority)];
      const job = jobProxy.openSession('job', { maxBytes: 1_000_000 });
      const body = await new Promise<string>((resolve, reject) => {
        const req = http.get(
          {
            host: '127.0.0.1',
            port: jobProxy.port,
            path: origin.url('/page'),
            headers: { 'proxy-authorization': `Basic ${Buffer.from(credentialsOf(job.proxyUrl)).toString('base64')}` },
          },
          (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () => resolve(text));
          },
        );
        req.on('error', reject);
      });
      expect(body).toBe('through the proxy');
      const run = bridge.openSession('run', { maxBytes: 1_000_000 });
      const tunnel = await connectThrough(bridge.port, authority, credentialsOf(run.proxyUrl));
      expect(tunnel.status).toBe(200);
      tunnel.socket!.destroy();
      expect([tunnelsTo(tiny, authority) - before[0], tunnelsTo(tiny2, authority) - before[1]]).toEqual([1, 1]);
    } finally {
      await Promise.all([jobProxy.close(), bridge.close()]);
    }
  });

  test('an https origin is reached through a tunnel to its checked address, TLS inside it by name and verified', async () => {
    const certs = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-tls-'));
    const [key, cert] = [path.join(certs, 'key.pem'), path.join(certs, 'cert.pem')];
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
      ],
      { stdio: 'ignore' },
    );
    const context = { key: fs.readFileSync(key), cert: fs.readFileSync(cert) };
    const names: string[] = [];
    const server = tls.createServer({
      ...context,
      SNICallback: (name, cb) => (names.push(name), cb(null, tls.createSecureContext(context))),
    });
    await new Promise<void>((resolve) => server.listen(0, named.address, resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const egress = new Egress({ allowlist: LOOPBACK, proxies: { all: [`http://127.0.0.1:${tiny2.port}`] } });
      // The self-signed certificate is refused: proof that the tunnel did not turn verification off.
      await expect(egress.fetchText(`https://localhost:${port}/`)).rejects.toMatchObject({
        code: 'upstream_error',
        message: expect.stringMatching(/certificate/),
      });
      expect(names).toEqual(['localhost']);
      const authority = named.address.includes(':') ? `[${named.address}]:${port}` : `${named.address}:${port}`;
      expect(tunnelsTo(tiny2, authority)).toBe(1);
    } finally {
      server.close();
      fs.rmSync(certs, { recursive: true, force: true });
    }
  });

  test('an https:// proxy with credentials is reached over TLS verified against PROXY_CA_FILE, and refused without it', async () => {
    // tinyproxy (with Basic credentials) behind a TLS front whose certificate no system trusts: the
    // https:// proxy of a provider with a private CA.
    const certs = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-proxy-tls-'));
    const [key, cert] = [path.join(certs, 'key.pem'), path.join(certs, 'cert.pem')];
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=test proxy',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const front = tls.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (client) => {
      const upstream = net.connect(tiny.port, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      client.once('error', () => upstream.destroy());
      upstream.once('error', () => client.destroy());
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    const url = `https://${USER}:${PASS}@127.0.0.1:${(front.address() as AddressInfo).port}`;
    try {
      const authority = `127.0.0.1:${origin.port}`;
      const before = tunnelsTo(tiny, authority);
      const trusted = new Egress({ allowlist: LOOPBACK, proxies: { all: [url], ca: fs.readFileSync(cert, 'utf8') } });
      expect((await trusted.fetchText(origin.url('/page'))).text).toBe('through the proxy');
      expect(tunnelsTo(tiny, authority) - before).toBe(1);
      // Without the CA the proxy's certificate is not trusted: the proxy counts as unreachable, and
      // nothing was sent to it (no tunnel in its log), credentials included.
      const skipped: string[] = [];
      const untrusted = new Egress({
        allowlist: LOOPBACK,
        proxies: { all: [url] },
        onProxySkip: (label, reason) => skipped.push(`${label} ${reason}`),
      });
      const refused = await untrusted.fetchText(origin.url('/page')).catch((err: unknown) => err);
      expect(refused).toMatchObject({ code: 'upstream_error', message: 'No outbound proxy could be reached.' });
      // The operator's log says which proxy and why: its certificate.
      expect(skipped).toEqual([expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+ .*CERT/)]);
      expect(visible(refused)).not.toContain(PASS);
      expect(tunnelsTo(tiny, authority) - before).toBe(1);
    } finally {
      front.close();
      fs.rmSync(certs, { recursive: true, force: true });
    }
  });

  test('proxies are used in turn', async () => {
    const egress = new Egress({
      allowlist: LOOPBACK,
      proxies: { all: [withAuth(tiny), `http://127.0.0.1:${tiny2.port}`] },
    });
    const authority = `127.0.0.1:${origin.port}`;
    const before = [tunnelsTo(tiny, authority), tunnelsTo(tiny2, authority)];
    for (let i = 0; i < 4; i++) await egress.fetchText(origin.url('/page'), { headers: { connection: 'close' } });
    expect([tunnelsTo(tiny, authority) - before[0], tunnelsTo(tiny2, authority) - before[1]]).toEqual([2, 2]);
  });

  test('a proxy that cannot be reached is skipped for 30 s, then tried again', async () => {
    let now = 1_000_000;
    const skipped: string[] = [];
    const pool = new ProxyPool(
      [parseProxyUrl(`http://${USER}:${PASS}@127.0.0.1:${deadPort}`), parseProxyUrl(`http://127.0.0.1:${tiny2.port}`)],
      {
        now: () => now,
        onSkip: (label, reason) => skipped.push(`${label} ${reason}`),
      },
    );
    const authority = `127.0.0.1:${origin.port}`;
    const before = tunnelsTo(tiny2, authority);
    for (let i = 0; i < 4; i++) (await pool.tunnel('127.0.0.1', origin.port, 2_000)).destroy();
    expect(skipped).toHaveLength(1);
    now += 29_000;
    (await pool.tunnel('127.0.0.1', origin.port, 2_000)).destroy();
    expect(skipped).toHaveLength(1);
    now += 1_001;
    (await pool.tunnel('127.0.0.1', origin.port, 2_000)).destroy();
    (await pool.tunnel('127.0.0.1', origin.port, 2_000)).destroy();
    expect(skipped).toHaveLength(2);
    expect(tunnelsTo(tiny2, authority) - before).toBe(7);
    expect(skipped[0]).toContain(`http://127.0.0.1:${deadPort}`);
    expect(skipped.join(' ')).not.toContain(PASS);
    expect(skipped.join(' ')).not.toContain(USER);
  });

  test('credentials never reach an error, whether the proxy is dead or refuses them', async () => {
    const dead = new Egress({
      allowlist: LOOPBACK,
      proxies: { all: [`http://${USER}:${PASS}@127.0.0.1:${deadPort}`] },
    });
    const wrong = new Egress({
      allowlist: LOOPBACK,
      proxies: { all: [`http://${USER}:not-${PASS}@127.0.0.1:${tiny.port}`] },
    });
    const socksDead = new Egress({
      allowlist: LOOPBACK,
      proxies: { all: [`socks5://${USER}:${PASS}@127.0.0.1:${deadPort}`] },
    });
    const errors: unknown[] = [];
    for (const egress of [dead, wrong, socksDead]) {
      errors.push(await egress.fetchText(origin.url('/page')).catch((err: unknown) => err));
      errors.push(await egress.connect('127.0.0.1', origin.port).catch((err: unknown) => err));
    }
    expect(errors.map((err) => (err as { code: string }).code)).toEqual(Array(6).fill('upstream_error'));
    expect((errors[0] as Error).message).toBe('No outbound proxy could be reached.');
    expect((errors[2] as Error).message).toBe('The outbound proxy refused the connection.');
    for (const err of errors) {
      expect(visible(err)).not.toContain(PASS);
      expect(visible(err)).not.toContain(`${USER}:`);
    }
  });

  test('a bad proxy URL is refused without repeating it', () => {
    for (const raw of [
      `http://${USER}:${PASS}%zz@proxy.example:3128`,
      `ftp://${USER}:${PASS}@proxy.example:21`,
      `http://${USER}:${PASS}@proxy.example:8080/path`,
      `${USER}:${PASS}@`,
    ]) {
      let message = '';
      try {
        parseProxyUrl(raw);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/proxy URL/);
      expect(message).not.toContain(PASS);
    }
    expect(parseProxyUrl(`socks5://${USER}:${encodeURIComponent('p@ss:word')}@[::1]:1080`)).toEqual({
      protocol: 'socks5:',
      host: '::1',
      port: 1080,
      label: 'socks5://[::1]:1080',
      auth: { user: USER, pass: 'p@ss:word' },
    });
  });
});
