// Real outbound proxies for the tests of PROXY_URLS, on 127.0.0.1: Debian's tinyproxy (HTTP CONNECT, Basic
// credentials) and dante (SOCKS5), each in the foreground with its own config and log file, which the
// tests read to see what the proxy was asked; and a SOCKS5 server from npm for username/password
// authentication, which dante only offers against system accounts.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createServer as createSocksServer } from '@pondwader/socks5-server';
import { freePort } from './redis.js';

export const PROXY_TOOLS = [
  { bin: 'tinyproxy', install: 'apt-get install tinyproxy' },
  { bin: '/usr/sbin/danted', install: 'apt-get install dante-server' },
];

export interface RealProxy {
  port: number;
  /** The proxy's log so far. */
  log(): string;
  stop(): Promise<void>;
}

/** tinyproxy, with Basic credentials when given. */
export async function startTinyproxy(auth?: { user: string; pass: string }): Promise<RealProxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-tinyproxy-'));
  const port = await freePort();
  const logFile = path.join(dir, 'tinyproxy.log');
  const lines = [
    `Port ${port}`,
    'Listen 127.0.0.1',
    'Timeout 30',
    `LogFile "${logFile}"`,
    'LogLevel Connect',
    'MaxClients 50',
    'Allow 127.0.0.1',
  ];
  if (auth) lines.push(`BasicAuth ${auth.user} ${auth.pass}`);
  fs.writeFileSync(path.join(dir, 'tinyproxy.conf'), `${lines.join('\n')}\n`);
  const child = spawn('tinyproxy', ['-d', '-c', path.join(dir, 'tinyproxy.conf')], { stdio: 'ignore' });
  return running(child, port, logFile, dir);
}

/** dante's danted as a SOCKS5 server without authentication (its username method needs system users). */
export async function startDante(): Promise<RealProxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelay-dante-'));
  const port = await freePort();
  const logFile = path.join(dir, 'danted.log');
  const root = process.getuid?.() === 0;
  const config = [
    `logoutput: ${logFile}`,
    `internal: 127.0.0.1 port = ${port}`,
    'external: 127.0.0.1',
    'socksmethod: none',
    'clientmethod: none',
    // As root danted drops to an unprivileged user it needs to know; as anyone else it stays who it is.
    ...(root ? ['user.privileged: root', 'user.unprivileged: root'] : []),
    // A rule's `log:` runs to the end of its line.
    'client pass {\n  from: 127.0.0.0/8 to: 0.0.0.0/0\n  log: connect error\n}',
    'socks pass {\n  from: 127.0.0.0/8 to: 0.0.0.0/0\n  command: connect\n  log: connect error\n}',
  ];
  fs.writeFileSync(path.join(dir, 'danted.conf'), `${config.join('\n')}\n`);
  const child = spawn('/usr/sbin/danted', ['-f', path.join(dir, 'danted.conf'), '-N', '1'], { stdio: 'ignore' });
  return running(child, port, logFile, dir);
}

/**
 * A SOCKS5 server that wants a username and password (RFC 1929): @pondwader/socks5-server, in this
 * process. Its log has a line per sign-in (`auth <user> ok|refused`) and per connect (`connect ip:port`).
 */
export async function startSocksWithAuth(auth: { user: string; pass: string }): Promise<RealProxy> {
  const lines: string[] = [];
  const server = createSocksServer();
  server.setAuthHandler((conn) => {
    const ok = conn.username === auth.user && conn.password === auth.pass;
    lines.push(`auth ${conn.username} ${ok ? 'ok' : 'refused'}`);
    return ok;
  });
  server.setRulesetValidator((conn) => {
    lines.push(`connect ${conn.destAddress}:${conn.destPort}`);
    return true;
  });
  // Our own listener hands it each connection, so stop() can end the tunnels a client keeps alive.
  const sockets = new Set<net.Socket>();
  const listener = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    server._handleConnection(socket);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => listener.listen(port, '127.0.0.1', resolve));
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      listener.close(() => resolve());
    });
  return { port, log: () => lines.join('\n'), stop };
}

async function running(child: ChildProcess, port: number, logFile: string, dir: string): Promise<RealProxy> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the proxy on port ${port} did not start`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { port, log: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : ''), stop };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
