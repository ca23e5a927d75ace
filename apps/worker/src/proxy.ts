// The worker's egress proxy: ffmpeg's only way to the network (its `http_proxy`). It is the shared
// guarded proxy of @reelay/egress (per-job credentials, byte limit, failures kept for the job) with
// CONNECT refused: ffmpeg never tunnels here, and letting it do its own TLS would also let it use its
// `httpproxy` protocol, which a playlist can point at any address (https-names.ts). So https origins
// reach ffmpeg under stand-in http names, and manifests are rewritten to use them too.
import { GuardedProxy, type ProxyEgress, type ProxyHooks, type ProxySession } from '@reelay/egress';
import type { Logger } from '@reelay/observability';
import {
  dashSegments,
  hlsSegments,
  MANIFEST_SNIFF_BYTES,
  MAX_MANIFEST_BYTES,
  segmentsFrom,
  sniffManifest,
  withoutTextSets,
} from '@reelay/manifests';
import { fromProxyUrl, rewriteManifest, toProxyUrl } from './https-names.js';
import { JobProxySession } from './proxy-session.js';

export type { ProxyEgress, ProxyHooks };

/** The worker's egress proxy: the shared guarded proxy with job sessions and manifest rewriting. */
export type JobProxy = GuardedProxy<JobProxySession>;

/** Starts the worker's egress proxy, listening on 127.0.0.1 only, on a free port. */
export function startJobProxy(options: {
  egress: ProxyEgress;
  logger: Logger;
  hooks?: ProxyHooks;
  maxSegments: number;
  fetchConcurrency?: number;
}): Promise<JobProxy> {
  return GuardedProxy.start<JobProxySession>({
    egress: options.egress,
    logger: options.logger,
    hooks: options.hooks,
    allowConnect: false,
    fetchConcurrency: options.fetchConcurrency,
    session: (init) => new JobProxySession(init, options.maxSegments),
    target: fromProxyUrl,
    location: standInLocation,
    rewriter: {
      name: 'manifest',
      sniffBytes: MANIFEST_SNIFF_BYTES,
      maxBytes: MAX_MANIFEST_BYTES,
      detect: (head) => sniffManifest(head) !== undefined,
      rewrite: checkAndRewrite,
    },
  });
}

/** Refuses a hostile manifest (the job's ledger), grants the requests it declares, and rewrites it. */
function checkAndRewrite(text: string, target: URL, session: ProxySession): string {
  const kind = sniffManifest(Buffer.from(text.slice(0, MANIFEST_SNIFF_BYTES)));
  if (session instanceof JobProxySession) {
    session.allowRequests(
      kind === 'dash' ? session.manifests.checkDash(text) : session.manifests.checkHls(text, target),
    );
  }
  // Checked above: the segments of a playlist the job may read, fetched ahead as ffmpeg reads them,
  // from the clip's start on (ffmpeg seeks past those before it, and they are not fetched at all).
  if (session.ahead) {
    const from = session instanceof JobProxySession ? session.clipStart : undefined;
    const max = session instanceof JobProxySession ? session.manifests.maxSegments : undefined;
    for (const segments of kind === 'dash' ? dashSegments(text, target, max) : [hlsSegments(text, target, max)])
      session.ahead.plan(segmentsFrom(segments, from));
  }
  const rewritten = rewriteManifest(text, target);
  return kind === 'dash' ? withoutTextSets(rewritten) : rewritten;
}

/** A redirect to https becomes its stand-in, so ffmpeg asks the proxy for it like anything else. */
function standInLocation(value: string, target: URL): string {
  let next: URL;
  try {
    next = new URL(value, target);
  } catch {
    return value; // unusable: ffmpeg fails to follow it, and the proxy would refuse it anyway
  }
  return next.protocol === 'https:' || next.protocol === 'http:' ? toProxyUrl(next) : value;
}
