// The gateway's Prometheus metrics. Labels are bounded: route templates (never raw paths), status
// codes, platforms from the registry, outcomes from the error table.
import http from 'node:http';
import type { RequestHandler } from 'express';
import { createRegistry, LATENCY_BUCKETS, prom, queueWorkerErrors, type Registry } from '@reelay/observability';

/** 25 µs to 100 ms: the gate is one Redis round trip, far below the HTTP latency buckets. */
const GATE_BUCKETS = [0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1];

/** How a direct stream ended: counted whether or not the response finished. */
export type StreamOutcome = 'completed' | 'client_aborted' | 'origin_error' | 'too_large' | 'stalled';

export class GatewayMetrics {
  readonly registry: Registry;
  readonly httpRequests: prom.Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: prom.Histogram<'method' | 'route' | 'status'>;
  readonly extracts: prom.Counter<'platform' | 'outcome'>;
  readonly extractDuration: prom.Histogram<'platform' | 'outcome'>;
  readonly extractCache: prom.Counter<'outcome'>;
  readonly platformRequests: prom.Counter<'platform' | 'outcome'>;
  readonly streamedBytes: prom.Counter;
  readonly activeStreams: prom.Gauge;
  readonly streams: prom.Counter<'outcome'>;
  readonly eventStreams: prom.Gauge;
  readonly downloads: prom.Counter<'kind'>;
  readonly surfaceRequests: prom.Counter<'surface' | 'auth'>;
  readonly rateLimited: prom.Counter<'surface'>;
  readonly gateDuration: prom.Histogram<'surface'>;
  readonly jobCancels: prom.Counter<'state'>;
  /** Errors of the BullMQ workers this process runs, by queue (the subscription checks'). */
  readonly queueWorkerErrors: prom.Counter<'queue'>;

