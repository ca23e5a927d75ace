// CONNECT tunnels of the guarded proxy, for a client that does its own TLS (yt-dlp). The proxy cannot
// see inside a tunnel, so everything is decided before it opens: the session must be live, the port
// must be an https port (or the host allow-listed by name or address), and egress.connect checks the
// DNS answer and connects to the checked address, so a blocked target is refused before anything is
// dialled. Plain http never needs a tunnel (clients send it to a proxy in absolute form, where egress
// makes the request), which is why port 80 is not among the defaults.
import type { Socket } from 'node:net';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ReelayError } from '@reelay/contracts';
import { isListedHost } from './address.js';
import { toReelayError } from './egress.js';
import type { ProxyEgress, ProxyHooks, ProxyLogger } from './proxy-deps.js';
import type { ProxySession } from './proxy-session.js';

export interface TunnelPolicy {
  egress: ProxyEgress;
  /** Ports any public host may be tunnelled to. */
  ports: ReadonlySet<number>;
  logger: ProxyLogger;
  hooks: ProxyHooks;
  /** A tunnel silent this long in both directions is closed. */
  idleMs?: number;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  405: 'Method Not Allowed',
  407: 'Proxy Authentication Required',
  502: 'Bad Gateway',
  504: 'Gateway Timeout',
};

/** Answers a CONNECT without opening anything, and closes the connection. */
export function refuseTunnel(client: Socket, status: number): void {
  client.on('error', () => client.destroy()); // a client that resets is no concern here
  const challenge = status === 407 ? 'Proxy-Authenticate: Basic realm="reelay"\r\n' : '';
  client.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\n${challenge}Connection: close\r\nContent-Length: 0\r\n\r\n`,
  );
}

/** `host:port` or `[v6]:port`, as a CONNECT request names its target; undefined when malformed. */
export function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:/?#@[\]]+)):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: match[1] ?? match[2], port };
}

/** Checks and opens one tunnel for an authenticated session; resolves once it is set up or refused. */
export async function openTunnel(
  policy: TunnelPolicy,
  session: ProxySession,
  authority: string,
  client: Socket,
  head: Buffer,
): Promise<void> {
  const { egress, logger, hooks } = policy;
  // A client that resets while the target is being checked is no failure; pipeline() reports later ones.
  client.on('error', () => client.destroy());
  if (session.signal.aborted) return refuseTunnel(client, 403);
  const target = parseAuthority(authority);
  if (!target) return refuseTunnel(client, 400);
  const blocked = (error: ReelayError) => {
    session.recordError(error);
    hooks.onBlocked?.();
    logger.warn({ ...session.logFields, target: authority }, 'proxy: blocked a tunnel');
    refuseTunnel(client, 403);
  };
  if (!policy.ports.has(target.port) && !isListedHost(target.host, egress.allow!)) {
    return blocked(
      new ReelayError(
        'url_blocked',
        `Connections to port ${target.port} are not allowed; only ${[...policy.ports].join(', ')}.`,
      ),
    );
  }

  let upstream: Socket;
  try {
    upstream = await egress.connect!(target.host, target.port);
  } catch (err) {
    const error = toReelayError(err);
    if (error.code === 'url_blocked') return blocked(error);
    if (session.signal.aborted) return void client.destroy();
    session.recordError(error);
    logger.info({ ...session.logFields, target: authority, code: error.code }, 'proxy: tunnel target failed');
    return refuseTunnel(client, error.code === 'upstream_timeout' ? 504 : 502);
  }
  upstream.on('error', () => upstream.destroy());
  if (session.signal.aborted || client.destroyed) {
    upstream.destroy();
    return void client.destroy();
  }

  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  session.signal.addEventListener('abort', close, { once: true });
  client.once('close', () => {
    upstream.destroy();
    session.signal.removeEventListener('abort', close);
  });
  upstream.once('close', () => client.destroy());
  for (const socket of [client, upstream]) {
    socket.setTimeout(policy.idleMs ?? 60_000, close);
  }

  const counter = (toClient: boolean) =>
    new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        if (!session.count(chunk.length)) return done(new Error('byte limit reached'));
        if (toClient) hooks.onBytes?.(chunk.length);
        done(null, chunk);
      },
    });
  client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  if (head.length > 0) {
    if (!session.count(head.length)) return close();
    upstream.write(head);
  }
  logger.debug({ ...session.logFields, target: authority }, 'proxy: tunnel open');
  // Either direction ending (or failing) ends the tunnel; failures are the peers' business, and a
  // byte limit has already been recorded on the session.
  const ended = (err: unknown) => {
    if (err)
      logger.debug({ ...session.logFields, target: authority, err: (err as Error).message }, 'proxy: tunnel ended');
    close();
  };
  pipeline(client, counter(false), upstream).then(() => undefined, ended);
  pipeline(upstream, counter(true), client).then(() => undefined, ended);
}
