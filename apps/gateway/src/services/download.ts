// Download planning: which stored source(s) a request names, whether they are a direct stream or a
// job (merge, convert, remux), and enqueueing jobs so that the same request from the same client
// while its job or artifact lives gets the same job (and a control token for it).
import { createHash, randomBytes } from 'node:crypto';
import type { FlowProducer, JobsOptions, Queue } from 'bullmq';
import { ipBucket } from '@reelay/accounts';
import type { RedisClient } from '@reelay/redis';
import {
  AUDIO_FORMATS,
  MERGE_FORMAT_MESSAGE,
  ContainerSchema,
  DOWNLOAD_QUEUE,
  JobPayloadSchema,
  MAX_URL_LENGTH,
  OutputFormatSchema,
  SUBTITLE_FORMATS,
  ReelayError,
  roundMs,
  type ChosenSource,
  type Clip,
  type DownloadRequest,
  type JobInput,
  type JobPayload,
  type OutputFormat,
  type StoredSource,
  type StoredSubtitle,
  type SubtitleInput,
  WEBHOOK_ATTEMPTS,
  WEBHOOK_QUEUE,
  type WebhookJob,
} from '@reelay/contracts';
import type { SourceRegistry } from '@reelay/sources';
import { sanitizeBasename } from '../http/disposition.js';
import type { ClientJobs, SlotHolder } from './client-jobs.js';
import type { JobGrants } from './job-grants.js';
import type { RequestedWebhook } from './webhooks.js';
import { parseDashFragment } from './dash-fragment.js';
import { pickTracks, planSubtitleDownload, toSubtitleInput } from './subtitles.js';

const PROGRESSIVE = new Set(['muxed_progressive', 'video_only', 'audio_only', 'image']);

export type DownloadPlan =
  { kind: 'direct'; source: StoredSource; basename: string } | { kind: 'job'; payload: JobPayload };

/**
 * Who asks for a job. A job is reused only for the same client (the account, else the address), and
 * controlled by the account or by the control token its 202 carries.
 */
export interface JobRequester {
  ip?: string;
  /** The account of the request's API key or session, or a subscription's owner. */
  accountId?: string;
  /** A subscription's check: no one to hand a token to, and its slot counts against the owner. */
  subscription?: boolean;
}

export interface Enqueued {
  id: string;
  reused: boolean;
  /** The 202's control_token (none for a subscription's job). */
  token?: string;
}

/** The client a reuse is keyed by: the account when the request named one, else the address. */
function reuseClient(requester: JobRequester): string {
  return requester.accountId !== undefined ? `account:${requester.accountId}` : `ip:${ipBucket(requester.ip)}`;
}

/** Whose MAX_ACTIVE_JOBS_PER_CLIENT slots a job takes: the address, or a subscription's owner. */
export function slotHolder(requester: JobRequester): SlotHolder {
  return requester.subscription && requester.accountId !== undefined
    ? { account: requester.accountId }
    : { ip: requester.ip };
}

export interface DownloadServiceDeps {
  sources: SourceRegistry;
  queue: Queue;
  redis: RedisClient;
  /** Seconds a job may run and an artifact lives: they bound how long a request key is kept. */
  jobTimeoutSeconds: number;
  artifactTtlSeconds: number;
  /** BullMQ job options the producer owns: retries and retention. */
  attempts?: number;
  /** Current job state for de-duplication; returns undefined when the job is gone or unusable. */
  jobAlive: (id: string) => Promise<boolean>;
  /** Live jobs per client address (MAX_ACTIVE_JOBS_PER_CLIENT); absent when the limit is off. */
  clientJobs?: ClientJobs;
  /** Who may cancel or stop each job: its control tokens and the account that asked. */
  grants: JobGrants;
  /** Adds a job with its webhook delivery as one flow (required for requests with a webhook_url). */
  flows?: FlowProducer;
  /** MAX_RECORD_SECONDS: the ceiling of live.duration (default 14400). */
  maxRecordSeconds?: number;
}

function hasVideo(s: StoredSource): boolean {
  if (s.stream_profile === 'audio_only' || s.stream_profile === 'image') return false;
  return s.has_video !== false;
}

