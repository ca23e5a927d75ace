import dns from 'node:dns/promises';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startOrigin, type Origin } from '@reelay/testkit';
import { CookieFile, parseNetscapeCookies } from '../src/cookies.js';
import { Egress } from '../src/egress.js';

const DAY = 24 * 3600;
const future = () => Math.floor(Date.now() / 1000) + DAY;
const line = (domain: string, sub: boolean, p: string, secure: boolean, expires: number, name: string, value: string) =>
  [domain, sub ? 'TRUE' : 'FALSE', p, secure ? 'TRUE' : 'FALSE', String(expires), name, value].join('\t');

let dir: string;
let ip: Origin;
let named: Origin;
let file: string;

/** The Cookie header an origin saw on /echo paths: the route answers with it. */
const echo = (origin: Origin) => {
  for (const p of ['/echo', '/private/echo', '/set', '/to-named']) {
    origin.route(p, (req, res) => {
      if (p === '/set') res.setHeader('set-cookie', 'planted=1; Path=/');
      res.writeHead(200, { 'content-type': 'text/plain' }).end(req.headers.cookie ?? '');
    });
  }
};

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-cookies-test-'));
  file = path.join(dir, 'cookies.txt');
  ip = await startOrigin('127.0.0.1');
  // `localhost` is the second host name: wherever it resolves here, an origin listens.
  named = await startOrigin((await dns.lookup('localhost')).address);
  echo(ip);
  echo(named);
  named.redirect('/to-ip', `http://127.0.0.1:${ip.port}/echo`);
  fs.writeFileSync(
    file,
    [
      '# Netscape HTTP Cookie File',
      line('localhost', false, '/', false, future(), 'named', 'n1'),
      line('127.0.0.1', false, '/', false, 0, 'ip', 'i1'),
      line('localhost', false, '/private', false, future(), 'deep', 'd1'),
      line('localhost', false, '/', true, future(), 'secure', 's1'),
      line('localhost', false, '/', false, 1_000_000, 'expired', 'e1'),
      `#HttpOnly_${line('localhost', false, '/', false, future(), 'http_only', 'h1')}`,
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await Promise.all([ip?.close(), named?.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.each(['got', 'http'] as const)('COOKIES_FILE with the %s client', (client) => {
  const egress = () =>
    new Egress({ client, allowlist: ['127.0.0.1', '::1', 'localhost'], cookies: new CookieFile(file) });
  const seen = async (e: Egress, url: string) => (await e.fetchText(url)).text.split('; ').filter(Boolean).sort();

  test('a cookie goes only to its own host and path, never when expired or Secure over http', async () => {
    const e = egress();
    expect(await seen(e, `http://localhost:${named.port}/echo`)).toEqual(['http_only=h1', 'named=n1']);
    expect(await seen(e, `http://localhost:${named.port}/private/echo`)).toEqual([
      'deep=d1',
      'http_only=h1',
      'named=n1',
    ]);
    expect(await seen(e, `http://127.0.0.1:${ip.port}/echo`)).toEqual(['ip=i1']);
  });

  test("a redirect to another host carries that host's cookies, not the first one's", async () => {
    expect(await seen(egress(), `http://localhost:${named.port}/to-ip`)).toEqual(['ip=i1']);
  });

  test('what an origin sets is not kept for the next request', async () => {
    const e = egress();
    await e.fetchText(`http://127.0.0.1:${ip.port}/set`);
    expect(await seen(e, `http://127.0.0.1:${ip.port}/echo`)).toEqual(['ip=i1']);
  });
});

describe('the cookie file', () => {
  test('a Secure cookie goes over https only, localhost included', async () => {
    const cookies = new CookieFile(file);
    expect(await cookies.header('https://localhost/')).toContain('secure=s1');
    expect(await cookies.header('http://localhost/')).not.toContain('secure=s1');
  });

  test('a cookie for a domain goes to its subdomains only when the file says so', async () => {
    const text = [
      line('.example.com', true, '/', false, 0, 'wide', '1'),
      line('example.org', false, '/', false, 0, 'host', '2'),
    ].join('\n');
    const other = path.join(dir, 'domains.txt');
    fs.writeFileSync(other, text);
    const cookies = new CookieFile(other);
    expect(await cookies.header('http://www.example.com/')).toBe('wide=1');
    expect(await cookies.header('http://example.org/')).toBe('host=2');
    expect(await cookies.header('http://www.example.org/')).toBeUndefined();
    expect(await cookies.header('http://notexample.com/')).toBeUndefined();
  });

  test('is read again when it changes', async () => {
    const changing = path.join(dir, 'changing.txt');
    fs.writeFileSync(changing, line('127.0.0.1', false, '/', false, 0, 'first', '1'));
    const e = new Egress({ allowlist: ['127.0.0.1'], cookies: new CookieFile(changing, { checkMs: 0 }) });
    expect((await e.fetchText(`http://127.0.0.1:${ip.port}/echo`)).text).toBe('first=1');
    // A new file moved into place, as an export tool would write it.
    fs.writeFileSync(`${changing}.new`, line('127.0.0.1', false, '/', false, 0, 'second', '22'));
    fs.renameSync(`${changing}.new`, changing);
    expect((await e.fetchText(`http://127.0.0.1:${ip.port}/echo`)).text).toBe('second=22');
  });

  test('a file that disappears keeps the cookies read before, and the message names no cookie', async () => {
    const leaving = path.join(dir, 'leaving.txt');
    fs.writeFileSync(leaving, line('127.0.0.1', false, '/', false, 0, 'kept', 'secret-value'));
    const problems: string[] = [];
    const cookies = new CookieFile(leaving, { checkMs: 0, onProblem: (m) => problems.push(m) });
    fs.rmSync(leaving);
    expect(await cookies.header('http://127.0.0.1/')).toBe('kept=secret-value');
    expect(problems).toHaveLength(1);
    expect(problems[0]).not.toContain('secret-value');
  });

  test('a private copy for yt-dlp holds the cookies and is removed afterwards', async () => {
    const copy = await new CookieFile(file).privateCopy();
    expect(copy.path).not.toBe(file);
    expect(fs.readFileSync(copy.path, 'utf8')).toBe(fs.readFileSync(file, 'utf8'));
    expect(fs.statSync(copy.path).mode & 0o777).toBe(0o600);
    await copy.remove();
    expect(fs.existsSync(copy.path)).toBe(false);
    expect(fs.existsSync(path.dirname(copy.path))).toBe(false);
  });

  test('lines that are not cookies are counted, expired cookies left out', () => {
    const { cookies, bad } = parseNetscapeCookies(
      [
        'garbage',
        line('a.example', false, '/', false, 1, 'old', 'x'),
        line('a.example', false, '/', false, 0, 'ok', 'y'),
      ].join('\n'),
    );
    expect(cookies.map((c) => c.key)).toEqual(['ok']);
    expect(bad).toBe(1);
  });
});
