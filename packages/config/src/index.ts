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

export const ConfigSchema = z.object({
  PORT: int(0, 65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL').optional(),
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
  FFMPEG_PATH: z.string().min(1).optional(),
  FFPROBE_PATH: z.string().min(1).optional(),
  YTDLP_PATH: z.string().min(1).optional(),
  YTDLP_HOSTS: list.default([]),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Platform endpoint overrides, e.g. PLATFORM_BLUESKY_API=http://127.0.0.1:9000 (tests, mirrors). */
  platformEndpoints: z.record(z.string(), z.string().url()).default({}),
  /** CHILD_ENV_NAMES as found: what a child process (yt-dlp) is given to find its runtime. */
  childEnv: z.record(z.string(), z.string()).default({}),
});

/**
 * The variables a child process may inherit so a pip, venv or distribution install finds its Python,
 * locale and certificates. Nothing else: no proxy variables, no secret of reelay's such as REDIS_URL.
 */
export const CHILD_ENV_NAMES: readonly string[] = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'PYTHONPATH', 'PYTHONHOME', 'VIRTUAL_ENV', 'SSL_CERT_FILE', 'SSL_CERT_DIR'];

export type Config = z.infer<typeof ConfigSchema>;

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
    else if (key in ConfigSchema.shape) input[key] = value;
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