  constructor() {
    this.registry = createRegistry({ app: 'gateway' });
    const registers = [this.registry];
    this.httpRequests = new prom.Counter({
      name: 'reelay_http_requests_total',
      help: 'HTTP requests answered, by route template and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new prom.Histogram({
      name: 'reelay_http_request_duration_seconds',
      help: "Time from the request's arrival until the last byte of the response was handed to the OS, or the connection closed first; for direct streams that is the whole transfer, not the time to first byte. By route template.",
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.extracts = new prom.Counter({
      name: 'reelay_extracts_total',
      help: 'Extractions by platform and outcome (success or an error code).',
      labelNames: ['platform', 'outcome'],
      registers,
    });
    this.extractDuration = new prom.Histogram({
      name: 'reelay_extract_duration_seconds',
      help: 'Extraction time by platform and outcome.',
      labelNames: ['platform', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.extractCache = new prom.Counter({
      name: 'reelay_extract_cache_total',
      help: "Successful extracts by how the extract cache answered: hit, miss (fetched and stored), joined (another request's fetch, on any replica), bypass (Cache-Control: no-cache), unshared (fetched alone: Redis unavailable or the wait ran out), off (EXTRACT_CACHE_SECONDS=0).",
      labelNames: ['outcome'],
      registers,
    });
    this.platformRequests = new prom.Counter({
      name: 'reelay_platform_requests_total',
      help: 'Requests to platform APIs by platform and outcome: ok, retried (ok after one wait for a short Retry-After), rate_limited (429 or 503, answered as upstream_rate_limited), error (another error status, or no answer).',
      labelNames: ['platform', 'outcome'],
      registers,
    });
    this.streamedBytes = new prom.Counter({
      name: 'reelay_stream_bytes_total',
      help: 'Bytes sent to clients by direct streams.',
      registers,
    });
    this.activeStreams = new prom.Gauge({
      name: 'reelay_active_streams',
      help: 'Direct streams in progress.',
      registers,
    });
    this.streams = new prom.Counter({
      name: 'reelay_streams_total',
      help: 'Direct streams once the response started, by how they ended: completed, client_aborted, origin_error (the origin failed or cut the body), too_large (cut at MAX_MEDIA_BYTES), stalled (no bytes moved for the idle deadline).',
      labelNames: ['outcome'],
      registers,
    });
    this.eventStreams = new prom.Gauge({
      name: 'reelay_job_event_streams',
      help: 'Job event streams (GET /api/v1/jobs/{id}/events) open.',
      registers,
    });
    this.downloads = new prom.Counter({
      name: 'reelay_downloads_total',
      help: "Download requests by delivery: direct, job, or job_reused (the same request's live job).",
      labelNames: ['kind'],
      registers,
    });
    this.surfaceRequests = new prom.Counter({
      name: 'reelay_surface_requests_total',
      help: 'Surface A and B and subscriptions API requests by surface (api, playground, v1, subscriptions) and key check (ok, missing, invalid, disabled; none where the limit is per client address).',
      labelNames: ['surface', 'auth'],
      registers,
    });
    this.rateLimited = new prom.Counter({
      name: 'reelay_rate_limited_total',
      help: 'Requests refused with 429, by surface (api, playground, v1, subscriptions, login, signup, forgot, verify, token, oauth, passkey; jobs: too_many_jobs).',
      labelNames: ['surface'],
      registers,
    });
    this.jobCancels = new prom.Counter({
      name: 'reelay_job_cancels_total',
      help: 'Cancels accepted (DELETE /api/v1/jobs/{id} answered 204), by the state the job was in: queued (removed from the queue here) or processing (its worker was signalled; the worker counts reelay_jobs_total{outcome="cancelled"}).',
      labelNames: ['state'],
      registers,
    });
    this.queueWorkerErrors = queueWorkerErrors(this.registry);
    this.gateDuration = new prom.Histogram({
      name: 'reelay_surface_gate_duration_seconds',
      help: "Time of the surface gate: surface A's key check and rate limit, or surface B's limit (one Redis round trip), by surface.",
      labelNames: ['surface'],
      buckets: GATE_BUCKETS,
      registers,
    });
  }

  private known: { method: string; pattern: RegExp; label: string }[] = [];

  /**
   * The app's route templates (OpenAPI form, `/api/v1/jobs/{id}`), so a request refused before
   * routing (a bad JSON body, a wrong content type) is still labelled with its route, not 'unmatched'.
   */
  knownRoutes(routes: readonly { method: string; path: string }[]): void {
    this.known = routes.map(({ method, path }) => ({
      method: method.toUpperCase(),
      label: path.replace(/\{([A-Za-z_]+)\}/g, ':$1'),
      pattern: new RegExp(
        `^${path
          .split(/\{[A-Za-z_]+\}/)
          .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
          .join('[^/]+')}/?$`,
      ),
    }));
  }

  /** The route template a request belongs to: Express's match, else a known template, else 'unmatched'. */
  routeOf(method: string, path: string, matched?: string): string {
    if (matched) return matched;
    const m = method === 'HEAD' ? 'GET' : method;
    return this.known.find((r) => r.method === m && r.pattern.test(path))?.label ?? 'unmatched';
  }

  /**
   * Times every request and labels it with its route template. Counted when the response finished
   * or, for a client that went away first (an aborted stream), when the connection closed.
   */
  readonly middleware: RequestHandler = (req, res, next) => {
    const start = process.hrtime.bigint();
    let done = false;
    const record = () => {
      if (done) return;
      done = true;
      const route = this.routeOf(
        req.method,
        req.path,
        req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : undefined,
      );
      const labels = { method: req.method, route, status: String(res.statusCode) };
      this.httpRequests.inc(labels);
      this.httpDuration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    };
    res.once('finish', record);
    res.once('close', record);
    next();
  };
}

/**
 * /metrics (and /healthz) on their own port, for METRICS_PUBLIC=false: the registry stays off the
 * public port and is reachable only where the scraper is allowed.
 */
export async function serveMetrics(registry: Registry, host: string, port: number): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () =>
          res
            .writeHead(500, { 'content-type': 'application/json' })
            .end('{"success":false,"error":{"code":"internal_error","message":"Metrics are unavailable."}}'),
      );
      return;
    }
    if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    res
      .writeHead(404, { 'content-type': 'application/json' })
      .end('{"success":false,"error":{"code":"not_found","message":"No such route."}}');
  });
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return server;
}
