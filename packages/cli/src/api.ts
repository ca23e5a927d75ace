// The reelay HTTP API as this client sees it: the answer shapes it reads (a subset of DESIGN.md's, kept
// here so the CLI installs on its own) and one small fetch wrapper that turns the error envelope,
// or a server it cannot reach, into a CliError that says what to do next. The control token of each
// job it starts is kept (tokens.ts) and sent with its cancel and stop.
import { CliError } from './errors.js';
import { JobTokens } from './tokens.js';

export interface Source {
  quality: string;
  url: string;
  stream_profile: 'muxed_progressive' | 'video_only' | 'audio_only' | 'image' | 'hls' | 'dash';
  mime_type?: string;
  ext?: string;
  width?: number;
  height?: number;
  bitrate?: number;
  codecs?: string;
  size?: number;
  has_audio?: boolean;
  has_video?: boolean;
  fps?: number;
}

export interface MediaItem {
  index: number;
  type: 'video' | 'audio' | 'image';
  sources: Source[];
  duration?: number;
  title?: string;
}

/** One entry of a playlist, channel or feed: numbered from 1 across its pages, as --items takes them. */
export interface CollectionEntry {
  index: number;
  url: string;
  title?: string;
  duration?: number;
  upload_date?: string;
}

export interface ExtractResult {
  url: string;
  platform: string;
  content_type: string;
  title: string;
  media: MediaItem[];
  /** A playlist, channel or feed: what it is, how many entries it has, and the next page's cursor. */
  collection?: { kind: string; entry_count?: number; next_cursor?: string };
  /** This page of a collection's entries (at most 100). */
  entries?: CollectionEntry[];
  /** Names this answer's sources, so the download keeps this extract's title and headers. */
  extraction_id?: string;
}

export interface Artifact {
  url: string;
  filename: string;
  content_type: string;
  size: number;
  expires_at: string;
}

export interface JobView {
  id: string;
  status: 'queued' | 'processing' | 'completed' | 'failed' | 'expired' | 'cancelled';
  operation: string;
  progress: number;
  created_at: string;
  started_at?: string;
  finished_at?: string;
  error?: { code: string; message: string };
  artifact?: Artifact;
  /** What a page_url download chose; `description` says it in words ("video (mp4) + audio (m4a), merged"). */
  source?: { quality: string; url?: string; video_url?: string; audio_url?: string; description?: string };
  /** A recording of a live stream (operation record): how far it got, and why it ended. */
  recording?: { seconds: number; bytes: number; gaps: { at: number; seconds: number; track?: 'video' | 'audio' }[] };
  ended?: string;
}

/** The body of POST /api/v1/download: one source, a merge pair, or a page with a preset (one step). */
export interface DownloadBody {
  url?: string;
  video_url?: string;
  audio_url?: string;
  page_url?: string;
  item?: number;
  quality?: string;
  audio_only?: boolean;
  format?: string;
  filename?: string;
  extraction_id?: string;
  clip?: { start: number; end: number; mode?: 'fast' | 'precise' };
  subtitles?: string[];
  /** For a live source: record for this many seconds, or from the oldest listed segment. */
  live?: { duration?: number; from_start?: boolean };
}

/** The 202 of a download: the job, and the token that makes its holder the job's creator. */
interface JobAccepted {
  job_id: string;
  control_token?: string;
}

export const TERMINAL: ReadonlySet<JobView['status']> = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** What to do about a 403 job_control_forbidden: only the job's creator may cancel or stop it. */
const NOT_CREATOR =
  "Only the client that started a job can cancel or stop it: run this as the same user on the machine whose `reelay get` started it (it keeps the job's control token).";

export class Api {
  /** This run's tokens, in case the state file could not be written. */
  private readonly held = new Map<string, string>();

  constructor(
    readonly server: URL,
    readonly signal: AbortSignal,
    private readonly tokens = new JobTokens(),
  ) {}

