// What every step of a download job's run is: a name, the phase its time is logged under, and one
// function from the run's context to what it made for the steps after it. choose.ts picks the steps
// once; job-run.ts runs them in order. A step throws its failure as it is; process.ts classifies it.
import type { Job } from 'bullmq';
import type { ArtifactMeta, ArtifactStore } from '@reelay/artifacts';
import type { Config } from '@reelay/config';
import type { ClipMethod, JobPayload } from '@reelay/contracts';
import type { Egress } from '@reelay/egress';
import type { ChildLimits } from '@reelay/media';
import type { Logger } from '@reelay/observability';
import type { JobPlan } from '../plan.js';
import type { ProgressWriter } from '../progress-writer.js';
import type { JobProxySession } from '../proxy-session.js';

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

/** One attempt of a job as process.ts hands it over: its folder and proxy session exist. */
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
  /** Filled with how long each phase took (ms), for the log line of a stored job (bench/ reads it). */
  phases?: Record<string, number>;
}

/**
 * What the steps hand on. Each step returns the part it made; the runner lays it over the context
 * for the steps after it. A new step that makes something new adds its field here.
 */
export interface Made {
  /** planJob's plan, as steps change it: the cover added, a whole file read from its local copy. */
  plan: JobPlan;
  /** The file the render writes and verify, then store, take. */
  output: string;
  /** The source's duration (the payload's, or ffprobe's), checked against the clip (media-duration.ts). */
  mediaSeconds?: Promise<number | undefined>;
  /** How long the finished file must last, when that is known (render steps; verify checks it). */
  outputSeconds?: number;
  /** How a clip was cut, for the job's result. */
  clipMethod?: ClipMethod;
  /** The artifact as the store kept it. */
  stored?: ArtifactMeta;
}

/** Everything a step reads: the worker's parts, the attempt, and what the steps before it made. */
export type StepContext = RunContext & Made & { deps: RunDeps; phases: Record<string, number> };

/**
 * The keys of the job's `phases_ms` that steps fill (bench/jobs.mjs, short-merge.mjs, smart-cut.mjs
 * and collection.mjs read them): the time of every step with that phase, added up. Render steps add
 * finer keys of their own (ffmpeg_*, clip_*).
 */
export type Phase = 'prepare' | 'fetch' | 'ffmpeg' | 'verify' | 'store' | 'progress';

export interface Step {
  /** What the step does, in a word or two (the chooser's tests and the debug log list these). */
  readonly name: string;
  readonly phase: Phase;
  /**
   * Judges or keeps a file already made: started even after the deadline or a stop, under its own
   * short bound (a cancelled job's file is removed by process.ts afterwards). No other step is
   * started once the job's time is up or it was told to stop.
   */
  readonly finishing?: boolean;
  run(ctx: StepContext): Promise<Partial<Made> | void>;
}

/** The bounds every ffmpeg and ffprobe of a job runs under. */
export function childLimits(config: RunDeps['config']): ChildLimits {
  return { memoryMb: config.JOB_MAX_MEMORY_MB, cpuSeconds: config.JOB_MAX_CPU_SECONDS };
}
