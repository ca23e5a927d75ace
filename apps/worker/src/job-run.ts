// One attempt of a job, once its folder and proxy session exist: ffmpeg through the proxy, then the
// judgement of the result (ffmpeg's exit, what the proxy saw, ffprobe of the file against what was
// asked), then the artifact. Failures are thrown for process.ts to classify.
import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Job } from 'bullmq';
import type { ArtifactStore } from '@reelay/artifacts';
import type { Config } from '@reelay/config';
import { ReelayError, type ClipMethod, type JobPayload, type JobResult } from '@reelay/contracts';
import type { Egress } from '@reelay/egress';
import {
  buildArgs,
  clipLength,
  COVER_FORMATS,
  FfmpegError,
  outputFormat,
  probe,
  runFfmpeg,
  verifyOutput,
  type ChildLimits,
  type ConvertOperation,
} from '@reelay/media';
import { prepareCover } from './cover.js';
import { runPreciseClip } from './smart-clip.js';
import { withRef, type Logger } from '@reelay/observability';
import { expectedOutput } from './expectations.js';
import { IncompleteOutputError, onStorage, OutputError } from './failure.js';
import type { JobPlan } from './plan.js';
import type { ProgressWriter } from './progress-writer.js';
import type { JobProxySession } from './proxy-session.js';
import { fetchWholeFile, WHOLE_FILE_RANGE_THRESHOLD } from './whole-file.js';

/** The formats a precise clip can be cut smart into (smart-clip.ts); others are re-encoded whole. */
const SMART_FORMATS = new Set(['mp4', 'mkv']);

export interface RunDeps {
  config: Pick<
    Config,
    'JOB_TIMEOUT_SECONDS' | 'ARTIFACT_TTL_SECONDS' | 'MAX_MEDIA_BYTES' | 'JOB_MAX_MEMORY_MB' | 'JOB_MAX_CPU_SECONDS'
  >;
  artifacts: ArtifactStore;
  binaries: { ffmpeg: string; ffprobe: string };
  /** The guard the cover art's fetch goes through; without it no cover is embedded. */
  egress?: Pick<Egress, 'open' | 'read'>;
}

export interface RunContext {
  job: Pick<Job, 'updateProgress'>;
  payload: JobPayload;
  plan: JobPlan;
  session: JobProxySession;
  dir: string;
  log: Logger;
  progress: ProgressWriter;
  signal: AbortSignal;
  /** A cancel: ffmpeg is killed outright (signal only asks it to stop and finish its file). */
  cancel?: AbortSignal;
  deadline: number;
  /** Filled with how long each step took (ms), for the log line of a stored job (bench/ reads it). */
  phases?: Record<string, number>;
}

/** As long as the least time between two progress writes: a job shorter than this needs no percentage. */
export const PROBE_DELAY_MS = 1_000;

/** The proxy saw a failure upstream that fails the job whatever ffmpeg made of it; classifyFailure reads which. */
export class UpstreamFailed extends Error {
  override readonly name = 'UpstreamFailed';
}

/** The bounds every ffmpeg and ffprobe of a job runs under. */
export function childLimits(config: RunDeps['config']): ChildLimits {
  return { memoryMb: config.JOB_MAX_MEMORY_MB, cpuSeconds: config.JOB_MAX_CPU_SECONDS };
}

