// Extraction as a service both surfaces share: validate the URL, run the registry with an overall
// deadline and the client's abort signal, record the sources, count the outcome.
import { parseContentUrl, ReelayError, type ExtractResult } from '@reelay/contracts';
import type { Egress } from '@reelay/egress';
import type { ExtractorRegistry } from '@reelay/extractors';
import type { Logger } from '@reelay/observability';
import type { SourceRegistry } from '@reelay/sources';
import type { GatewayMetrics } from '../metrics.js';

export interface ExtractServiceDeps {
  registry: ExtractorRegistry;
  egress: Egress;
  sources: SourceRegistry;
  metrics: GatewayMetrics;
  logger: Logger;
  endpoints: Record<string, string>;
  /** Whole-extraction deadline; several fetches (page, manifests, APIs) share it. */
  timeoutMs?: number;
}

export class ExtractService {
  constructor(private readonly deps: ExtractServiceDeps) {}

  async extract(rawUrl: string, clientSignal?: AbortSignal): Promise<ExtractResult> {
    const url = parseContentUrl(rawUrl);
    const { registry, egress, sources, metrics, logger } = this.deps;
    const platform = registry.platformOf(url);
    const started = process.hrtime.bigint();
    const controller = new AbortController();
    const onClientAbort = () => controller.abort(clientSignal?.reason);
    clientSignal?.addEventListener('abort', onClientAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new ReelayError('upstream_timeout', 'Extraction took too long; the origin is too slow.'));
      }, this.deps.timeoutMs ?? 30_000);
    });
    let outcome = 'success';
    try {
      const extraction = await Promise.race([
        registry.extract(url, {
          egress,
          endpoints: this.deps.endpoints,
          signal: controller.signal,
          log: (msg, fields) => logger.debug({ ...fields, url: url.href }, msg),
        }),
        deadline,
      ]);
      await sources.record(extraction.result.platform, extraction.records);
      return extraction.result;
    } catch (err) {
      outcome = err instanceof ReelayError ? err.code : 'internal_error';
      throw err;
    } finally {
      clearTimeout(timer);
      clientSignal?.removeEventListener('abort', onClientAbort);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.extracts.inc({ platform, outcome });
      metrics.extractDuration.observe({ platform, outcome }, seconds);
    }
  }
}

/** An AbortSignal that fires when the client goes away before the response is finished. */
export function clientGone(req: import('express').Request, res: import('express').Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new Error('client closed the connection'));
  });
  req.once('aborted', () => controller.abort(new Error('client aborted')));
  return controller.signal;
}