function isAudioOnly(s: StoredSource): boolean {
  return s.stream_profile === 'audio_only' || (s.has_audio === true && s.has_video === false);
}

function toInput(s: StoredSource): JobInput {
  let url = s.url;
  let representation: string | undefined;
  let representationType: 'video' | 'audio' | undefined;
  const named = s.stream_profile === 'dash' ? parseDashFragment(s.url) : undefined;
  if (named) {
    url = named.url;
    representation = named.id;
    representationType = named.type === 'text' ? undefined : named.type;
  }
  return {
    url,
    stream_profile: s.stream_profile,
    representation,
    ...(representationType ? { representation_type: representationType } : {}),
    headers: s.headers,
    codecs: s.codecs,
    has_audio: s.has_audio,
    has_video: s.has_video,
  };
}

/** A clip's format when none was asked for: the source's own, if a job can write it. */
function sameFormat(source: StoredSource): OutputFormat {
  const own = OutputFormatSchema.safeParse(source.ext);
  if (own.success) return own.data;
  return isAudioOnly(source) && /^mp4a\./.test(source.codecs ?? '') ? 'm4a' : 'mkv';
}

/**
 * The clip as the job cuts it: milliseconds, the mode's default, and an end past the media's end cut
 * there. A start at or past the end is refused here when the extract knew the duration.
 */
function resolveClip(clip: NonNullable<DownloadRequest['clip']>, duration: number | undefined): Clip {
  const start = roundMs(clip.start);
  const end = roundMs(clip.end);
  const mode = clip.mode ?? 'fast';
  if (duration === undefined) return { start, end, mode };
  if (start >= duration)
    throw new ReelayError(
      'invalid_clip',
      `clip.start (${start} s) is at or past the end of the media (${duration} s).`,
    );
  return { start, end: Math.min(end, duration), mode };
}

/** An http(s) URL short enough for the job payload; anything else is left out rather than failing the job. */
function fitting(url: string | undefined): string | undefined {
  return url !== undefined && url.length <= MAX_URL_LENGTH && /^https?:\/\//i.test(url) && URL.canParse(url)
    ? url
    : undefined;
}

/** The item's thumbnail as cover art, when it has a usable one. */
function coverOf(source: StoredSource): JobPayload['cover'] {
  const url = fitting(source.thumbnail);
  return url ? { url } : undefined;
}

/** The tags of DESIGN.md from what the extract knew about the item. */
function tagsOf(source: StoredSource): JobPayload['tags'] {
  const tags = {
    title: source.title.slice(0, 500),
    artist: source.author?.slice(0, 500),
    date: source.upload_date,
    comment: fitting(source.page_url),
  };
  return Object.fromEntries(Object.entries(tags).filter(([, v]) => v !== undefined && v !== ''));
}

/**
 * A live source is recorded from its one url (operation record); as half of a merge pair it is
 * refused, except for the pair a live DASH manifest offers (below). Sources of an HLS master are not
 * known to be live here (the extract reads no variant): the worker refuses those when it reads the playlist.
 */
function refuseLive(source: StoredSource): void {
  if (source.is_live)
    throw new ReelayError(
      'invalid_request',
      'This source is a live stream: record it on its own, with its url (and live options), not as part of a merge pair (only a video and an audio representation of one live DASH manifest are recorded together).',
    );
}

/** A video and an audio representation of one live DASH manifest: recorded together into one file. */
function isLiveDashPair(video: StoredSource, audio: StoredSource): boolean {
  if (!video.is_live || !audio.is_live || video.stream_profile !== 'dash' || audio.stream_profile !== 'dash')
    return false;
  const [v, a] = [parseDashFragment(video.url), parseDashFragment(audio.url)];
  return (
    v !== undefined &&
    a !== undefined &&
    v.url === a.url &&
    video.item_key === audio.item_key &&
    hasVideo(video) &&
    isAudioOnly(audio)
  );
}

