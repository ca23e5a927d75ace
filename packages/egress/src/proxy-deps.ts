// What the guarded proxy's parts are given from outside: egress, a logger and the hooks they report
// to. A leaf module (it names egress's types only), so that every part of the proxy, the window of
// segments served ahead included, can take these without importing the proxy's other parts.
import type { Egress } from './egress.js';

/** What the proxy needs of egress: open() for requests; connect() and the allowlist for tunnels. */
export type ProxyEgress = Pick<Egress, 'open'> & Partial<Pick<Egress, 'connect' | 'allow'>>;

/** A pino-compatible logger (the egress package does not depend on the observability one). */
export interface ProxyLogger {
  debug(fields: Record<string, unknown>, msg: string): void;
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

export interface ProxyHooks {
  onBytes?: (bytes: number) => void;
  onBlocked?: () => void;
}

/** The logger used when none is given. */
export const SILENT_LOGGER: ProxyLogger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
