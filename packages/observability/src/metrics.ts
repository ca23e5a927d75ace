// A Prometheus registry per app instance (no global registry, so tests can build several apps in one
// process), with the process's default metrics prefixed the same way.
import client from 'prom-client';

export { client as prom };
export type { Registry } from 'prom-client';

/**
 * `eventLoopPrecisionMs`: how often the event-loop lag histogram samples (prom-client's default,
 * 10 ms, wakes an otherwise idle process 100 times a second: ~0.18 s of CPU a minute measured here).
 */
export function createRegistry(
  defaultLabels: Record<string, string> = {},
  options: { eventLoopPrecisionMs?: number } = {},
): client.Registry {
  const registry = new client.Registry();
  registry.setDefaultLabels(defaultLabels);
  client.collectDefaultMetrics({
    register: registry,
    prefix: 'reelay_',
    ...(options.eventLoopPrecisionMs ? { eventLoopMonitoringPrecision: options.eventLoopPrecisionMs } : {}),
  });
  return registry;
}

/** Latency buckets in seconds for HTTP handlers and extracts: 1 ms to 30 s. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Buckets for jobs, which run seconds to many minutes. */
export const JOB_BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