export async function runJob(deps: RunDeps, ctx: RunContext): Promise<JobResult> {
  const { config } = deps;
  const { payload, session, log } = ctx;
  const phases = ctx.phases ?? {};
  let mark = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    phases[name] = Math.round(now - mark);
    mark = now;
  };
  // A clip needs the input's duration before the run: a start past the end is the client's error
  // (invalid_clip), which ffmpeg would not report (it copies the last keyframe's stretch instead).
  // A precise clip cut smart fetches its range while ffprobe reads the duration, and checks it before
  // anything reads the range (smart-clip.ts): the probe is a process start and a request it no
  // longer waits for.
  const smart =
    payload.clip?.mode === 'precise' &&
    ctx.plan.operation.type !== 'subtitle' &&
    SMART_FORMATS.has(outputFormat(ctx.plan.operation))
      ? payload.clip
      : undefined;
  const checkedSeconds = (
    payload.clip && payload.duration === undefined
      ? probeDuration(deps, ctx.plan, session, ctx)
      : Promise.resolve(payload.duration)
  ).then((seconds) => {
    if (payload.clip && seconds !== undefined && payload.clip.start >= seconds) {
      throw new ReelayError(
        'invalid_clip',
        `clip.start (${payload.clip.start} s) is at or past the end of the media (${seconds.toFixed(3)} s).`,
      );
    }
    return seconds;
  });
  checkedSeconds.catch(() => undefined); // awaited below on every path; this only keeps an early failure from counting as unhandled
  let inputSeconds = smart ? undefined : await checkedSeconds;
  const covered = await withCover(deps, ctx);
  lap('prepare'); // the clip's duration probe and the cover art, when the job has them
  // A whole file kept in its own format is fetched first; ffmpeg then copies from the local file.
  const whole = await fetchFirst(ctx, covered, lap);
  const plan = whole?.plan ?? covered;
  // Without a duration from the extract, ffprobe finds it while ffmpeg already runs, and only once
  // ffmpeg has run for PROBE_DELAY_MS: a job done sooner shows no percentage anyway, and an ffprobe
  // beside it cost a process start and a header read (a third of a short job's time, in bench/).
  const probeAbort = new AbortController();
  const probeSignal = AbortSignal.any([ctx.signal, probeAbort.signal]);
  const probeLater = async (): Promise<number | undefined> => {
    await delay(PROBE_DELAY_MS, undefined, { signal: probeSignal });
    return probeDuration(deps, plan, session, { ...ctx, signal: probeSignal });
  };
  const known = payload.clip ? clipLength(payload.clip, inputSeconds) : payload.duration;
  const duration =
    known ??
    probeLater().catch((err: unknown) => {
      if (!probeSignal.aborted)
        log.info({ cause: withRef((err as Error).message, payload.id) }, 'duration probe failed');
      return undefined;
    });

  const output = path.join(ctx.dir, 'output.part');
  const { args } = buildArgs(plan.operation, { output, maxOutputBytes: config.MAX_MEDIA_BYTES });
  const remaining = ctx.deadline - Date.now();
  if (remaining <= 0) throw new FfmpegError('timeout', 'no time left for ffmpeg', undefined, '');
  const operation = plan.operation;
  const format = outputFormat(operation);
  // A precise clip into mp4 or mkv is cut smart where the source allows (smart-clip.ts); a fast
  // clip is a copy, and any other precise clip is re-encoded as before.
  let clipMethod: ClipMethod | undefined = payload.clip
    ? payload.clip.mode === 'fast'
      ? 'copy'
      : 'reencode'
    : undefined;
  const ffmpegStarted = Date.now();
  let ffmpegEnded = ffmpegStarted;
  try {
    if (smart && operation.type !== 'subtitle' && (format === 'mp4' || format === 'mkv')) {
      clipMethod = await runPreciseClip(
        {
          binaries: deps.binaries,
          limits: childLimits(config),
          maxOutputBytes: config.MAX_MEDIA_BYTES,
          env: session.env,
          dir: ctx.dir,
          signal: ctx.signal,
          deadline: ctx.deadline,
          log,
          progress: ctx.progress,
          phases,
        },
        { operation, format, clip: smart, mediaSeconds: checkedSeconds, tags: operation.tags, output },
      );
      inputSeconds = await checkedSeconds; // settled: the steps waited for it
    } else {
      const ffmpeg = (argv: string[]) =>
        runFfmpeg({
          binary: deps.binaries.ffmpeg,
          args: argv,
          env: session.env,
          cwd: ctx.dir,
          signal: ctx.signal,
          timeoutMs: Math.max(1, ctx.deadline - Date.now()),
          limits: childLimits(config),
          killSignal: ctx.cancel,
          durationSeconds: duration,
          // After a whole file's fetch (its first 90 %), ffmpeg's copy is the rest.
          onProgress: (percent) => ctx.progress.report(whole ? 90 + percent / 10 : percent),
        });
      try {
        await ffmpeg(args);
      } catch (err) {
        // A whole file whose streams do not fit its own format after all (its name or type said
        // another one): probed, and converted with what it holds, as any file is.
        if (!whole || !(err instanceof FfmpegError) || err.kind !== 'failed') throw err;
        log.info('whole file: its streams could not be copied into its own format; converting what ffprobe finds');
        const retry = await probedOperation(deps, ctx, whole.plan.operation);
        await ffmpeg(buildArgs(retry, { output, maxOutputBytes: config.MAX_MEDIA_BYTES }).args);
      }
    }
    ffmpegEnded = Date.now();
  } finally {
    probeAbort.abort();
  }
  await ctx.progress.settled();
  lap('ffmpeg');
  Object.assign(phases, ffmpegTimeline(ffmpegStarted, ffmpegEnded, session));
  // A blocked address, a byte limit, a refusal or a 5xx fail the job even when ffmpeg exited 0 (it
  // skips HLS segments it cannot fetch). A 404 or 410 alone does not: DASH and HLS demuxers often
  // ask for one segment past the end and still make a whole file. The file's check decides, and the
  // 404 stays on record as the explanation if it fails.
  const { notFound: _notFound, ...fatal } = session.failures;
  if (Object.values(fatal).some((v) => v !== undefined)) throw new UpstreamFailed();

  const { size } = await fs.stat(output);
  if (size === 0) throw new OutputError('ffmpeg produced an empty file.');
  if (size >= config.MAX_MEDIA_BYTES) throw new OutputError('The result is larger than the media size limit.');
  // A clip of an input of unknown length may end anywhere before its end: no duration to expect.
  const expected = expectedOutput(
    payload,
    plan.operation,
    payload.clip && inputSeconds === undefined ? undefined : smart ? clipLength(smart, inputSeconds) : await duration,
  );
  const problems = await verifyOutput(output, expected, {
    binary: deps.binaries.ffprobe,
    kind: plan.operation.type === 'subtitle' ? 'subtitles' : undefined,
    signal: ctx.signal,
    timeoutMs: Math.max(5_000, ctx.deadline - Date.now()),
    limits: childLimits(config),
  });
  lap('verify');
  if (problems.length > 0) throw new IncompleteOutputError(problems);
  if (session.failures.notFound)
    log.info(
      { status: session.failures.notFound },
      'the origin answered 404 for part of the media, and the file is complete',
    );

  const expiresAt = Date.now() + config.ARTIFACT_TTL_SECONDS * 1000;
  const stored = await onStorage('artifacts', () =>
    deps.artifacts.put(payload.id, output, {
      filename: plan.filename,
      content_type: plan.contentType,
      expires_at: expiresAt,
    }),
  );
  lap('store');
  await ctx.job.updateProgress(100);
  lap('progress');
  return {
    filename: stored.filename,
    content_type: stored.content_type,
    size: stored.size,
    expires_at: stored.expires_at,
    ...(clipMethod ? { clip_method: clipMethod } : {}),
  };
}

