// The outbound proxies of one kind of traffic (extraction or media: DESIGN.md "Proxies"), used in
// turn, one that cannot be reached skipped for 30 s; and the keep-alive agents both transports use
// when a pool is set. Each new connection first resolves its host with the guard's checked lookup (a
// private destination fails here, before any proxy is asked), then tunnels through the next proxy to
// that checked address; TLS then runs inside the tunnel with SNI by name, and the Host header stays
// the URL's name, so the origin sees an ordinary request.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { parseProxyUrl, ProxyConnectError, tunnelThrough, type UpstreamProxy } from './upstream-proxy.js';

export const PROXY_SKIP_MS = 30_000;

export interface ProxyPoolOptions {
  /** How long a proxy that could not be reached is passed over (default 30 s). */
  skipMs?: number;
  now?: () => number;
  /** Told when a proxy is skipped: by its label, which carries no credentials. */
  onSkip?: (label: string, reason: string) => void;
}

export class ProxyPool {
  private turn = 0;
  private readonly skippedUntil = new Map<UpstreamProxy, number>();
  private readonly skipMs: number;
  private readonly now: () => number;

  constructor(
    readonly proxies: readonly UpstreamProxy[],
    private readonly options: ProxyPoolOptions = {},
  ) {
    if (proxies.length === 0) throw new TypeError('a proxy pool needs at least one proxy');
    this.skipMs = options.skipMs ?? PROXY_SKIP_MS;
    this.now = options.now ?? Date.now;
  }

  /** The proxies to try for one connection: round robin, those being skipped left out unless all are. */
  order(): UpstreamProxy[] {
    const start = this.turn;
    this.turn = (this.turn + 1) % this.proxies.length;
    const rotated = [...this.proxies.slice(start), ...this.proxies.slice(0, start)];
    const now = this.now();
    const live = rotated.filter((proxy) => (this.skippedUntil.get(proxy) ?? 0) <= now);
    return live.length > 0 ? live : rotated;
  }

  /** A tunnel to a checked ip:port through the first proxy in turn that can be reached. */
  async tunnel(ip: string, port: number, timeoutMs: number): Promise<net.Socket> {
    let last: ProxyConnectError | undefined;
    for (const proxy of this.order()) {
      try {
        return await tunnelThrough(proxy, ip, port, timeoutMs);
      } catch (err) {
        if (!(err instanceof ProxyConnectError) || !err.unreachable) throw err;
        this.skippedUntil.set(proxy, this.now() + this.skipMs);
        this.options.onSkip?.(proxy.label, err.message);
        last = err;
      }
    }
    throw last!;
  }
}

type Lookup = (
  hostname: string,
  options: { all?: boolean },
  callback: (err: Error | null, address: string) => void,
) => void;

/** Resolves and checks a destination with the guard's lookup: the only address a proxy is given. */
export function resolveChecked(lookup: Lookup, host: string): Promise<string> {
  return new Promise((resolve, reject) => lookup(host, {}, (err, address) => (err ? reject(err) : resolve(address))));
}

export interface PooledAgentsInit {
  pool: ProxyPool;
  lookup: Lookup;
  connectTimeoutMs: number;
  agentOptions: http.AgentOptions;
}

type ConnectOptions = tls.ConnectionOptions & { host?: string; port?: number | string; servername?: string };
type Callback = (err: Error | null, socket: Duplex) => void;

/** The http and https agents of one pool: keep-alive, each new socket a checked tunnel. */
export function pooledAgents(init: PooledAgentsInit): { http: http.Agent; https: https.Agent } {
  const open = (options: ConnectOptions, secure: boolean, callback: Callback) => {
    const host = (options.host ?? 'localhost').replace(/^\[(.*)\]$/, '$1');
    const port = Number(options.port) || (secure ? 443 : 80);
    resolveChecked(init.lookup, host)
      .then((ip) => init.pool.tunnel(ip, port, init.connectTimeoutMs))
      .then((socket) => {
        if (!secure) return callback(null, socket);
        // SNI by name (never an IP literal); certificate checks as for a direct connection.
        const servername = net.isIP(host) === 0 ? options.servername || host : undefined;
        callback(null, tls.connect({ ...options, socket, servername }));
      })
      .catch((err: Error) => callback(err, undefined as never));
  };
  class PooledHttpAgent extends http.Agent {
    override createConnection(options: http.ClientRequestArgs, callback?: Callback): undefined {
      open(options as ConnectOptions, false, callback!);
      return undefined;
    }
  }
  class PooledHttpsAgent extends https.Agent {
    override createConnection(options: https.RequestOptions, callback?: Callback): undefined {
      open(options as ConnectOptions, true, callback!);
      return undefined;
    }
  }
  return { http: new PooledHttpAgent(init.agentOptions), https: new PooledHttpsAgent(init.agentOptions) };
}

/** Which traffic a request is: pages, platform APIs and yt-dlp, or the media streams and jobs read. */
export type Purpose = 'extract' | 'media';

export interface ProxySettings {
  /** PROXY_URLS: every outbound request. */
  all?: readonly string[];
  /** EXTRACT_PROXY_URLS, MEDIA_PROXY_URLS: override `all` for their part. */
  extract?: readonly string[];
  media?: readonly string[];
  /** PROXY_CA_FILE's PEM: trusted beside the system's roots for https:// proxies (a private CA). */
  ca?: string;
}

/** The pool of each purpose (one pool where both use the same list), or none when no proxy is set. */
export function proxyPools(settings: ProxySettings, options: ProxyPoolOptions): Partial<Record<Purpose, ProxyPool>> {
  const byList = new Map<string, ProxyPool>();
  const poolOf = (urls: readonly string[] | undefined): ProxyPool | undefined => {
    if (!urls?.length) return undefined;
    const key = urls.join('\n');
    let pool = byList.get(key);
    if (!pool)
      byList.set(
        key,
        (pool = new ProxyPool(
          urls.map((url) => trusting(parseProxyUrl(url), settings.ca)),
          options,
        )),
      );
    return pool;
  };
  const pick = (own: readonly string[] | undefined) => poolOf(own?.length ? own : settings.all);
  return { extract: pick(settings.extract), media: pick(settings.media) };
}

/** An https:// proxy that also trusts `ca`; other proxies, or none given, as they are. */
function trusting(proxy: UpstreamProxy, ca: string | undefined): UpstreamProxy {
  return ca && proxy.protocol === 'https:' ? { ...proxy, ca: [...tls.rootCertificates, ca] } : proxy;
}
