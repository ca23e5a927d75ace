// A job attempt's session of the worker's egress proxy (the shared guarded proxy of @reelay/egress):
// the environment that points ffmpeg at it, only request headers ffmpeg can be told to send, and the
// job's manifests as checked so far (@reelay/manifests' ledger).
import { ProxySession, type SessionInit } from '@reelay/egress';
import { isSettableHeader } from '@reelay/media';
import { ManifestLedger } from '@reelay/manifests';

export type { SessionFailures, SessionOptions } from '@reelay/egress';

/** The egress proxy's session for one job attempt (named apart from the ProxySession it extends). */
export class JobProxySession extends ProxySession {
  /** What the job's manifests named so far, checked as each one arrives. */
  readonly manifests: ManifestLedger;
  /** Where the job's clip starts, in seconds: segments before it are not fetched ahead. */
  clipStart: number | undefined;

  constructor(init: SessionInit, maxSegments: number) {
    super({
      ...init,
      options: { ...init.options, headerNames: [...(init.options.headerNames ?? [])].filter(isSettableHeader) },
    });
    this.manifests = new ManifestLedger(maxSegments);
  }

  get jobId(): string {
    return this.id;
  }

  override get logFields(): Record<string, unknown> {
    return { jobId: this.id };
  }

  /** Environment for ffmpeg and ffprobe. Holds the credentials: never log it. */
  get env(): Record<string, string | undefined> {
    return proxyEnv(this.proxyUrl);
  }

  /** The same for an ffprobe that reads only the start of the input (no Range parts fetched ahead). */
  get headerReadEnv(): Record<string, string | undefined> {
    return proxyEnv(this.headerReadProxyUrl);
  }
}

// no_proxy is removed, not emptied: ffmpeg matches an empty entry against host names ending in a
// dot, and would then connect to `http://host./` directly.
function proxyEnv(url: string): Record<string, string | undefined> {
  return { http_proxy: url, no_proxy: undefined, NO_PROXY: undefined };
}
