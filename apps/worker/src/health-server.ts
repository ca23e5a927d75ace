// The worker's operations port: /healthz (200 while it can run jobs, 503 with the reason when its
// ffmpeg or ffprobe cannot be run) and /metrics for Prometheus.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@reelay/observability';
import type { WorkerMetrics } from './metrics.js';

export interface HealthState {
  healthy: boolean;
  /** Why the worker takes no jobs. */
  reason?: string;
}

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

export async function startHealthServer(options: { port: number; host: string; metrics: WorkerMetrics; health: () => HealthState; logger: Logger }): Promise<HealthServer> {
  const { metrics, logger } = options;
  const json = (res: http.ServerResponse, status: number, body: unknown) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = http.createServer((req, res) => {
    if (req.url === '/healthz') {
      const state = options.health();
      return state.healthy ? json(res, 200, { status: 'ok' }) : json(res, 503, { status: 'unhealthy', reason: state.reason });
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
    server.once('error', reject);
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
