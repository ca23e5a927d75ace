// The yt-dlp bridge: the registry's fallback. It takes URLs on YTDLP_HOSTS (and their subdomains)
// before anything else, and, when a yt-dlp binary was found, what the generic extractors could not
// read. yt-dlp runs as a subprocess (ytdlp-process.ts), at most `concurrency` at a time, and reaches
// the network only through a guarded proxy of @reelay/egress with CONNECT allowed (it is Python and
// does its own TLS inside the tunnel; every address it dials is checked before the dial). Its JSON
// becomes a draft in ytdlp-map.ts.
import { randomBytes } from 'node:crypto';
import { COLLECTION_PAGE_SIZE, ReelayError } from '@reelay/contracts';
import { markNothingFound } from './no-media.js';
import {
  GuardedProxy,
  normaliseHost,
  type CookieFile,
  type Egress,
  type ProxyLogger,
  type ProxySession,
} from '@reelay/egress';
import type { ChildLimits } from '@reelay/media';
import type { FetchedDocument } from './document.js';
import { RunLimiter } from './limiter.js';
import { DEFAULT_MAX_COLLECTION_ENTRIES } from './collection.js';
import { mapYtdlpInfo } from './ytdlp-map.js';
import { childEnv, errorLine, runYtdlp, ytdlpArgs, type RunOutcome } from './ytdlp-process.js';
import type { ExtractContext, FallbackExtractor, ResultDraft } from './types.js';

export interface YtdlpOptions {
  /** The binary (see locateYtdlp); undefined when none was found. */
  binary?: string;
  /** Hosts sent to yt-dlp before any other extractor; each also covers its subdomains. */
  hosts: readonly string[];
  /** The guarded client yt-dlp's proxy fetches and connects through. */
  egress: Egress;
  logger?: ProxyLogger;
  /** A run is killed (SIGKILL) past this; default 45 s. */
  timeoutMs?: number;
  /** Runs at once in this process; default 2. */
  concurrency?: number;
  /** Extractions waiting for a run; past this they get 503. Default 8. */
  maxWaiting?: number;
  /** Bytes one run may move through the proxy; default 64 MiB (pages, player scripts, manifests). */
  maxBytes?: number;
  /** Memory and CPU bounds of every run (JOB_MAX_MEMORY_MB, JOB_MAX_CPU_SECONDS); none when undefined. */
  limits?: ChildLimits;
  /** Environment the child's is taken from (the config's childEnv; default none); see childEnv. */
  baseEnv?: Record<string, string | undefined>;
  /** COOKIES_FILE: each run gets a private copy as --cookies, removed when the run ends. */
  cookies?: CookieFile;
}

