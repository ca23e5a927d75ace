// One outbound proxy of PROXY_URLS (http://, https:// or socks5://, credentials allowed) and the
// handshake that asks it for a tunnel to an address reelay has already resolved and checked: the
// proxy is only ever given an IP (CONNECT ip:port, SOCKS5 with an IPv4/IPv6 address), so it cannot
// resolve a name to a private address behind the guard's back. Credentials live only in `auth`: the
// label, every message and every error name the proxy by scheme, host and port alone.
import net from 'node:net';
import tls from 'node:tls';
import { SocksClient } from 'socks';

export interface UpstreamProxy {
  protocol: 'http:' | 'https:' | 'socks5:';
  host: string;
  port: number;
  /** scheme://host:port, never the credentials: what logs and messages name. */
  label: string;
  auth?: { user: string; pass: string };
  /** For an https:// proxy: the certificates its own TLS is verified against (the system's roots when unset). */
  ca?: readonly string[];
}

const DEFAULT_PORTS = { 'http:': 80, 'https:': 443, 'socks5:': 1080 } as const;

/** Parses one proxy URL. Its TypeError names what is wrong, never the URL (it may hold a password). */
export function parseProxyUrl(raw: string): UpstreamProxy {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new TypeError('a proxy URL is not a valid URL');
  }
  const protocol = url.protocol;
  if (protocol !== 'http:' && protocol !== 'https:' && protocol !== 'socks5:') {
    throw new TypeError(`a proxy URL has the scheme ${protocol.replace(/:$/, '')}; use http, https or socks5`);
  }
  if (!url.hostname) throw new TypeError('a proxy URL has no host');
  if ((url.pathname !== '' && url.pathname !== '/') || url.search || url.hash)
    throw new TypeError('a proxy URL has a path, query or fragment');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port ? Number(url.port) : DEFAULT_PORTS[protocol];
  const label = `${protocol}//${url.hostname}:${port}`;
  let auth: UpstreamProxy['auth'];
  try {
    auth =
      url.username || url.password
        ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
        : undefined;
  } catch {
    throw new TypeError('a proxy URL has malformed percent-encoding in its credentials');
  }
  return { protocol, host, port, label, auth };
}

/** Why a tunnel failed: the proxy itself could not be reached (it is skipped a while) or it refused. */
export class ProxyConnectError extends Error {
  readonly code = 'ERR_REELAY_PROXY';
  constructor(
    message: string,
    /** The proxy could not be reached (TCP, TLS or a timeout before its answer): skip it a while. */
    readonly unreachable: boolean,
  ) {
    super(message);
  }
}

/**
 * A socket tunnelled through `proxy` to ip:port, ready for the caller's HTTP or TLS. Fails with a
 * ProxyConnectError within timeoutMs, naming the proxy by its label only.
 */
export async function tunnelThrough(
  proxy: UpstreamProxy,
  ip: string,
  port: number,
  timeoutMs: number,
): Promise<net.Socket> {
  const socket = await reach(proxy, timeoutMs);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    socket.destroy();
  }, timeoutMs);
  try {
    if (proxy.protocol === 'socks5:') return await socksConnect(proxy, socket, ip, port, timeoutMs);
    await httpConnect(proxy, socket, ip, port);
    return socket;
  } catch (err) {
    socket.destroy();
    if (timedOut) throw new ProxyConnectError(`The proxy ${proxy.label} did not answer in time.`, true);
    throw err instanceof ProxyConnectError
      ? err
      : new ProxyConnectError(`The proxy ${proxy.label} failed: ${(err as Error).message}`, false);
  } finally {
    clearTimeout(timer);
  }
}

/** The TCP (and for https://, TLS) connection to the proxy itself. Its host is exempt from the guard. */
function reach(proxy: UpstreamProxy, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const secure = proxy.protocol === 'https:';
    const servername = net.isIP(proxy.host) === 0 ? proxy.host : undefined;
    const socket: net.Socket = secure
      ? tls.connect({
          host: proxy.host,
          port: proxy.port,
          servername,
          ALPNProtocols: ['http/1.1'],
          ...(proxy.ca ? { ca: [...proxy.ca] } : {}),
        })
      : net.connect({ host: proxy.host, port: proxy.port });
    const timer = setTimeout(
      () => socket.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })),
      timeoutMs,
    );
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new ProxyConnectError(`The proxy ${proxy.label} could not be connected to (${err.code ?? 'error'}).`, true),
      );
    });
  });
}

/** HTTP CONNECT to the checked address; what follows the answer's head belongs to the tunnel. */
function httpConnect(proxy: UpstreamProxy, socket: net.Socket, ip: string, port: number): Promise<void> {
  const authority = `${net.isIPv6(ip) ? `[${ip}]` : ip}:${port}`;
  const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
  if (proxy.auth)
    lines.push(`Proxy-Authorization: Basic ${Buffer.from(`${proxy.auth.user}:${proxy.auth.pass}`).toString('base64')}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
    };
    const onError = (err: NodeJS.ErrnoException) => {
      cleanup();
      reject(new ProxyConnectError(`The proxy ${proxy.label} closed the connection (${err.code ?? 'error'}).`, false));
    };
    const onClose = () => onError(Object.assign(new Error('closed'), { code: 'ECONNRESET' }));
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > 16 * 1024) onError(Object.assign(new Error('oversized'), { code: 'HPE_HEADER_OVERFLOW' }));
        return;
      }
      cleanup();
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head.toString('latin1', 0, end))?.[1] ?? 0);
      if (status !== 200) return reject(new ProxyConnectError(refusal(proxy, status), false));
      const rest = head.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolve();
    };
    socket.on('data', onData);
    socket.once('error', onError);
    socket.once('close', onClose);
  });
}

async function socksConnect(
  proxy: UpstreamProxy,
  socket: net.Socket,
  ip: string,
  port: number,
  timeoutMs: number,
): Promise<net.Socket> {
  try {
    const { socket: tunnel } = await SocksClient.createConnection({
      proxy: { host: proxy.host, port: proxy.port, type: 5, userId: proxy.auth?.user, password: proxy.auth?.pass },
      command: 'connect',
      destination: { host: ip, port },
      existing_socket: socket,
      timeout: timeoutMs,
    });
    return tunnel;
  } catch (err) {
    // The socks client's own messages name no credentials, but they are not ours to promise: say it plainly.
    const detail = /authentication/i.test((err as Error).message)
      ? 'refused the credentials'
      : 'refused the connection';
    throw new ProxyConnectError(`The proxy ${proxy.label} ${detail}.`, false);
  }
}

function refusal(proxy: UpstreamProxy, status: number): string {
  if (status === 407) return `The proxy ${proxy.label} refused the credentials (407).`;
  return status
    ? `The proxy ${proxy.label} refused the tunnel (${status}).`
    : `The proxy ${proxy.label} sent a malformed answer.`;
}