/**
 * A whole file (payload.whole_file, converted into its own format without a clip or subtitles):
 * fetched into the job's folder, then the plan reads it from there and copies its streams, even when
 * the extract did not know their codecs. Undefined for other jobs.
 */
async function fetchFirst(
  ctx: RunContext,
  plan: JobPlan,
  lap: (phase: string) => void,
): Promise<{ plan: JobPlan & { operation: ConvertOperation } } | undefined> {
  const { payload, session } = ctx;
  const op = plan.operation;
  if (
    !payload.whole_file ||
    op.type !== 'convert' ||
    op.manifest !== undefined ||
    payload.clip ||
    payload.subtitles?.length
  )
    return undefined;
  const input = typeof op.input === 'string' ? { url: op.input } : op.input;
  const file = path.join(ctx.dir, 'input');
  session.rangeThresholdBytes = WHOLE_FILE_RANGE_THRESHOLD;
  const timeout = AbortSignal.timeout(Math.max(1, ctx.deadline - Date.now()));
  try {
    await fetchWholeFile(session, input, file, AbortSignal.any([ctx.signal, timeout]), (fraction) =>
      ctx.progress.report(fraction * 90),
    );
  } catch (err) {
    if (timeout.aborted && !ctx.signal.aborted)
      throw new FfmpegError('timeout', 'the file was not fetched within the job time', undefined, '');
    throw err;
  }
  lap('fetch');
  // Written again in its own format, its streams fit whatever they are: copied without a probe
  // (a process less a job; ffmpeg's failure falls back to probedOperation).
  const local: ConvertOperation = { ...op, input: file, streamsFit: true };
  return { plan: { ...plan, operation: local, probe: { input: { url: file }, kind: 'progressive', aes128: false } } };
}