/** What a download of a live source may ask for besides `live`. */
function checkRecording(body: DownloadRequest, maxSeconds: number): void {
  if (body.format !== undefined && body.format !== 'mp4' && body.format !== 'mkv')
    throw new ReelayError('invalid_request', `A recording is written as mp4 or mkv, not ${body.format}.`);
  if (body.clip)
    throw new ReelayError('invalid_request', 'A live stream cannot be clipped: record it with live.duration instead.');
  if (body.subtitles !== undefined) throw new ReelayError('invalid_request', 'A recording embeds no subtitles.');
  const duration = body.live?.duration;
  if (duration !== undefined && duration > maxSeconds)
    throw new ReelayError(
      'invalid_request',
      `live.duration must be at most ${maxSeconds} seconds (MAX_RECORD_SECONDS).`,
    );
}

function unknownSource(field: string, extraction?: string): ReelayError {
  const which = extraction === undefined ? 'an extract' : 'the extract with this extraction_id';
  return new ReelayError(
    'unknown_source',
    `The ${field} was not returned by ${which} in the last while; extract the page again and use a URL from its result.`,
  );
}

export class DownloadService {
  constructor(private readonly deps: DownloadServiceDeps) {}

  private async lookup(url: string, field: string, extraction: string | undefined): Promise<StoredSource> {
    const source = await this.deps.sources.get(url, extraction);
    if (!source) throw unknownSource(field, extraction);
    return source;
  }

  /** The tracks a video download embeds (none unless asked): the item's, by language. */
  private async embedded(body: DownloadRequest, video: StoredSource): Promise<SubtitleInput[] | undefined> {
    if (body.subtitles === undefined) return undefined;
    if (!hasVideo(video))
      throw new ReelayError('invalid_request', 'Subtitles are embedded in a video; this source has no video track.');
    // A clip cuts the media's inputs; the tracks would keep their own timeline and drift from it.
    if (body.clip)
      throw new ReelayError(
        'invalid_request',
        'A clip cannot embed subtitles yet: download the clip, and the subtitle track on its own.',
      );
    return pickTracks(await this.deps.sources.subtitlesOf(video.item_key), body.subtitles).map(toSubtitleInput);
  }

  /** A subtitle track's url: the file as it is, or a job that writes it as vtt or srt. */
  private planSubtitle(sub: StoredSubtitle, body: DownloadRequest): DownloadPlan {
    if (body.clip)
      throw new ReelayError('invalid_request', 'A subtitle track is delivered whole; it cannot be clipped.');
    const basename = sanitizeBasename(body.filename ?? `${sub.title}.${sub.language}`);
    const plan = planSubtitleDownload(sub, body);
    if (plan.kind === 'direct') {
      // Streamed like a progressive source: the same guarded fetch, Range and Content-Disposition.
      const source: StoredSource = {
        ...sub,
        stream_profile: 'muxed_progressive',
        media_type: 'video',
        mime_type: plan.mime_type,
        ext: plan.ext,
      };
      return { kind: 'direct', source, basename };
    }
    return { kind: 'job', payload: this.payload(plan.operation, [], plan.format, basename, body, [plan.input]) };
  }

  /** `chosen`: what a page_url download chose (one-step.ts), shown on the Job and part of its identity. */
  async plan(body: DownloadRequest, chosen?: ChosenSource, options: { job?: boolean } = {}): Promise<DownloadPlan> {
    let plan = await this.planOf(body);
    // A subscription's entry is always a job (nobody is there to take a stream): the file as it is.
    if (plan.kind === 'direct' && options.job) {
      const src = plan.source;
      const subtitles = await this.embedded(body, src);
      const payload = this.payload('convert', [src], sameFormat(src), plan.basename, body, subtitles);
      plan = { kind: 'job', payload: subtitles ? payload : { ...payload, whole_file: true } };
    }
    if (plan.kind === 'job' && chosen) {
      // The request key names the choice too, so a job reused for it always shows what was chosen.
      const request_key = createHash('sha256').update(`${plan.payload.request_key}:source`).digest('base64url');
      return { kind: 'job', payload: JobPayloadSchema.parse({ ...plan.payload, source: chosen, request_key }) };
    }
    return plan;
  }

