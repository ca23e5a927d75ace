// How the OpenAPI document states a limit: the number this server runs with (its setting's name after
// it, in parentheses, for the operator who would change it), never the setting's name alone, which
// tells a reader of /docs nothing.
import type { Config } from '@reelay/config';

/** The limits the route summaries state, as this server's configuration sets them. */
export interface StatedLimits {
  v1PerMinute: number;
  keyPerMinute: number;
  publicPerMinute: number;
  activeJobsPerClient: number;
}

export function statedLimits(config: Config): StatedLimits {
  return {
    v1PerMinute: config.RATE_LIMIT_V1_PER_MIN,
    keyPerMinute: config.RATE_LIMIT_KEY_PER_MIN,
    publicPerMinute: config.RATE_LIMIT_PUBLIC_PER_MIN,
    activeJobsPerClient: config.MAX_ACTIVE_JOBS_PER_CLIENT,
  };
}

/** "60 requests a minute per client address (RATE_LIMIT_V1_PER_MIN)"; 0 is no limit. */
export function perMinute(limit: number, per: string, setting: string): string {
  return limit > 0
    ? `${limit} request${limit === 1 ? '' : 's'} a minute per ${per} (${setting})`
    : `no limit of requests per ${per} on this server (${setting}=0)`;
}

/** "4 live jobs per client address (MAX_ACTIVE_JOBS_PER_CLIENT)"; 0 is no limit. */
export function atMost(limit: number, what: string, per: string, setting: string): string {
  return limit > 0
    ? `${limit} ${what} per ${per} (${setting})`
    : `no limit of ${what} per ${per} on this server (${setting}=0)`;
}
