// What the two HTTP transports of egress.ts share: the guard and limits they are built from, and the
// final response (after redirects) each hands back with the host slot it still holds.
import type http from 'node:http';
import type https from 'node:https';
import type { Readable } from 'node:stream';
import type { CookieFile } from './cookies.js';
import type { HostLimiter, HostSlot } from './host-limit.js';
import type { Purpose } from './upstream-pool.js';

/** got (the default) or the former node:http client, kept runnable as the benchmark's baseline. */
export type EgressClient = 'got' | 'http';

export interface TransportDeps {
  agents: { http: http.Agent; https: https.Agent };
  /** The agents of a purpose's proxy pool, or undefined to connect directly (`agents`). */
  proxied: (purpose: Purpose) => { http: http.Agent; https: https.Agent } | undefined;
  /** COOKIES_FILE, whose cookies each hop gets by RFC 6265 rules. */
  cookies?: CookieFile;
  /** The guarded, pinning lookup (address.ts rules), as dns.lookup's signature. */
  lookup: (...args: never[]) => void;
  hosts: HostLimiter;
  /** Throws url_blocked for a URL that may not be contacted (every hop). */
  assertUrlAllowed: (url: URL) => void;
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  idleTimeoutMs: number;
  maxRedirects: number;
}

export interface Exchange {
  method: 'GET' | 'HEAD' | 'POST';
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Whole exchange, queueing and every hop and the body included. */
  deadlineMs?: number;
  followRedirects: boolean;
  purpose: Purpose;
}

export interface FinalResponse {
  url: URL;
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** The raw (still encoded) body. */
  body: Readable;
  /** The final hop's host slot: moved to the held lane, released with the body. */
  slot: HostSlot;
}

export interface Transport {
  open(url: URL, exchange: Exchange): Promise<FinalResponse>;
}

export function timeoutError(message: string): Error {
  return Object.assign(new Error(message), { code: 'ETIMEDOUT' });
}

export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