  /**
   * Always a job (a collection's child): what plan() would stream directly is written by a job in its
   * own format, so every entry's file ends in the artifact store.
   */
  async planJob(body: DownloadRequest, chosen?: ChosenSource): Promise<JobPayload> {
    const plan = await this.plan(body, chosen);
    if (plan.kind === 'job') return plan.payload;
    // A file that needs no conversion: kept in its own format, so the worker may fetch it whole first.
    const payload = {
      ...this.payload('convert', [plan.source], sameFormat(plan.source), plan.basename, body),
      whole_file: true as const,
    };
    return JobPayloadSchema.parse(chosen ? { ...payload, source: chosen } : payload);
  }

  private async planOf(body: DownloadRequest): Promise<DownloadPlan> {
    const format = body.format;
    if (body.url !== undefined) {
      const found = await this.deps.sources.lookup(body.url, body.extraction_id);
      if (found?.kind === 'subtitle') return this.planSubtitle(found.subtitle, body);
      if (found === undefined) throw unknownSource('url', body.extraction_id);
      const source = found.source;
      if (source.is_live) return this.planRecording([source], body);
      if (body.live !== undefined)
        throw new ReelayError(
          'invalid_request',
          'live options go with a live source (is_live in the extract); this one is on demand.',
        );
      const basename = sanitizeBasename(body.filename ?? source.title);
      if (format !== undefined && SUBTITLE_FORMATS.has(format))
        throw new ReelayError(
          'invalid_request',
          `${format} is a subtitle format: give a subtitle track's url from the extract.`,
        );
      if (source.stream_profile === 'image' && body.clip)
        throw new ReelayError('invalid_request', 'Images are delivered as they are; they cannot be clipped.');
      const subtitles = await this.embedded(body, source);
      if (PROGRESSIVE.has(source.stream_profile)) {
        // A clip or embedding needs a job. Without a format, a clip keeps the file's own format where
        // reelay writes it; embedding keeps the container when its codecs are known to fit it, else
        // writes Matroska, which takes any codec without re-encoding.
        const target =
          format ??
          (subtitles
            ? ContainerSchema.safeParse(source.ext).success && source.codecs
              ? (source.ext as OutputFormat)
              : 'mkv'
            : body.clip
              ? sameFormat(source)
              : undefined);
        if (target === undefined || (!subtitles && !body.clip && target === source.ext))
          return { kind: 'direct', source, basename };
        if (source.stream_profile === 'image')
          throw new ReelayError('invalid_request', 'Images are delivered as they are; they cannot be converted.');
        if (AUDIO_FORMATS.has(target) && source.has_audio === false)
          throw new ReelayError('invalid_request', `This source has no audio track to convert to ${target}.`);
        if (!AUDIO_FORMATS.has(target) && !hasVideo(source))
          throw new ReelayError(
            'invalid_request',
            `This source is audio only; choose mp3, m4a, opus or wav instead of ${target}.`,
          );
        return { kind: 'job', payload: this.payload('convert', [source], target, basename, body, subtitles) };
      }
      return { kind: 'job', payload: this.payload('remux', [source], format, basename, body, subtitles) };
    }

    const [video, audio] = await Promise.all([
      this.lookup(body.video_url!, 'video_url', body.extraction_id),
      this.lookup(body.audio_url!, 'audio_url', body.extraction_id),
    ]);
    if (isLiveDashPair(video, audio)) return this.planRecording([video, audio], body);
    refuseLive(video);
    refuseLive(audio);
    if (body.live !== undefined)
      throw new ReelayError('invalid_request', 'live options go with the url of a live source.');
    if (!hasVideo(video)) throw new ReelayError('invalid_merge_pair', 'video_url is not a video source.');
    if (!isAudioOnly(audio)) throw new ReelayError('invalid_merge_pair', 'audio_url is not an audio-only source.');
    if (video.item_key !== audio.item_key)
      throw new ReelayError('invalid_merge_pair', 'The video and audio sources belong to different media items.');
    // The request schema refuses a client's pair with such a format; this holds for a pair a preset chose too.
    if (format && (AUDIO_FORMATS.has(format) || SUBTITLE_FORMATS.has(format)))
      throw new ReelayError('invalid_request', MERGE_FORMAT_MESSAGE);
    const subtitles = await this.embedded(body, video);
    const progressive = [video, audio].filter((s) => PROGRESSIVE.has(s.stream_profile)).length;
    // A file with a segmented stream has no operation: merge copies two files, remux reads two
    // manifests. Such pairs do not come out of one extract in practice; refuse them clearly.
    if (progressive === 1)
      throw new ReelayError(
        'invalid_merge_pair',
        'A merge pair must be two progressive files or two HLS/DASH streams, not one of each.',
      );
    const operation = progressive === 2 ? 'merge' : 'remux';
    return {
      kind: 'job',
      payload: this.payload(
        operation,
        [video, audio],
        format,
        sanitizeBasename(body.filename ?? video.title),
        body,
        subtitles,
      ),
    };
  }