export const YTDLP_TIMEOUT_MS = 45_000;
const MAX_STDOUT_BYTES = 32 * 1024 * 1024;
// What yt-dlp's plain-http requests may carry upstream; https goes through tunnels untouched.
const FORWARDED_HEADERS = ['user-agent', 'referer', 'cookie', 'origin', 'accept-language'];
// Players that build their <video> in a script, so the HTML holds no media for the generic path.
const SCRIPT_PLAYER = /\bjwplayer\s*\(|\bvideojs\s*\(|\bflowplayer\s*\(|\bnew\s+Clappr\.Player\s*\(|\bdata-setup\s*=/i;

/** Whether a host is one of `hosts` or a subdomain of one. */
export function hostListed(hostname: string, hosts: readonly string[]): boolean {
  const host = normaliseHost(hostname);
  return hosts.some((entry) => {
    const listed = normaliseHost(entry.trim()).replace(/^\*?\./, '');
    return listed !== '' && (host === listed || host.endsWith(`.${listed}`));
  });
}

export class YtdlpBridge implements FallbackExtractor {
  readonly name = 'ytdlp';
  readonly label = 'yt-dlp';
  readonly takesLeftovers: boolean;
  private readonly limiter: RunLimiter;
  private proxy: Promise<GuardedProxy> | undefined;

  constructor(private readonly options: YtdlpOptions) {
    this.takesLeftovers = options.binary !== undefined;
    this.limiter = new RunLimiter(options.concurrency ?? 2, options.maxWaiting ?? 8, 'extractions that need yt-dlp');
  }

  claims(url: URL): boolean {
    return hostListed(url.hostname, this.options.hosts);
  }

  async wantsPage(doc: FetchedDocument): Promise<boolean> {
    return doc.contentType === 'text/html' && SCRIPT_PLAYER.test(await doc.text());
  }

  async extract(url: URL, ctx: ExtractContext): Promise<ResultDraft> {
    const binary = this.options.binary;
    if (!binary) {
      throw new ReelayError(
        'no_media_found',
        'This URL needs yt-dlp, which is not installed on this server: install yt-dlp or set YTDLP_PATH to enable it.',
      );
    }
    this.options.egress.assertUrlAllowed(url); // a literal blocked address never reaches yt-dlp
    return this.limiter.run(() => this.runOnce(binary, url, ctx), ctx.signal);
  }

  async close(): Promise<void> {
    const proxy = this.proxy;
    this.proxy = undefined;
    if (proxy) await (await proxy).close();
  }

  /** One proxy for the bridge's life, started on first use; a failed start is tried again next time. */
  private startProxy(): Promise<GuardedProxy> {
    this.proxy ??= GuardedProxy.start({
      egress: this.options.egress,
      allowConnect: true,
      logger: this.options.logger,
    }).catch((err: unknown) => {
      this.proxy = undefined;
      throw err;
    });
    return this.proxy;
  }

  private async runOnce(binary: string, url: URL, ctx: ExtractContext): Promise<ResultDraft> {
    const proxy = await this.startProxy();
    const stop = new AbortController();
    const session = proxy.openSession(randomBytes(6).toString('hex'), {
      maxBytes: this.options.maxBytes ?? 64 * 1024 * 1024,
      headerNames: FORWARDED_HEADERS,
      onCutOff: () => stop.abort(), // a blocked address or too many bytes: no point letting it go on
    });
    // A playlist's page, one entry past it to tell whether another page follows.
    // (Up to one past MAX_COLLECTION_ENTRIES, to tell a collection that goes on from one that ends.)
    const start = ctx.page ? playlistStart(ctx.page.state) : 1;
    const last = Math.min(start + COLLECTION_PAGE_SIZE, (ctx.maxEntries ?? DEFAULT_MAX_COLLECTION_ENTRIES) + 1);
    const playlist = { start, end: Math.max(start, last) };
    let outcome: RunOutcome;
    let cookies: Awaited<ReturnType<CookieFile['privateCopy']>> | undefined;
    try {
      cookies = await this.options.cookies?.privateCopy();
      outcome = await runYtdlp({
        binary,
        args: ytdlpArgs(url, session.proxyUrl, cookies?.path, playlist),
        env: childEnv(this.options.baseEnv ?? {}), // childEnv keeps only a few, and never a proxy variable
        timeoutMs: this.options.timeoutMs ?? YTDLP_TIMEOUT_MS,
        signal: ctx.signal ? AbortSignal.any([stop.signal, ctx.signal]) : stop.signal,
        maxStdoutBytes: MAX_STDOUT_BYTES,
        limits: this.options.limits,
      });
    } catch (err) {
      ctx.log?.('yt-dlp could not be started', { error: (err as NodeJS.ErrnoException).code ?? String(err) });
      throw new ReelayError('service_unavailable', 'yt-dlp could not be started on this server.', { cause: err });
    } finally {
      proxy.closeSession(session);
      await cookies?.remove();
    }
    const failure = this.failure(outcome, session, ctx);
    if (failure) throw failure;

    let info: unknown;
    try {
      info = JSON.parse(outcome.stdout);
    } catch {
      throw new ReelayError('upstream_error', 'yt-dlp answered with something other than JSON.');
    }
    const draft = mapYtdlpInfo(url, info, start);
    if (draft.collection) return draft;
    if (ctx.page) throw new ReelayError('upstream_error', 'yt-dlp no longer lists this URL as a playlist.');
    if (draft.media.length === 0)
      throw markNothingFound(
        new ReelayError('no_media_found', 'yt-dlp found no media reelay can download at this URL.'),
      );
    // yt-dlp does not fetch every media URL it reports: buildResult drops those the download would
    // refuse, as for every extractor.
    return draft;
  }

  /** Why a run failed, as a ReelayError; undefined when it succeeded. What the proxy saw comes first. */
  private failure(outcome: RunOutcome, session: ProxySession, ctx: ExtractContext): ReelayError | undefined {
    const { failures } = session;
    if (failures.blocked) return new ReelayError('url_blocked', failures.blocked);
    if (failures.tooLarge)
      return new ReelayError('upstream_error', 'yt-dlp fetched more than this server allows for one extraction.');
    if (outcome.ended === 'resource_limit')
      return new ReelayError('resource_limit', `The extraction was stopped: ${outcome.limit}.`);
    if (outcome.ended === 'timeout')
      return new ReelayError('upstream_timeout', 'yt-dlp did not finish the extraction in time.');
    if (outcome.ended === 'aborted') return new ReelayError('upstream_error', 'The extraction was cancelled.');
    if (outcome.ended === 'too_large') return new ReelayError('upstream_error', "yt-dlp's answer was too large.");
    if (outcome.exitCode === 0) return undefined;
    const line = errorLine(outcome.stderr);
    ctx.log?.('yt-dlp failed', { exit: outcome.exitCode, error: line });
    return classify(line);
  }
}

/** A playlist page's state: the position of its first item in yt-dlp's numbering. */
function playlistStart(state: string): number {
  const start = /^[1-9]\d{0,6}$/.test(state) ? Number(state) : NaN;
  if (!Number.isSafeInteger(start))
    throw new ReelayError('invalid_request', 'The cursor is not valid for this URL; start again without it.');
  return start;
}

/** yt-dlp's error line as one of our codes; our own sentence, with yt-dlp's reason only for upstream errors. */
export function classify(line: string): ReelayError {
  if (/Unsupported URL|No video formats found|no suitable formats|There's no video/i.test(line)) {
    return markNothingFound(new ReelayError('no_media_found', 'yt-dlp found no media at this URL.'));
  }
  if (
    /HTTP Error (?:404|410)|Video unavailable|video is unavailable|has been removed|does not exist|Private video|is private/i.test(
      line,
    )
  ) {
    return new ReelayError('content_not_found', 'The media does not exist or is not public.');
  }
  if (/timed out/i.test(line)) return new ReelayError('upstream_timeout', 'The origin did not answer yt-dlp in time.');
  return new ReelayError(
    'upstream_error',
    line ? `yt-dlp could not extract this URL: ${line}` : 'yt-dlp could not extract this URL.',
  );
}
