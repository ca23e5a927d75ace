// The gateway's Prometheus metrics. Labels are bounded: route templates (never raw paths), status
// codes, platforms from the registry, outcomes from the error table.
import type { RequestHandler } from 'express';
import { createRegistry, LATENCY_BUCKETS, prom, type Registry } from '@reelay/observability';

/** 25 µs to 100 ms: the gate is one Redis round trip, far below the HTTP latency buckets. */
const GATE_BUCKETS = [0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1];

export class GatewayMetrics {
  readonly registry: Registry;
  readonly httpRequests: prom.Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: prom.Histogram<'method' | 'route' | 'status'>;
  readonly extracts: prom.Counter<'platform' | 'outcome'>;
  readonly extractDuration: prom.Histogram<'platform' | 'outcome'>;
  readonly streamedBytes: prom.Counter;
  readonly activeStreams: prom.Gauge;
  readonly downloads: prom.Counter<'kind'>;
  readonly surfaceRequests: prom.Counter<'surface' | 'auth'>;
  readonly rateLimited: prom.Counter<'surface'>;
  readonly gateDuration: prom.Histogram<'surface'>;

  constructor() {
    this.registry = createRegistry({ app: 'gateway' });
    const registers = [this.registry];
    this.httpRequests = new prom.Counter({ name: 'reelay_http_requests_total', help: 'HTTP requests answered, by route template and status.', labelNames: ['method', 'route', 'status'], registers });
    this.httpDuration = new prom.Histogram({ name: 'reelay_http_request_duration_seconds', help: 'Time to answer HTTP requests (headers sent), by route template.', labelNames: ['method', 'route', 'status'], buckets: LATENCY_BUCKETS, registers });
    this.extracts = new prom.Counter({ name: 'reelay_extracts_total', help: 'Extractions by platform and outcome (success or an error code).', labelNames: ['platform', 'outcome'], registers });
    this.extractDuration = new prom.Histogram({ name: 'reelay_extract_duration_seconds', help: 'Extraction time by platform and outcome.', labelNames: ['platform', 'outcome'], buckets: LATENCY_BUCKETS, registers });
    this.streamedBytes = new prom.Counter({ name: 'reelay_stream_bytes_total', help: 'Bytes sent to clients by direct streams.', registers });
    this.activeStreams = new prom.Gauge({ name: 'reelay_active_streams', help: 'Direct streams in progress.', registers });
    this.downloads = new prom.Counter({ name: 'reelay_downloads_total', help: 'Download requests by delivery: direct, job, or job_reused (the same request\'s live job).', labelNames: ['kind'], registers });
    this.surfaceRequests = new prom.Counter({ name: 'reelay_surface_requests_total', help: 'Surface A requests by surface (api, playground) and key check (ok, missing, invalid, disabled; none on the playground).', labelNames: ['surface', 'auth'], registers });
    this.rateLimited = new prom.Counter({ name: 'reelay_rate_limited_total', help: 'Requests refused with 429 rate_limited, by surface (api, playground, login, signup).', labelNames: ['surface'], registers });
    this.gateDuration = new prom.Histogram({ name: 'reelay_surface_gate_duration_seconds', help: 'Time of surface A\'s key check and rate limit (one Redis round trip), by surface.', labelNames: ['surface'], buckets: GATE_BUCKETS, registers });
  }

  /** Times every request and labels it with the matched route template ('unmatched' otherwise). */
  readonly middleware: RequestHandler = (req, res, next) => {
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
      const labels = { method: req.method, route, status: String(res.statusCode) };
      this.httpRequests.inc(labels);
      this.httpDuration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}