  /**
   * A live source (HLS, or one DASH representation), or a live DASH manifest's video and audio
   * representations: a recording job from the live edge (or the oldest listed segment).
   */
  private planRecording(sources: [StoredSource] | [StoredSource, StoredSource], body: DownloadRequest): DownloadPlan {
    checkRecording(body, this.deps.maxRecordSeconds ?? 14_400);
    const [source] = sources;
    // A live DASH source is one representation (its url names it): the recording holds that one.
    if (source.stream_profile !== 'hls' && source.stream_profile !== 'dash')
      throw new ReelayError(
        'invalid_request',
        'This live source is neither HLS nor DASH, which is all a recording reads.',
      );
    const payload = this.payload('record', sources, body.format, sanitizeBasename(body.filename ?? source.title), body);
    const live = body.live ?? {};
    // The live options are part of the request's identity: another duration is another recording.
    const request_key = createHash('sha256')
      .update(`${payload.request_key}:live:${JSON.stringify([live.duration ?? null, live.from_start === true])}`)
      .digest('base64url');
    return {
      kind: 'job',
      payload: JobPayloadSchema.parse({ ...payload, live, request_key, duration: undefined, cover: undefined }),
    };
  }

  private payload(
    operation: JobPayload['operation'],
    sources: StoredSource[],
    format: OutputFormat | undefined,
    basename: string,
    body: DownloadRequest,
    subtitles?: SubtitleInput[],
  ): JobPayload {
    const inputs = sources.map(toInput);
    const durations = sources.map((s) => s.duration).filter((d): d is number => typeof d === 'number' && d > 0);
    const duration = durations.length ? Math.max(...durations) : undefined;
    const clip = body.clip && resolveClip(body.clip, duration);
    // Tags and cover come from the media item; a subtitle track written alone has neither.
    const [first] = sources;
    const tags = first === undefined ? undefined : body.metadata === false ? false : tagsOf(first);
    const cover = first !== undefined && body.cover !== false ? coverOf(first) : undefined;
    // Clip, metadata, cover and the embedded tracks are part of the request's identity: each changes the file.
    const identity: Record<string, unknown> = {
      operation,
      inputs: inputs.map((i) => [i.url, i.representation ?? null]),
      format: format ?? null,
      basename,
      clip: clip ?? null,
      metadata: body.metadata !== false,
      cover: cover !== undefined,
    };
    if (subtitles) identity.subtitles = subtitles.map((t) => [t.url, t.representation ?? null, t.language]);
    // The webhook too (DESIGN.md); the secret enters only as its hash, which the identity hashes again.
    if (body.webhook_url !== undefined)
      identity.webhook = [
        body.webhook_url,
        body.webhook_secret === undefined ? null : createHash('sha256').update(body.webhook_secret).digest('base64url'),
      ];
    const key = createHash('sha256').update(JSON.stringify(identity)).digest('base64url');
    return JobPayloadSchema.parse({
      id: randomBytes(16).toString('base64url'),
      operation,
      inputs,
      format,
      basename,
      subtitles,
      duration,
      request_key: key,
      created_at: Date.now(),
      clip,
      tags,
      cover,
      webhook_url: body.webhook_url,
    });
  }

