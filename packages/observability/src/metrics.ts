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

/**
 * `reelay_queue_worker_errors_total{queue}`: errors the BullMQ workers of this process reported, by
 * the queue they take jobs from (a refused connection, a blocking fetch cut short, a script that
 * failed). A worker that keeps reporting them takes no jobs while its queue merely looks quiet: the
 * ReelayQueueWorkerFailing alert (deploy/prometheus/alerts.yml) watches this.
 */
export function queueWorkerErrors(registry: client.Registry): client.Counter<'queue'> {
  return new client.Counter({
    name: 'reelay_queue_worker_errors_total',
    help: 'Errors reported by the BullMQ workers of this process, by the queue they take jobs from; a worker that keeps counting takes no jobs.',
    labelNames: ['queue'],
    registers: [registry],
  });
}

/**
 * Counts each error `worker` (a BullMQ Worker) reports under `queue`, starting the series at 0 so
 * that the first error already shows as an increase.
 */
export function countWorkerErrors(
  worker: { on(event: 'error', listener: (err: Error) => void): unknown },
  queue: string,
  counter: client.Counter<'queue'>,
): void {
  counter.inc({ queue }, 0);
  worker.on('error', () => counter.inc({ queue }));
}
