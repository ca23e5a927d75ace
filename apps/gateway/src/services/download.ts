// Download planning: which stored source(s) a request names, whether they are a direct stream or a
// job (merge, convert, remux), and enqueueing jobs so that the same request while its job or
// artifact lives gets the same job.
import { createHash, randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  AUDIO_FORMATS,
  JobPayloadSchema,
  ReelayError,
  type DownloadRequest,
  type JobInput,
  type JobPayload,
  type OutputFormat,
  type StoredSource,
} from '@reelay/contracts';
import type { SourceRegistry } from '@reelay/sources';
import { sanitizeBasename } from '../http/disposition.js';

const PROGRESSIVE = new Set(['muxed_progressive', 'video_only', 'audio_only', 'image']);
const DASH_FRAGMENT = '#representation=';

export type DownloadPlan = { kind: 'direct'; source: StoredSource; basename: string } | { kind: 'job'; payload: JobPayload };

export interface DownloadServiceDeps {
  sources: SourceRegistry;
  queue: Queue;
  redis: Redis;
  /** Seconds a job may run and an artifact lives: they bound how long a request key is kept. */
  jobTimeoutSeconds: number;
  artifactTtlSeconds: number;
  /** BullMQ job options the producer owns: retries and retention. */
  attempts?: number;
  /** Current job state for de-duplication; returns undefined when the job is gone or unusable. */
  jobAlive: (id: string) => Promise<boolean>;
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
  if (s.stream_profile === 'dash') {
    const at = s.url.indexOf(DASH_FRAGMENT);
    if (at >= 0) {
      url = s.url.slice(0, at);
      representation = decodeURIComponent(s.url.slice(at + DASH_FRAGMENT.length));
    }
  }
  return {
    url,
    stream_profile: s.stream_profile,
    representation,
    headers: s.headers,
    codecs: s.codecs,
    has_audio: s.has_audio,
    has_video: s.has_video,
  };
}

export class DownloadService {
  constructor(private readonly deps: DownloadServiceDeps) {}

  private async lookup(url: string, field: string): Promise<StoredSource> {
    const source = await this.deps.sources.get(url);
    if (!source) {
      throw new ReelayError('unknown_source', `The ${field} was not returned by an extract in the last while; extract the page again and use a URL from its result.`);
    }
    return source;
  }

  async plan(body: DownloadRequest): Promise<DownloadPlan> {
    const format = body.format;
    if (body.url !== undefined) {
      const source = await this.lookup(body.url, 'url');
      const basename = sanitizeBasename(body.filename ?? source.title);
      if (PROGRESSIVE.has(source.stream_profile)) {
        if (!format || format === source.ext) return { kind: 'direct', source, basename };
        if (source.stream_profile === 'image') throw new ReelayError('invalid_request', 'Images are delivered as they are; they cannot be converted.');
        if (AUDIO_FORMATS.has(format) && source.has_audio === false) throw new ReelayError('invalid_request', `This source has no audio track to convert to ${format}.`);
        if (!AUDIO_FORMATS.has(format) && !hasVideo(source)) throw new ReelayError('invalid_request', `This source is audio only; choose mp3, m4a, opus or wav instead of ${format}.`);
        return { kind: 'job', payload: this.payload('convert', [source], format, basename) };
      }
      return { kind: 'job', payload: this.payload('remux', [source], format, basename) };
    }

    const [video, audio] = await Promise.all([this.lookup(body.video_url!, 'video_url'), this.lookup(body.audio_url!, 'audio_url')]);
    if (!hasVideo(video)) throw new ReelayError('invalid_merge_pair', 'video_url is not a video source.');
    if (!isAudioOnly(audio)) throw new ReelayError('invalid_merge_pair', 'audio_url is not an audio-only source.');
    if (video.item_key !== audio.item_key) throw new ReelayError('invalid_merge_pair', 'The video and audio sources belong to different media items.');
    if (format && AUDIO_FORMATS.has(format)) throw new ReelayError('invalid_request', 'A merge makes a video: choose mp4, webm or mkv, or download the audio source alone.');
    const progressive = [video, audio].filter((s) => PROGRESSIVE.has(s.stream_profile)).length;
    // A file with a segmented stream has no operation: merge copies two files, remux reads two
    // manifests. Such pairs do not come out of one extract in practice; refuse them clearly.
    if (progressive === 1) throw new ReelayError('invalid_merge_pair', 'A merge pair must be two progressive files or two HLS/DASH streams, not one of each.');
    const operation = progressive === 2 ? 'merge' : 'remux';
    return { kind: 'job', payload: this.payload(operation, [video, audio], format, sanitizeBasename(body.filename ?? video.title)) };
  }

  private payload(operation: JobPayload['operation'], sources: StoredSource[], format: OutputFormat | undefined, basename: string): JobPayload {
    const inputs = sources.map(toInput);
    const key = createHash('sha256').update(JSON.stringify({ operation, inputs: inputs.map((i) => [i.url, i.representation ?? null]), format: format ?? null, basename })).digest('base64url');
    const durations = sources.map((s) => s.duration).filter((d): d is number => typeof d === 'number' && d > 0);
    return JobPayloadSchema.parse({
      id: randomBytes(16).toString('base64url'),
      operation,
      inputs,
      format,
      basename,
      duration: durations.length ? Math.max(...durations) : undefined,
      request_key: key,
      created_at: Date.now(),
    });
  }

  /** Enqueues a job, or returns the id of the live job this same request already started. */
  async enqueue(payload: JobPayload): Promise<{ id: string; reused: boolean }> {
    const { redis, queue } = this.deps;
    const key = `reelay:dl:${payload.request_key}`;
    const ttl = this.deps.jobTimeoutSeconds + this.deps.artifactTtlSeconds + 3600;
    try {
      const claimed = await redis.set(key, payload.id, 'EX', ttl, 'NX');
      if (claimed !== 'OK') {
        const existing = await redis.get(key);
        if (existing && (await this.deps.jobAlive(existing))) return { id: existing, reused: true };
        await redis.set(key, payload.id, 'EX', ttl);
      }
      await queue.add('download', JobPayloadSchema.parse(payload), {
        jobId: payload.id,
        attempts: this.deps.attempts ?? 3,
        backoff: { type: 'exponential', delay: 2_000 },
        removeOnComplete: { age: this.deps.artifactTtlSeconds + 86_400 },
        removeOnFail: { age: 86_400 },
      });
      return { id: payload.id, reused: false };
    } catch (err) {
      if (err instanceof ReelayError) throw err;
      throw new ReelayError('service_unavailable', 'The job queue (Redis) is unavailable; try again shortly.', { cause: err });
    }
  }
}