/** A whole file's operation with the codecs ffprobe finds in its local copy, copying only what fits. */
async function probedOperation(deps: RunDeps, ctx: RunContext, op: ConvertOperation): Promise<ConvertOperation> {
  const info = await probe(op.input, {
    binary: deps.binaries.ffprobe,
    kind: 'progressive',
    signal: ctx.signal,
    timeoutMs: Math.max(5_000, ctx.deadline - Date.now()),
    limits: childLimits(deps.config),
  });
  const codec = (type: string) => info.streams.find((s) => s.type === type)?.codec;
  return {
    ...op,
    streamsFit: false,
    audioCodec: codec('audio') ?? op.audioCodec,
    videoCodec: codec('video') ?? op.videoCodec,
  };
}

/**
 * Where ffmpeg's time went, from the proxy's first and last byte to it: starting up and opening its
 * inputs, the transfer, and what it did after the last byte (the index written, and moved to the
 * front by +faststart). Empty when no byte went through the proxy (local inputs).
 */
export function ffmpegTimeline(
  started: number,
  ended: number,
  session: { firstByteAt?: number; lastByteAt?: number },
): Record<string, number> {
  const { firstByteAt: first, lastByteAt: last } = session;
  if (first === undefined || last === undefined) return {};
  return {
    ffmpeg_to_first_byte: first - started,
    ffmpeg_transfer: last - first,
    ffmpeg_after_last_byte: Math.max(0, ended - last),
  };
}

/** The plan with the cover art in it, for mp3, m4a and opus jobs whose item has a thumbnail. */
async function withCover(deps: RunDeps, ctx: RunContext): Promise<JobPlan> {
  const { payload, plan } = ctx;
  const operation = plan.operation;
  const format = outputFormat(operation);
  if (!payload.cover || !deps.egress || operation.type === 'subtitle' || !COVER_FORMATS.has(format)) return plan;
  const cover = await prepareCover(
    { egress: deps.egress, ffmpeg: deps.binaries.ffmpeg, limits: childLimits(deps.config) },
    payload.cover,
    format,
    payload.tags,
    ctx.dir,
    ctx.signal,
    ctx.log,
  );
  return cover ? { ...plan, operation: { ...operation, cover } } : plan;
}

/** The first input's duration, for progress. A quarter of the job's time at most, 15 s at most. */
async function probeDuration(
  deps: RunDeps,
  plan: JobPlan,
  session: JobProxySession,
  ctx: { log: Logger; signal: AbortSignal; deadline: number },
): Promise<number | undefined> {
  const timeout = Math.min(15_000, (deps.config.JOB_TIMEOUT_SECONDS * 1000) / 4, ctx.deadline - Date.now());
  try {
    const info = await probe(plan.probe.input, {
      binary: deps.binaries.ffprobe,
      kind: plan.probe.kind,
      aes128: plan.probe.aes128,
      env: session.headerReadEnv,
      signal: ctx.signal,
      timeoutMs: timeout,
      limits: childLimits(deps.config),
    });
    return info.durationSeconds;
  } catch (err) {
    if (!(err instanceof FfmpegError)) throw err;
    ctx.log.info(
      { kind: err.kind, exitCode: err.exitCode },
      'no duration from ffprobe: progress will jump to 100 at the end',
    );
    return undefined;
  }
}