  /**
   * Enqueues a job, or returns the id of the live job this same request from this same client
   * already started. Only a new job takes one of the client's slots: a reused one is free. Either
   * way the answer carries a new control token (a client's earlier ones stay valid), since only the
   * tokens' hashes are kept; another client's identical request gets a job and token of its own.
   */
  async enqueue(payload: JobPayload, requester: JobRequester, webhook?: RequestedWebhook): Promise<Enqueued> {
    const { redis, queue, grants } = this.deps;
    const key = `reelay:dl:${createHash('sha256')
      .update(`${payload.request_key}:${reuseClient(requester)}`)
      .digest('base64url')}`;
    const ttl = this.deps.jobTimeoutSeconds + this.deps.artifactTtlSeconds + 3600;
    const control = (id: string) =>
      requester.subscription && requester.accountId !== undefined
        ? grants.own(id, requester.accountId).then(() => undefined)
        : grants.issue(id, requester.accountId);
    const slots = slotHolder(requester);
    try {
      const claimed = await redis.set(key, payload.id, 'EX', ttl, 'NX');
      if (claimed !== 'OK') {
        const existing = await redis.get(key);
        if (existing && (await this.deps.jobAlive(existing)))
          return { id: existing, reused: true, token: await control(existing) };
        await redis.set(key, payload.id, 'EX', ttl);
      }
      // A refusal leaves the request key naming a job that never existed: the next same request
      // finds it not alive and claims the key again.
      await this.deps.clientJobs?.admit(slots, payload.id);
      // Granted before the job exists, so no job is ever without its controller.
      const token = await control(payload.id);
      const options: JobsOptions = {
        jobId: payload.id,
        attempts: this.deps.attempts ?? 3,
        backoff: { type: 'exponential', delay: 2_000 },
        removeOnComplete: { age: this.deps.artifactTtlSeconds + 86_400 },
        removeOnFail: { age: 86_400 },
      };
      const data = JobPayloadSchema.parse(payload);
      await (webhook ? this.addWithWebhook(data, options, webhook) : queue.add('download', data, options)).catch(
        async (err: unknown) => {
          await this.deps.clientJobs?.release(slots, payload.id).catch(() => undefined);
          throw err;
        },
      );
      return { id: payload.id, reused: false, token };
    } catch (err) {
      if (err instanceof ReelayError) throw err;
      throw new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', {
        cause: err,
      });
    }
  }

  /**
   * The job and its delivery in one flow, written to Redis at once: the delivery (WEBHOOK_QUEUE, the
   * same id) waits for its child, the download job, and BullMQ moves it to the wait list in the same
   * step that finishes the child, completed or (ignoreDependencyOnFailure) finally failed. No process
   * has to see the end happen, so no kill or restart can lose a delivery.
   */
  private async addWithWebhook(payload: JobPayload, options: JobsOptions, webhook: RequestedWebhook): Promise<void> {
    const flows = this.deps.flows;
    if (!flows) throw new ReelayError('service_unavailable', 'Webhooks are not set up on this gateway.');
    const prefix = this.deps.queue.opts.prefix;
    const delivery: WebhookJob = {
      job_id: payload.id,
      url: webhook.url,
      ...(webhook.secret ? { secret: webhook.secret } : {}),
      ...(webhook.subscription_id ? { subscription_id: webhook.subscription_id } : {}),
    };
    await flows.add({
      name: 'deliver',
      queueName: WEBHOOK_QUEUE,
      prefix,
      data: delivery,
      // The schedule is the worker's backoffStrategy (webhookRetryDelay). Kept as long as the job.
      opts: {
        jobId: payload.id,
        attempts: WEBHOOK_ATTEMPTS,
        backoff: { type: 'webhook' },
        removeOnComplete: options.removeOnComplete,
        removeOnFail: { age: this.deps.artifactTtlSeconds + 86_400 },
      },
      children: [
        {
          name: 'download',
          queueName: DOWNLOAD_QUEUE,
          prefix,
          data: payload,
          opts: { ...options, ignoreDependencyOnFailure: true },
        },
      ],
    });
  }
}