  /** The Authorization header that makes this client the job's creator, when it has the job's token. */
  private control(id: string): Record<string, string> {
    const token = this.held.get(id) ?? this.tokens.get(this.server.origin, id);
    return token ? { authorization: `Bearer ${token}` } : {};
  }

  url(path: string): URL {
    return new URL(path, this.server);
  }

  /**
   * fetch with the server named in every failure to connect; a non-2xx answer is the caller's.
   * `init.signal` may end this request early too (the CLI's own signal always can).
   */
  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const signal = init.signal ? AbortSignal.any([this.signal, init.signal]) : this.signal;
    try {
      return await fetch(this.url(path), { ...init, signal, redirect: 'follow' });
    } catch (err) {
      if (signal.aborted) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `cannot reach the reelay server at ${this.server.origin} (${cause?.code ?? cause?.message ?? (err as Error).message}).`,
        'Start one with `pnpm start` in the reelay repository, or point --server / REELAY_SERVER at it.',
      );
    }
  }

  /** Throws the server's error envelope as a CliError (its message, code and status; `hint` for a 403). */
  async fail(res: Response, forbidden?: string): Promise<never> {
    const text = await res.text().catch(() => '');
    let envelope: { error?: { code?: string; message?: string } } | undefined;
    try {
      envelope = JSON.parse(text);
    } catch {
      /* not the envelope: a proxy's page or an older server */
    }
    const code = envelope?.error?.code;
    const message =
      envelope?.error?.message ?? `the server answered HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
    const hint = res.status === 403 && code === 'job_control_forbidden' ? forbidden : undefined;
    throw new CliError(message, hint, code ? `${code}, HTTP ${res.status}` : `HTTP ${res.status}`);
  }

  async json<T>(path: string, init: RequestInit = {}): Promise<T> {
    const res = await this.request(path, {
      ...init,
      headers: {
        accept: 'application/json',
        ...(init.body ? { 'content-type': 'application/json' } : {}),
        ...init.headers,
      },
    });
    if (!res.ok) return this.fail(res);
    return ((await res.json()) as { data: T }).data;
  }

  /** POST /api/v1/extract; with `cursor`, the next page of a collection. */
  extract(url: string, cursor?: string): Promise<ExtractResult> {
    return this.json('/api/v1/extract', { method: 'POST', body: JSON.stringify(cursor ? { url, cursor } : { url }) });
  }

  job(id: string): Promise<JobView> {
    return this.json(`/api/v1/jobs/${encodeURIComponent(id)}`);
  }

  /** DELETE /api/v1/jobs/{id}: 204 when cancelled; the server's error (job_finished, job_not_found) otherwise. */
  async cancel(id: string): Promise<void> {
    const res = await this.request(`/api/v1/jobs/${encodeURIComponent(id)}`, {
      method: 'DELETE',
      headers: { accept: 'application/json', ...this.control(id) },
    });
    if (!res.ok) return this.fail(res, NOT_CREATOR);
  }

  /** POST /api/v1/jobs/{id}/stop: true when the recording was asked to stop, false when it is not recording (any more). */
  async stop(id: string): Promise<boolean> {
    const res = await this.request(`/api/v1/jobs/${encodeURIComponent(id)}/stop`, {
      method: 'POST',
      headers: { accept: 'application/json', ...this.control(id) },
    });
    if (res.status === 202) return true;
    if (res.status === 409) return false;
    return this.fail(res, NOT_CREATOR);
  }

  /** POST /api/v1/download: the media itself (200, a direct stream) or a job's id (202), whose token is kept. */
  async download(body: DownloadBody): Promise<{ stream: Response } | { jobId: string }> {
    // identity: the bytes on disk are the bytes sent, so offsets for Range stay true.
    const res = await this.request('/api/v1/download', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' },
    });
    if (res.status === 202) {
      const { job_id: jobId, control_token: token } = ((await res.json()) as { data: JobAccepted }).data;
      if (token) {
        this.held.set(jobId, token);
        this.tokens.remember(this.server.origin, jobId, token);
      }
      return { jobId };
    }
    if (!res.ok) return this.fail(res);
    return { stream: res };
  }
}
