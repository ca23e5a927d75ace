// Subscriptions (DESIGN.md "Subscriptions"): the request and view of a watched collection and of the
// entries its checks have seen. Shared by the gateway's routes, its checker and the web app.
import { z } from 'zod';
import { QualitySchema } from './choose-source.js';
import { OutputFormatSchema } from './download.js';
import { httpUrlSchema } from './http-url.js';
import { SubtitleLanguagesSchema } from './subtitles.js';
import { dependentRequired } from './stated-rules.js';
import {
  WEBHOOK_SECRET_NEEDS_URL,
  WEBHOOK_SECRET_SETTING_RULE,
  WebhookSecretSchema,
  WebhookUrlSchema,
} from './webhooks.js';

/**
 * The lowest `every` any deployment accepts; each deployment's own minimum is its
 * SUBSCRIPTION_MIN_EVERY_SECONDS (default 300), at or above this.
 */
export const SUBSCRIPTION_EVERY_FLOOR = 5;
export const SUBSCRIPTION_EVERY_MAX = 604_800;
/** `every` when a subscription names none (or the deployment's minimum, when that is higher). */
export const SUBSCRIPTION_EVERY_DEFAULT = 3600;
/** Failed checks in a row that make a subscription `failing`. */
export const FAILING_AFTER = 5;

export const SubscriptionPresetSchema = z
  .object({
    quality: QualitySchema.optional().describe('The best at or below this height (default best)'),
    audio_only: z.boolean().optional().describe('The best audio-only source'),
    format: OutputFormatSchema.optional().describe('Convert each entry to this format'),
    metadata: z.boolean().optional().describe('Write tags (default true)'),
    subtitles: SubtitleLanguagesSchema.optional(),
  })
  .strict()
  .meta({ id: 'SubscriptionPreset' });
export type SubscriptionPreset = z.infer<typeof SubscriptionPresetSchema>;

const everySchema = (min: number) => z.number().int().min(min).max(SUBSCRIPTION_EVERY_MAX);
/**
 * `every` as the OpenAPI document states it. The gateway writes its deployment's minimum into the
 * document (`minimum`) and validates with subscriptionBodySchemas(minimum).
 */
export const SubscriptionEverySchema = everySchema(SUBSCRIPTION_EVERY_FLOOR).describe(
  "Seconds between checks: at least the deployment's SUBSCRIPTION_MIN_EVERY_SECONDS (300 by default), at most 604800 (a week)",
);
// Checked as sent, then trimmed: the length and the pattern are what the OpenAPI document states.
const NameSchema = z.string().max(100).regex(/\S/, 'name needs a visible character.').trim();

/** The create body with `every` as given: the documented one, or a deployment's (subscriptionBodySchemas). */
function createBody(every: z.ZodOptional<z.ZodNumber>) {
  return dependentRequired(
    z
      .object({
        url: httpUrlSchema().describe('A collection: a feed, playlist, channel or profile'),
        every,
        since: z
          .enum(['now', 'all'])
          .optional()
          .describe(
            '"now" (default): entries listed at creation are marked seen, not downloaded; "all": the first check downloads them too',
          ),
        preset: SubscriptionPresetSchema.optional(),
        webhook_url: WebhookUrlSchema.optional().describe(
          'Where each finished item is announced (subscription.item.completed or subscription.item.failed)',
        ),
        webhook_secret: WebhookSecretSchema.optional(),
        name: NameSchema.optional().describe("Default: the collection's title"),
      })
      .strict(),
    { webhook_secret: { fields: ['webhook_url'], message: WEBHOOK_SECRET_NEEDS_URL } },
  );
}

export const SubscriptionCreateSchema = createBody(
  SubscriptionEverySchema.optional().describe(
    "Seconds between checks: at least the deployment's minimum (SUBSCRIPTION_MIN_EVERY_SECONDS, 300 by default), at most 604800; default 3600",
  ),
).meta({ id: 'SubscriptionRequest', 'x-rules': [WEBHOOK_SECRET_SETTING_RULE] });
export type SubscriptionCreate = z.infer<typeof SubscriptionCreateSchema>;

export const SubscriptionUpdateSchema = z
  .object({
    every: SubscriptionEverySchema.optional(),
    preset: SubscriptionPresetSchema.optional(),
    name: NameSchema.optional(),
    status: z.enum(['active', 'paused']).optional().describe('paused: no checks until active again'),
  })
  .strict()
  .meta({ id: 'SubscriptionUpdate' });
export type SubscriptionUpdate = z.infer<typeof SubscriptionUpdateSchema>;

/**
 * The bodies a deployment accepts: the documented ones with `every` bounded below by its own
 * minimum (SUBSCRIPTION_MIN_EVERY_SECONDS), so a refusal names that minimum.
 */
export function subscriptionBodySchemas(minEvery: number) {
  const every = everySchema(Math.max(minEvery, SUBSCRIPTION_EVERY_FLOOR)).optional();
  return {
    create: createBody(every),
    update: SubscriptionUpdateSchema.extend({ every }),
  };
}

export const SubscriptionStatusSchema = z.enum(['active', 'paused', 'failing']);

export const SubscriptionSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    url: z.string(),
    every: z.number().int(),
    since: z.enum(['now', 'all']),
    preset: SubscriptionPresetSchema,
    status: SubscriptionStatusSchema.describe(
      'failing: five checks in a row failed; checked less often until one succeeds',
    ),
    created_at: z.string(),
    last_checked_at: z.string().optional(),
    next_check_at: z.string().optional().describe('When the next scheduled check is due (absent while paused)'),
    items: z.object({ completed: z.number().int().nonnegative(), failed: z.number().int().nonnegative() }),
    last_error: z.string().optional().describe('Why the last check failed, while it keeps failing'),
    webhook_url: z.string().optional(),
  })
  .meta({ id: 'Subscription' });
export type Subscription = z.infer<typeof SubscriptionSchema>;

export const SubscriptionItemSchema = z
  .object({
    url: z.string().describe("The entry's URL"),
    title: z.string().optional(),
    seen_at: z.string(),
    job_id: z.string().optional().describe('Absent for entries marked seen without a download (since "now")'),
    status: z
      .enum(['seen', 'queued', 'processing', 'completed', 'failed', 'cancelled', 'expired'])
      .describe('seen: not downloaded; expired: the job is gone'),
  })
  .meta({ id: 'SubscriptionItem' });
export type SubscriptionItem = z.infer<typeof SubscriptionItemSchema>;

export const SubscriptionEnvelopeSchema = z
  .object({ success: z.literal(true), data: SubscriptionSchema })
  .meta({ id: 'SubscriptionEnvelope' });
export const SubscriptionListEnvelopeSchema = z
  .object({ success: z.literal(true), data: z.array(SubscriptionSchema) })
  .meta({ id: 'SubscriptionList' });
export const SubscriptionItemsEnvelopeSchema = z
  .object({ success: z.literal(true), data: z.array(SubscriptionItemSchema) })
  .meta({ id: 'SubscriptionItems' });
export const SubscriptionCheckEnvelopeSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      started: z.number().int().describe('Jobs started by this check'),
      seen: z.number().int().describe('Entries listed'),
    }),
  })
  .meta({ id: 'SubscriptionCheck' });
