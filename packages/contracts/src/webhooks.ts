// Webhooks (DESIGN.md "Job events and webhooks"), after the Standard Webhooks specification: the
// secret's format, the message a receiver gets, the delivery job's data, the Job's view of it and the
// retry schedule. Shared by the gateway (which validates and enqueues) and the worker (which sends).
import { z } from 'zod';
import { httpUrlSchema } from './http-url.js';

/** The BullMQ queue of deliveries: one job per download job, with the download job's id. */
export const WEBHOOK_QUEUE = 'webhooks';

/**
 * Standard Webhooks' secret form: `whsec_` and the padded base64 of a 24–64-byte key, whole: 8 to 21
 * groups of four characters (24–63 bytes), then optionally one more byte or two (`xx==`, `xxx=`), up
 * to 64 bytes. The OpenAPI document states this pattern, so it says exactly which secrets are taken.
 */
export const WEBHOOK_SECRET_PATTERN =
  /^whsec_(?:(?:[A-Za-z0-9+/]{4}){8,21}|(?:[A-Za-z0-9+/]{4}){8,21}[A-Za-z0-9+/]{2}==|(?:[A-Za-z0-9+/]{4}){8,20}[A-Za-z0-9+/]{3}=)$/;

/** The key a `whsec_` secret names, or undefined when it is not one of 24–64 bytes. */
export function webhookKey(secret: string): Buffer | undefined {
  if (!WEBHOOK_SECRET_PATTERN.test(secret)) return undefined;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return key.length >= 24 && key.length <= 64 ? key : undefined;
}

export const WebhookSecretSchema = z
  .string()
  .max(100)
  .regex(WEBHOOK_SECRET_PATTERN, 'must be whsec_ followed by the base64 of 24 to 64 random bytes')
  .describe(
    "whsec_ + base64 of 24–64 bytes: the key deliveries are signed with. Without it the deployment's WEBHOOK_SECRET is used. Never shown again",
  );

// The pattern keeps out other schemes and credentials; httpUrlSchema's rule checks that the host parses.
/** A webhook_secret without the webhook_url it signs for (dependentRequired in the request schemas). */
export const WEBHOOK_SECRET_NEEDS_URL = 'webhook_secret signs deliveries to webhook_url: give webhook_url too.';

/** A rule that depends on the server's settings, so the request schemas state it in `x-rules` (stated-rules.ts). */
export const WEBHOOK_SECRET_SETTING_RULE = {
  rule: 'On a server without WEBHOOK_SECRET, webhook_url needs webhook_secret',
  code: 'invalid_request',
  message:
    'This deployment has no WEBHOOK_SECRET: give webhook_secret (whsec_ and the base64 of 24 to 64 random bytes) to sign deliveries with.',
} as const;

export const WebhookUrlSchema = httpUrlSchema('invalid_request').describe(
  'Where to POST job.completed, job.failed or job.cancelled when the job ends: an http(s) URL without credentials whose host parses (checked by the egress guard now and at each delivery; redirects are not followed)',
);

export const WebhookStatusSchema = z.enum(['pending', 'delivered', 'failed']);

export const WebhookViewSchema = z
  .object({
    url: z.string(),
    status: WebhookStatusSchema.describe(
      'pending until an attempt got a 2xx (delivered) or every attempt failed (failed)',
    ),
    attempts: z.number().int().nonnegative().describe('Attempts made so far'),
    last_status: z.number().int().optional().describe('The HTTP status of the last attempt that got an answer'),
    last_error: z
      .string()
      .optional()
      .describe(
        'Why the last attempt got no usable answer (an error code: upstream_timeout, url_blocked, upstream_error)',
      ),
  })
  .meta({ id: 'JobWebhook' });
export type WebhookView = z.infer<typeof WebhookViewSchema>;

/**
 * A delivery job's data. The secret is the client's own (never shown, never logged); without it the
 * worker signs with the deployment's WEBHOOK_SECRET at delivery time. `message` is fixed at the first
 * attempt, so every retry sends the same body under the same webhook-id.
 */
export const WebhookJobSchema = z.object({
  job_id: z.string(),
  url: z.string(),
  secret: z.string().optional(),
  /** A subscription's item: the message is subscription.item.* and names the subscription. */
  subscription_id: z.string().optional(),
  message: z.object({ id: z.string(), body: z.string() }).optional(),
});
export type WebhookJob = z.infer<typeof WebhookJobSchema>;

/** What a delivery job records of its last attempt (its BullMQ progress). */
export const WebhookAttemptSchema = z.object({
  last_status: z.number().int().optional(),
  last_error: z.string().optional(),
});

// ---- Retries: 15 s × 4^(n−1), at most 2 h, 8 attempts in all (docs/api.md's table) ----

export const WEBHOOK_ATTEMPTS = 8;
const FIRST_RETRY_MS = 15_000;
const LONGEST_WAIT_MS = 2 * 3600_000;

/** Milliseconds before the retry that follows failed attempt `attemptsMade` (1-based). */
export function webhookRetryDelay(attemptsMade: number): number {
  return Math.min(FIRST_RETRY_MS * 4 ** Math.max(0, attemptsMade - 1), LONGEST_WAIT_MS);
}
