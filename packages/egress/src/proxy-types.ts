// The guarded proxy's vocabulary: the options a caller starts it with, the body rewriter the worker
// plugs in, and what one proxied request sends back. A module of its own so that the proxy's parts
// (server, forwarding, rewriting, tunnels) import types without importing each other. What the proxy
// is given from outside (egress, logger, hooks) is one level down, in proxy-deps.ts, because the
// session's window (proxy-ahead.ts, below proxy-session.ts) needs it too.
import type http from 'node:http';
import type { Readable } from 'node:stream';
import type { ProxyEgress, ProxyHooks, ProxyLogger } from './proxy-deps.js';
import type { ProxySession, SessionInit } from './proxy-session.js';

/** Rewrites some response bodies on their way to the client (the worker's manifests). */
export interface BodyRewriter {
  /** Bytes to look at before deciding. */
  sniffBytes: number;
  /** Largest body buffered to rewrite; a larger one fails the request. */
  maxBytes: number;
  /** What such a body is called in messages ("manifest"). */
  name: string;
  detect(head: Buffer): boolean;
  /** The body to send. A ReelayError thrown refuses it: the session records why and is cut off. */
  rewrite(text: string, target: URL, session: ProxySession): string;
}

export interface ProxyOptions<S extends ProxySession = ProxySession> {
  egress: ProxyEgress;
  /** Whether CONNECT tunnels are served (to checked addresses and ports) or refused with 405. */
  allowConnect: boolean;
  /** Ports a tunnel may reach on a host that is not allow-listed (default: 443). */
  connectPorts?: readonly number[];
  logger?: ProxyLogger;
  hooks?: ProxyHooks;
  /** Builds a session; a client with needs of its own (the worker's ffmpeg environment) subclasses. */
  session?: (init: SessionInit) => S;
  /**
   * The origin URL an absolute-form request target names. Throws TypeError when the target is no
   * proxy request (400) and a ReelayError when it names a scheme that may not be fetched (403).
   * Default: an absolute http or https URL.
   */
  target?: (requestTarget: string) => URL;
  /** Rewrites a response's Location header (default: unchanged). */
  location?: (value: string, target: URL) => string;
  rewriter?: BodyRewriter;
  /**
   * Connections a client's fetch may use at once: segments of a planned playlist served ahead
   * (proxy-ahead.ts) and large files in parallel ranges (proxy-ranges.ts). Default 1: neither.
   */
  fetchConcurrency?: number;
}

/** What is sent back for one proxied request: possibly rewritten, possibly the upstream body as is. */
export interface ProxiedResponse {
  status: number;
  headers: http.OutgoingHttpHeaders;
  body: Readable;
  /** Whether the body is the rewriter's, not the origin's. */
  rewritten?: boolean;
}
