// Configuration is read from the environment once, here, and validated with zod: a bad value stops
// the process with a message naming the variable. Nothing else in reelay reads process.env.
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

const GiB = 1024 ** 3;

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);

/** TRUST_PROXY: a boolean, a hop count, or Express's list of trusted addresses/subnets. */
const trustProxy = z.string().transform((v): boolean | number | string => {
  if (v === 'true' || v === 'false') return v === 'true';
  if (/^\d+$/.test(v)) return Number(v);
  return v;
});

const list = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean));

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

export const ConfigSchema = z.object({
  PORT: int(0, 65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL').optional(),
  /** Sentinel mode: host:port list of sentinels; REDIS_URL then only gives password, db and TLS. */
  REDIS_SENTINELS: z
    .string()
    .transform((v, ctx) =>
      v.split(',').map((s) => s.trim()).filter(Boolean).map((entry) => {
        const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(entry);
        if (!m || Number(m[2]) > 65535) {
          ctx.addIssue({ code: 'custom', message: `${JSON.stringify(entry)} is not host:port` });
          return { host: '', port: 0 };
        }
        return { host: m[1], port: Number(m[2]) };
      }),
    )
    .optional(),
  REDIS_SENTINEL_NAME: z.string().min(1).optional(),
  /** Where finished job files live: a directory under DATA_DIR, or an S3-compatible bucket. */
  ARTIFACT_STORE: z.enum(['fs', 's3']).default('fs'),
  /** How the gateway hands out an S3 artifact: streamed through it, or a short-lived presigned redirect. */
  ARTIFACT_DELIVERY: z.enum(['stream', 'redirect']).default('stream'),
  S3_ENDPOINT: z.string().url().optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_BUCKET: z.string().min(3).max(63).optional(),
  /** Key prefix inside the bucket, e.g. `reelay/`. */
  S3_PREFIX: z.string().default('artifacts/'),
  S3_FORCE_PATH_STYLE: bool.default(false),
  /** Standard AWS variables; when unset the SDK's own chain (profiles, instance roles) applies. */
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default('./data').transform((v) => path.resolve(v)),
  EGRESS_ALLOWLIST: list.default([]),
  TRUST_PROXY: trustProxy.default(false),
  SOURCE_TTL_SECONDS: int(1).default(3600),
  ARTIFACT_TTL_SECONDS: int(1).default(3600),
  JOB_TIMEOUT_SECONDS: int(1).default(900),
  MAX_MEDIA_BYTES: int(1).default(2 * GiB),
  WORKER_CONCURRENCY: int(1, 256).default(Math.max(1, os.availableParallelism())),
  RATE_LIMIT_KEY_PER_MIN: int(1).default(100),
  RATE_LIMIT_PUBLIC_PER_MIN: int(1).default(15),
  METRICS_PORT: int(0, 65535).default(9464),
  // Operations (metrics exposure, shutdown): kept together in one block.
  /** false: the gateway answers /metrics only on METRICS_PORT, not on its public PORT. */
  METRICS_PUBLIC: bool.default(true),
  /** How long a stopping worker lets running jobs finish before handing them back to the queue. */
  SHUTDOWN_GRACE_SECONDS: int(0, 3600).default(30),
  FFMPEG_PATH: z.string().min(1).optional(),
  FFPROBE_PATH: z.string().min(1).optional(),
  YTDLP_PATH: z.string().min(1).optional(),
  YTDLP_HOSTS: list.default([]),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Platform endpoint overrides, e.g. PLATFORM_BLUESKY_API=http://127.0.0.1:9000 (tests, mirrors). */
  platformEndpoints: z.record(z.string(), z.string().url()).default({}),
  /** CHILD_ENV_NAMES as found: what a child process (yt-dlp) is given to find its runtime. */
  childEnv: z.record(z.string(), z.string()).default({}),
}).superRefine((c, ctx) => {
  // Checked together: each is valid alone, but some combinations cannot work.
  if (c.ARTIFACT_STORE === 's3' && !c.S3_BUCKET) ctx.addIssue({ code: 'custom', path: ['S3_BUCKET'], message: 'is required when ARTIFACT_STORE=s3' });
  if (c.REDIS_SENTINELS?.length && !c.REDIS_SENTINEL_NAME) ctx.addIssue({ code: 'custom', path: ['REDIS_SENTINEL_NAME'], message: 'is required when REDIS_SENTINELS is set (the name the sentinels monitor)' });
  if (c.REDIS_SENTINEL_NAME && !c.REDIS_SENTINELS?.length) ctx.addIssue({ code: 'custom', path: ['REDIS_SENTINELS'], message: 'is required when REDIS_SENTINEL_NAME is set' });
  if (Boolean(c.AWS_ACCESS_KEY_ID) !== Boolean(c.AWS_SECRET_ACCESS_KEY)) ctx.addIssue({ code: 'custom', path: ['AWS_SECRET_ACCESS_KEY'], message: 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are set together' });
});

/**
 * The variables a child process may inherit so a pip, venv or distribution install finds its Python,
 * locale and certificates. Nothing else: no proxy variables, no secret of reelay's such as REDIS_URL.
 */
export const CHILD_ENV_NAMES: readonly string[] = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'PYTHONPATH', 'PYTHONHOME', 'VIRTUAL_ENV', 'SSL_CERT_FILE', 'SSL_CERT_DIR'];

export type Config = z.infer<typeof ConfigSchema>;

const ConfigShape = ConfigSchema.shape;

/** Whether Redis is configured at all (a URL, or sentinels). */
export function hasRedis(config: Pick<Config, 'REDIS_URL' | 'REDIS_SENTINELS'>): boolean {
  return Boolean(config.REDIS_URL || config.REDIS_SENTINELS?.length);
}

/**
 * Connection settings for ioredis, from REDIS_URL or the sentinels (plain data, so this package does
 * not depend on ioredis). With sentinels, REDIS_URL may still carry the password, db and TLS.
 */
export function redisTarget(config: Pick<Config, 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_NAME'>): { url?: string; options: Record<string, unknown> } {
  if (!config.REDIS_SENTINELS?.length) return { url: config.REDIS_URL, options: {} };
  const options: Record<string, unknown> = { sentinels: config.REDIS_SENTINELS, name: config.REDIS_SENTINEL_NAME };
  if (config.REDIS_URL) {
    const u = new URL(config.REDIS_URL);
    if (u.username) options.username = decodeURIComponent(u.username);
    if (u.password) options.password = decodeURIComponent(u.password);
    if (u.pathname.length > 1) options.db = Number(u.pathname.slice(1));
    if (u.protocol === 'rediss:') options.tls = {};
  }
  return { options };
}

export class ConfigError extends Error {
  constructor(readonly issues: { variable: string; message: string }[]) {
    super(issues.map((i) => `${i.variable}: ${i.message}`).join('; '));
    this.name = 'ConfigError';
  }
}

const PLATFORM_PREFIX = 'PLATFORM_';

/** Parses a config from an environment-like record. Empty strings count as unset. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const input: Record<string, unknown> = {};
  const platformEndpoints: Record<string, string> = {};
  const childEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined || value === '') continue;
    if (CHILD_ENV_NAMES.includes(key)) childEnv[key] = value;
    if (key.startsWith(PLATFORM_PREFIX)) platformEndpoints[key.slice(PLATFORM_PREFIX.length).toLowerCase()] = value;
    else if (key in ConfigShape) input[key] = value;
  }
  input.platformEndpoints = platformEndpoints;
  input.childEnv = childEnv;
  const parsed = ConfigSchema.safeParse(input);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const [first, second] = issue.path;
        const variable = first === 'platformEndpoints' ? `${PLATFORM_PREFIX}${String(second).toUpperCase()}` : String(first);
        return { variable, message: issue.message };
      }),
    );
  }
  return parsed.data;
}

/** Reads process.env once; on a bad value prints which variable and exits 2. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  try {
    return parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const issue of err.issues) process.stderr.write(`reelay: invalid configuration: ${issue.variable}: ${issue.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
