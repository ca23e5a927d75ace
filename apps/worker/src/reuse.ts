// Files not made twice: a job whose identical request (the same request_key: the same inputs, format,
// name, clip, tags and tracks) has a finished file that still lives completes from a copy of that file
// instead of running ffmpeg again, and a collection's ZIP of the same entries is copied likewise. A
// repeated feed download then costs copies, not conversions. The index is one Redis key per request
// (and per bundle), written when a file is stored and expiring with it. Only the bytes are shared: every
// job keeps its own id, artifact, expiry and control, whichever client asked for it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ArtifactMeta, ArtifactStore } from '@reelay/artifacts';
import { DOWNLOAD_QUEUE, type JobPayload, type JobResult } from '@reelay/contracts';
import type { RedisClient } from '@reelay/redis';

/** A file this close to its expiry is not worth a copy: it may be swept while it is read. */
const MIN_LIFE_LEFT_MS = 10_000;

export interface ReuseDeps {
  redis: RedisClient;
  prefix?: string;
  artifacts: ArtifactStore;
  /** ARTIFACT_TTL_SECONDS: how long the copy lives, like any new artifact. */
  artifactTtlSeconds: number;
}

/** What the index remembers of a stored file: whose it is, and what its job's result said beside it. */
interface Remembered {
  id: string;
  clip_method?: JobResult['clip_method'];
  left_out?: number;
}

export const reuseKey = (prefix: string | undefined, kind: 'job' | 'bundle', identity: string) =>
  `${prefix ?? 'bull'}:${DOWNLOAD_QUEUE}:reuse:${kind}:${identity}`;

/** The identity of a collection's ZIP: its title, its bound, and each entry's index, title and request. */
export function bundleIdentity(
  title: string,
  maxBytes: number,
  entries: { index: number; title?: string; request_key?: string }[],
): string | undefined {
  // Entries recorded before their request was (older parents) cannot be told the same.
  if (entries.some((e) => e.request_key === undefined)) return undefined;
  const described = entries.map((e) => [e.index, e.title ?? null, e.request_key]);
  return createHash('sha256')
    .update(JSON.stringify({ title, maxBytes, entries: described }))
    .digest('base64url');
}

/** A request whose file depends on when it runs (a live recording) is never served from another's. */
const reusable = (payload: JobPayload) => payload.operation !== 'record';

export class ArtifactReuse {
  constructor(private readonly deps: ReuseDeps) {}

  private async recall(key: string, ownId: string): Promise<(Remembered & { meta: ArtifactMeta }) | undefined> {
    const raw = await this.deps.redis.get(key);
    if (!raw) return undefined;
    let remembered: Remembered;
    try {
      remembered = JSON.parse(raw) as Remembered;
    } catch {
      return undefined;
    }
    if (typeof remembered.id !== 'string' || remembered.id === ownId) return undefined;
    const stored = await this.deps.artifacts.get(remembered.id);
    if (!stored || stored.meta.expires_at - Date.now() < MIN_LIFE_LEFT_MS) return undefined;
    return { ...remembered, meta: stored.meta };
  }

  private async remember(key: string, value: Remembered, expiresAt: number): Promise<void> {
    const ms = expiresAt - Date.now();
    if (ms > MIN_LIFE_LEFT_MS) await this.deps.redis.set(key, JSON.stringify(value), 'PX', ms);
  }

  /** Copies artifact `from` into `to` through `dir`, with a life of its own; undefined if it went meanwhile. */
  private async copy(from: ArtifactMeta, to: string, dir: string): Promise<ArtifactMeta | undefined> {
    const stream = await this.deps.artifacts.open(from.id);
    if (!stream) return undefined;
    const file = path.join(dir, 'reused');
    await pipeline(stream, fs.createWriteStream(file));
    const { size } = await fs.promises.stat(file);
    if (size !== from.size) return undefined; // cut short or replaced while read: make it afresh
    return this.deps.artifacts.put(to, file, {
      filename: from.filename,
      content_type: from.content_type,
      expires_at: Date.now() + this.deps.artifactTtlSeconds * 1000,
    });
  }

  /** The job's result from an identical request's living file (copied into this job's own artifact), or undefined. */
  async take(payload: JobPayload, dir: string): Promise<(JobResult & { reused_from: string }) | undefined> {
    if (!reusable(payload)) return undefined;
    const found = await this.recall(reuseKey(this.deps.prefix, 'job', payload.request_key), payload.id);
    if (!found) return undefined;
    const meta = await this.copy(found.meta, payload.id, dir);
    if (!meta) return undefined;
    return {
      filename: meta.filename,
      content_type: meta.content_type,
      size: meta.size,
      expires_at: meta.expires_at,
      ...(found.clip_method ? { clip_method: found.clip_method } : {}),
      reused_from: found.id,
    };
  }

  /** Remembers a job's stored file for the identical requests that follow, while it lives. */
  async keep(payload: JobPayload, result: JobResult): Promise<void> {
    if (!reusable(payload)) return;
    await this.remember(
      reuseKey(this.deps.prefix, 'job', payload.request_key),
      { id: payload.id, ...(result.clip_method ? { clip_method: result.clip_method } : {}) },
      result.expires_at,
    );
  }

  /** A collection's ZIP of the same entries, copied into `id`; undefined when none lives. */
  async takeBundle(
    identity: string,
    id: string,
  ): Promise<(ArtifactMeta & { left_out: number; reused_from: string }) | undefined> {
    const found = await this.recall(reuseKey(this.deps.prefix, 'bundle', identity), id);
    if (!found) return undefined;
    const dir = await this.deps.artifacts.makeTempDir(id);
    try {
      const meta = await this.copy(found.meta, id, dir);
      return meta && { ...meta, left_out: found.left_out ?? 0, reused_from: found.id };
    } finally {
      await this.deps.artifacts.removeTempDir(dir).catch(() => undefined);
    }
  }

  async keepBundle(identity: string, meta: ArtifactMeta & { left_out: number }): Promise<void> {
    await this.remember(
      reuseKey(this.deps.prefix, 'bundle', identity),
      { id: meta.id, left_out: meta.left_out },
      meta.expires_at,
    );
  }
}
