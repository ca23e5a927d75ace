// The worker's operations port: /healthz (200 while it can run jobs, 503 with the reason when its
// ffmpeg or ffprobe cannot be run; both say which ffmpeg and ffprobe and where they came from) and
// /metrics for Prometheus.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BinaryReport } from '@reelay/media';
import type { Logger } from '@reelay/observability';
import type { WorkerMetrics } from './metrics.js';

/** The operations port is taken: restarting will not free it, so the process should stop once. */
export class MetricsPortInUseError extends Error {
  constructor(host: string, port: number) {
    super(
      `METRICS_PORT ${port} is already in use on ${host} (another worker, or another \`pnpm start\`?). Set METRICS_PORT to a free port, or to 0 to pick one.`,
    );
    this.name = 'MetricsPortInUseError';
  }
}

export interface HealthState {
  healthy: boolean;
  /** Why the worker takes no jobs. */
  reason?: string;
}

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

export async function startHealthServer(options: {
  port: number;
  host: string;
  metrics: WorkerMetrics;
  health: () => HealthState;
  tools?: () => { ffmpeg: BinaryReport; ffprobe: BinaryReport };
  logger: Logger;
}): Promise<HealthServer> {
  const { metrics, logger } = options;
  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = http.createServer((req, res) => {
    if (req.url === '/healthz') {
      const state = options.health();
      const tools = options.tools?.();
      return state.healthy
        ? json(res, 200, { status: 'ok', ...tools })
        : json(res, 503, { status: 'unhealthy', reason: state.reason, ...tools });
    }
    if (req.url === '/metrics') {
      metrics.registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
        (err: unknown) => {
          logger.error({ err }, 'metrics failed');
          res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n');
        },
      );
      return;
    }
    json(res, 404, { success: false, error: { code: 'not_found', message: 'No such route.' } });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new MetricsPortInUseError(options.host, options.port) : err),
    );
    server.listen(options.port, options.host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
