// Configuration is read from the environment once, here, and validated with zod: a bad value stops
// the process with a message naming the variable. Nothing else in reelay reads process.env.
import fs from 'node:fs';
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

const list = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

/**
 * Outbound proxy URLs (http://, https://, socks5://, credentials allowed). A bad entry is named by its
 * position, never its text: it may hold a password.
 */
const proxyList = list.superRefine((urls, ctx) => {
  urls.forEach((raw, i) => {
    let url: URL | undefined;
    try {
      url = new URL(raw);
    } catch {
      /* reported below */
    }
    const ok =
      url &&
      ['http:', 'https:', 'socks5:'].includes(url.protocol) &&
      url.hostname !== '' &&
      (url.pathname === '' || url.pathname === '/') &&
      !url.search &&
      !url.hash;
    if (!ok)
      ctx.addIssue({
        code: 'custom',
        message: `entry ${i + 1} is not an http://, https:// or socks5:// proxy URL (scheme, optional user:password@, host, port)`,
      });
  });
});

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

export const ConfigSchema = z
  .object({
    PORT: int(0, 65535).default(8080),
    HOST: z.string().min(1).default('127.0.0.1'),
    /** redis://, rediss://, or a Redis Cluster's seed nodes: redis+cluster://host:port[,host:port…]. */
    REDIS_URL: z
      .string()
      .regex(/^rediss?(\+cluster)?:\/\//, 'must be a redis://, rediss:// or redis+cluster:// URL')
      .optional(),
    /** REDIS_URL names a Redis Cluster (the same as writing redis+cluster://). */
    REDIS_CLUSTER: bool.default(false),
    /** Sentinel mode: host:port list of sentinels; REDIS_URL then only gives password, db and TLS. */
    REDIS_SENTINELS: z
      .string()
      .transform((v, ctx) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
          .map((entry) => {
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
    DATA_DIR: z
      .string()
      .min(1)
      .default('./data')
      .transform((v) => path.resolve(v)),
    EGRESS_ALLOWLIST: list.default([]),
    /**
     * The HTTP client of all egress: got, or node:http, the former client kept as the benchmark's
     * baseline (and a fallback). Both carry the same guard, lanes, deadlines and caps.
     */
    EGRESS_CLIENT: z.enum(['got', 'http']).default('got'),
    /**
     * Requests one platform's API may have in flight from this process (Platform pacing); the rest
     * wait their turn. Not PLATFORM_*: those names are endpoint overrides.
     */
    PACING_CONCURRENCY_PER_PLATFORM: int(1, 256).default(8),
    TRUST_PROXY: trustProxy.default(false),
    SOURCE_TTL_SECONDS: int(1).default(3600),
    ARTIFACT_TTL_SECONDS: int(1).default(3600),
    JOB_TIMEOUT_SECONDS: int(1).default(900),
    MAX_MEDIA_BYTES: int(1).default(2 * GiB),
    /** Longest live recording (operation record), and the ceiling of live.duration; JOB_TIMEOUT_SECONDS does not apply to recordings. */
    MAX_RECORD_SECONDS: int(1, 7 * 86_400).default(14_400),
    // Twice the cores: most jobs wait on the network, not the CPU (stream copies of remuxes, merges and
    // whole files; bench/collection.mjs ran two of a 2-core worker's children at a time, each mostly
    // fetching). Each ffmpeg keeps its own JOB_MAX_MEMORY_MB and CPU bounds.
    WORKER_CONCURRENCY: int(1, 256).default(2 * Math.max(1, os.availableParallelism())),
    RATE_LIMIT_KEY_PER_MIN: int(1).default(100),
    RATE_LIMIT_PUBLIC_PER_MIN: int(1).default(15),
    METRICS_PORT: int(0, 65535).default(9464),
    // Operations (metrics exposure, shutdown): kept together in one block.
    /** false: the gateway answers /metrics only on METRICS_PORT, not on its public PORT. */
    METRICS_PUBLIC: bool.default(true),
    /** How long a stopping worker lets running jobs finish before handing them back to the queue. */
    SHUTDOWN_GRACE_SECONDS: int(0, 3600).default(30),
    /** A running job's lock in Redis, renewed at half this; a dead worker's job is free once it lapses. */
    JOB_LOCK_SECONDS: int(2, 3600).default(8),
    /** How often each worker looks for jobs whose lock lapsed and puts them back in the queue. */
    JOB_STALLED_CHECK_SECONDS: int(1, 3600).default(4),
    FFMPEG_PATH: z.string().min(1).optional(),
    FFPROBE_PATH: z.string().min(1).optional(),
    YTDLP_PATH: z.string().min(1).optional(),
    YTDLP_HOSTS: list.default([]),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** json for machines (the default); pretty (pino-pretty) for a person at a terminal. */
    LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
    // Safe in public: the limits every deployment has (DESIGN.md).
    /** POST /api/v1/extract and /download per client address and minute; 0 turns the limit off. */
    RATE_LIMIT_V1_PER_MIN: int(0).default(60),
    /** Requests to /api/v1/subscriptions… per client address and minute; 0 turns the limit off. */
    RATE_LIMIT_SUBSCRIPTIONS_PER_MIN: int(0).default(60),
    /** Queued or processing jobs one client address may have; 0 turns the limit off. */
    MAX_ACTIVE_JOBS_PER_CLIENT: int(0).default(4),
    /** Address-space bound of every ffmpeg, ffprobe and yt-dlp process. */
    JOB_MAX_MEMORY_MB: int(64).default(1024),
    /** CPU-time bound of every ffmpeg, ffprobe and yt-dlp process (all its threads together). */
    JOB_MAX_CPU_SECONDS: int(1).default(1800),
    /** Most segments one HLS or DASH media playlist may name. */
    MAX_SEGMENTS: int(1).default(20_000),
    /**
     * Connections a job's input may be fetched over at once: HLS segments fetched ahead of ffmpeg, and
     * parts of a large file in parallel ranges. 1 fetches as ffmpeg asks, one request at a time.
     */
    JOB_FETCH_CONCURRENCY: int(1, 32).default(8),
    /** A Redis command with no answer within this time fails (503), instead of hanging the request. */
    REDIS_COMMAND_TIMEOUT_MS: int(50, 60_000).default(2000),
    // Egress for the real internet (DESIGN.md).
    /** How long an extract result is served from Redis without contacting the origin; 0 turns it off. */
    EXTRACT_CACHE_SECONDS: int(0).default(60),
    // Webhooks (DESIGN.md "Job events and webhooks").
    /**
     * The deployment's webhook secrets (whsec_ + base64 of 24–64 bytes), separated by spaces or commas;
     * they sign deliveries whose request gave no webhook_secret. Each signs, so during a rotation the
     * header carries one `v1,` signature per secret. Unset: a webhook needs its own webhook_secret.
     */
    WEBHOOK_SECRET: z
      .string()
      .transform((v) => v.split(/[\s,]+/).filter(Boolean))
      .refine(
        (secrets) =>
          secrets.every(
            (s) =>
              /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(s) &&
              (s.length - 6) % 4 === 0 &&
              Buffer.from(s.slice(6), 'base64').length >= 24 &&
              Buffer.from(s.slice(6), 'base64').length <= 64,
          ),
        'must be whsec_ followed by the base64 of 24 to 64 random bytes (several separated by spaces)',
      )
      .default([]),
    // Collections (DESIGN.md "Collections: playlists, channels, feeds").
    /** Most entries one collection lists across all its pages (and one collection download selects); at most 5,000 (50 pages of 100). */
    MAX_COLLECTION_ENTRIES: int(1, 5_000).default(200),
    /** Children of one collection download in the queue or running at once (DESIGN.md "Collections"). */
    COLLECTION_CONCURRENCY: int(1, 100).default(4),
    /**
     * The key collection cursors are signed with (HMAC-SHA256), at least 32 characters. Unset: a random
     * key made at start-up, right for one gateway process (its cursors end with it); replicas that
     * answer each other's cursors must share one.
     */
    COLLECTION_CURSOR_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
    // Subscriptions (DESIGN.md "Subscriptions").
    /** Most subscriptions one account holds. */
    MAX_SUBSCRIPTIONS_PER_ACCOUNT: int(1, 10_000).default(50),
    /** Most new entries one check starts jobs for; the rest wait for the next check. */
    MAX_ITEMS_PER_CHECK: int(1, 100).default(20),
    /**
     * The shortest `every` a subscription may ask for, in seconds: a bound on what one subscription
     * costs its sources and the workers. Tests and small deployments may lower it to 5.
     */
    SUBSCRIPTION_MIN_EVERY_SECONDS: int(5, 604_800).default(300),
    /** Outbound proxies for all traffic, used in turn; EXTRACT_/MEDIA_PROXY_URLS override it for their part. */
    PROXY_URLS: proxyList.default([]),
    /** Proxies for pages, platform APIs and yt-dlp (default: PROXY_URLS). */
    EXTRACT_PROXY_URLS: proxyList.default([]),
    /** Proxies for direct media streams and what jobs read (default: PROXY_URLS). */
    MEDIA_PROXY_URLS: proxyList.default([]),
    /**
     * A PEM file of certificates trusted, beside the system's roots, for the TLS of https:// proxies
     * (one behind a private CA). Read at start-up: the value is the file's PEM text.
     */
    PROXY_CA_FILE: z
      .string()
      .min(1)
      .transform((file, ctx) => {
        let pem: string;
        try {
          pem = fs.readFileSync(path.resolve(file), 'utf8');
        } catch (err) {
          ctx.addIssue({
            code: 'custom',
            message: `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
          });
          return z.NEVER;
        }
        if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
          ctx.addIssue({ code: 'custom', message: 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)' });
          return z.NEVER;
        }
        return pem;
      })
      .optional(),
    /** A Netscape cookies.txt sent by RFC 6265 rules on extraction and media requests and to yt-dlp. */
    COOKIES_FILE: z
      .string()
      .min(1)
      .transform((v) => path.resolve(v))
      .optional(),
    // Accounts as the specification names them (DESIGN.md): links in mails, social sign-in, mail.
    /** The deployment's external origin (https://reelay.example.org): redirect URIs, mail links, passkeys. */
    PUBLIC_URL: z
      .string()
      .url()
      .refine(
        (v) => /^https?:\/\//.test(v) && new URL(v).pathname === '/' && !new URL(v).search && !new URL(v).hash,
        'must be an http(s) origin without a path, e.g. https://reelay.example.org',
      )
      .transform((v) => new URL(v).origin)
      .optional(),
    /** SMTP server for account mail: smtp:// or smtps://, credentials allowed. Never logged. */
    SMTP_URL: z
      .string()
      .refine((v) => /^smtps?:\/\/[^/]/.test(v), 'must be an smtp:// or smtps:// URL')
      .optional(),
    /** The sender of account mail, e.g. `reelay <no-reply@example.org>`. */
    MAIL_FROM: z.string().min(3).max(254).optional(),
    /** OpenID Connect providers: JSON [{"id","name","issuer","client_id","client_secret"}]. */
    OIDC_PROVIDERS: z
      .string()
      .transform((v, ctx) => {
        try {
          return JSON.parse(v) as unknown;
        } catch {
          ctx.addIssue({ code: 'custom', message: 'is not JSON' });
          return z.NEVER;
        }
      })
      .pipe(
        z.array(
          z.object({
            id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'ids are 1-32 lower-case letters, digits and dashes'),
            name: z.string().min(1).max(64),
            issuer: z.string().url(),
            client_id: z.string().min(1),
            client_secret: z.string().min(1).optional(),
          }),
        ),
      )
      .optional(),
    GITHUB_CLIENT_ID: z.string().min(1).optional(),
    GITHUB_CLIENT_SECRET: z.string().min(1).optional(),
    /** Where GitHub's OAuth pages live (tests point it at a local stand-in). */
    GITHUB_OAUTH_URL: z.string().url().default('https://github.com'),
    /** GitHub's REST API (/user, /user/emails). */
    GITHUB_API_URL: z.string().url().default('https://api.github.com'),
    /** Platform endpoint overrides, e.g. PLATFORM_BLUESKY_API=http://127.0.0.1:9000 (tests, mirrors). */
    platformEndpoints: z.record(z.string(), z.string().url()).default({}),
    /** CHILD_ENV_NAMES as found: what a child process (yt-dlp) is given to find its runtime. */
    childEnv: z.record(z.string(), z.string()).default({}),
  })
  .superRefine((c, ctx) => {
    // Checked together: each is valid alone, but some combinations cannot work.
    if (c.ARTIFACT_STORE === 's3' && !c.S3_BUCKET)
      ctx.addIssue({ code: 'custom', path: ['S3_BUCKET'], message: 'is required when ARTIFACT_STORE=s3' });
    if (c.REDIS_SENTINELS?.length && !c.REDIS_SENTINEL_NAME)
      ctx.addIssue({
        code: 'custom',
        path: ['REDIS_SENTINEL_NAME'],
        message: 'is required when REDIS_SENTINELS is set (the name the sentinels monitor)',
      });
    if (isCluster(c) && c.REDIS_SENTINELS?.length)
      ctx.addIssue({
        code: 'custom',
        path: ['REDIS_SENTINELS'],
        message: 'a Redis Cluster has no sentinels: set either REDIS_SENTINELS or a cluster REDIS_URL',
      });
    if (isCluster(c) && c.REDIS_URL && typeof clusterSeeds(c.REDIS_URL) === 'string')
      ctx.addIssue({ code: 'custom', path: ['REDIS_URL'], message: clusterSeeds(c.REDIS_URL) as string });
    if (c.REDIS_SENTINEL_NAME && !c.REDIS_SENTINELS?.length)
      ctx.addIssue({
        code: 'custom',
        path: ['REDIS_SENTINELS'],
        message: 'is required when REDIS_SENTINEL_NAME is set',
      });
    if (Boolean(c.SMTP_URL) !== Boolean(c.MAIL_FROM))
      ctx.addIssue({ code: 'custom', path: ['MAIL_FROM'], message: 'SMTP_URL and MAIL_FROM are set together' });
    if (Boolean(c.GITHUB_CLIENT_ID) !== Boolean(c.GITHUB_CLIENT_SECRET))
      ctx.addIssue({
        code: 'custom',
        path: ['GITHUB_CLIENT_SECRET'],
        message: 'GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET are set together',
      });
    if ((c.SMTP_URL || c.OIDC_PROVIDERS?.length || c.GITHUB_CLIENT_ID) && !c.PUBLIC_URL)
      ctx.addIssue({
        code: 'custom',
        path: ['PUBLIC_URL'],
        message: 'is required for account mail and social sign-in (links and redirect URIs are built from it)',
      });
    if (
      c.OIDC_PROVIDERS &&
      new Set([...c.OIDC_PROVIDERS.map((p) => p.id), ...(c.GITHUB_CLIENT_ID ? ['github'] : [])]).size !==
        c.OIDC_PROVIDERS.length + (c.GITHUB_CLIENT_ID ? 1 : 0)
    )
      ctx.addIssue({
        code: 'custom',
        path: ['OIDC_PROVIDERS'],
        message: 'provider ids must be unique (and not github when GITHUB_CLIENT_ID is set)',
      });
    if (Boolean(c.AWS_ACCESS_KEY_ID) !== Boolean(c.AWS_SECRET_ACCESS_KEY))
      ctx.addIssue({
        code: 'custom',
        path: ['AWS_SECRET_ACCESS_KEY'],
        message: 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are set together',
      });
  });

/**
 * The variables a child process may inherit so a pip, venv or distribution install finds its Python,
 * locale and certificates. Nothing else: no proxy variables, no secret of reelay's such as REDIS_URL.
 */
export const CHILD_ENV_NAMES: readonly string[] = [
  'PATH',
  'HOME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'PYTHONPATH',
  'PYTHONHOME',
  'VIRTUAL_ENV',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
];

export type Config = z.infer<typeof ConfigSchema>;

const ConfigShape = ConfigSchema.shape;

/** Every variable reelay reads by name (PLATFORM_* aside), for the docs' checks. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(ConfigShape).filter((key) => key === key.toUpperCase());

/** Whether Redis is configured at all (a URL, or sentinels). */
export function hasRedis(config: Pick<Config, 'REDIS_URL' | 'REDIS_SENTINELS'>): boolean {
  return Boolean(config.REDIS_URL || config.REDIS_SENTINELS?.length);
}

/** Whether REDIS_URL names a Redis Cluster (redis+cluster://, or REDIS_CLUSTER=true). */
export function isCluster(config: Pick<Config, 'REDIS_URL'> & Partial<Pick<Config, 'REDIS_CLUSTER'>>): boolean {
  return Boolean(config.REDIS_CLUSTER || /^rediss?\+cluster:/.test(config.REDIS_URL ?? ''));
}

/** The password, username, database and TLS a Redis URL names (@reelay/redis connects with them). */
export function redisUrlCredentials(u: URL): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  if (u.username) options.username = decodeURIComponent(u.username);
  if (u.password) options.password = decodeURIComponent(u.password);
  if (u.pathname.length > 1) options.db = Number(u.pathname.slice(1));
  if (u.protocol.startsWith('rediss')) options.tls = {};
  return options;
}

/** A cluster URL's seed nodes and credentials, or what is wrong with it. */
export function clusterSeeds(
  url: string,
): { nodes: { host: string; port: number }[]; options: Record<string, unknown> } | string {
  // `host:port,host:port` is not a URL host, so the nodes are split off before URL parses the rest.
  const m = /^(rediss?)(?:\+cluster)?:\/\/(?:([^@/]*)@)?([^/?#@]+)(\/[^?#]*)?$/.exec(url);
  if (!m) return 'a cluster URL is redis+cluster://[user:password@]host:port[,host:port…]';
  const nodes = m[3].split(',').map((entry) => {
    const n = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(entry.trim());
    return n && Number(n[2]) <= 65535 ? { host: n[1], port: Number(n[2]) } : undefined;
  });
  if (nodes.some((n) => !n)) return 'every cluster seed node is host:port';
  const options = redisUrlCredentials(new URL(`${m[1]}://${m[2] ? `${m[2]}@` : ''}seed${m[4] ?? ''}`));
  if (options.db !== undefined && options.db !== 0) return 'a Redis Cluster has only database 0';
  delete options.db;
  return { nodes: nodes as { host: string; port: number }[], options };
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
        const variable =
          first === 'platformEndpoints' ? `${PLATFORM_PREFIX}${String(second).toUpperCase()}` : String(first);
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
      for (const issue of err.issues)
        process.stderr.write(`reelay: invalid configuration: ${issue.variable}: ${issue.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
