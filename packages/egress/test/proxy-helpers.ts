// Small TCP servers and a CONNECT client for the proxy tests.
import http from 'node:http';
import net from 'node:net';

export interface TcpServer {
  port: number;
  /** Connections accepted so far (a trap's proof that nothing reached it). */
  connections: number;
  close(): Promise<void>;
}

/** A TCP server that echoes what it receives (echo) or only counts connections (trap). */
export async function startTcp(host: string, mode: 'echo' | 'trap'): Promise<TcpServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (mode === 'echo') socket.pipe(socket);
    else socket.end();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const state: TcpServer = {
    port: (server.address() as net.AddressInfo).port,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  return state;
}

export interface ConnectAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The tunnel, when the proxy answered 200. */
  socket?: net.Socket;
}

/** Sends `CONNECT authority` to the proxy, optionally with Basic credentials `user:pass`. */
export function connectThrough(proxyPort: number, authority: string, auth?: string): Promise<ConnectAnswer> {
  return new Promise((resolve, reject) => {
    const headers = auth ? { 'proxy-authorization': `Basic ${Buffer.from(auth).toString('base64')}` } : undefined;
    const req = http.request({
      host: '127.0.0.1',
      port: proxyPort,
      method: 'CONNECT',
      path: authority,
      headers,
      agent: false,
    });
    req.on('connect', (res: http.IncomingMessage, socket: net.Socket) => {
      if (res.statusCode === 200) return resolve({ status: 200, headers: res.headers, socket });
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
    });
    req.on('response', (res) => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    req.on('error', reject);
    req.end();
  });
}

/** Writes a message into a tunnel and reads the same number of bytes back. */
export function echo(socket: net.Socket, message: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    socket.on('data', (chunk: Buffer) => {
      got += chunk.toString();
      if (got.length >= message.length) resolve(got);
    });
    socket.once('error', reject);
    socket.write(message);
  });
}

/** Resolves once the socket has closed. */
export function closed(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));
}

/** user:pass from a proxy URL. */
export function credentialsOf(proxyUrl: string): string {
  const url = new URL(proxyUrl);
  return `${url.username}:${url.password}`;
}
