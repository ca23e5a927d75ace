// Subscriptions under /api/v1/subscriptions (DESIGN.md "Subscriptions"): an account's watched
// collections, by API key or web app session. Another owner's id answers as an unknown one (404).
import type { Request, RequestHandler } from 'express';
import type { RedisClient } from '@reelay/redis';
import type { SessionStore } from '@reelay/accounts';
import {
  ErrorEnvelopeSchema,
  ReelayError,
  SUBSCRIPTION_EVERY_DEFAULT,
  subscriptionBodySchemas,
  SubscriptionCheckEnvelopeSchema,
  SubscriptionCreateSchema,
  SubscriptionEnvelopeSchema,
  SubscriptionItemsEnvelopeSchema,
  SubscriptionListEnvelopeSchema,
  SubscriptionUpdateSchema,
  WEBHOOK_SECRET_SETTING_RULE,
} from '@reelay/contracts';
import type { Egress } from '@reelay/egress';
import { requireOwner } from '../http/owner.js';
import { TOO_MANY, withRateLimitHeaders } from '../http/surface-gate.js';
import { parseBody, type ResponseSpec, type RouteSpec } from '../http/route.js';
import { noStore } from '../http/session.js';
import type { ExtractService } from '../services/extract.js';
import { entryKey, type SubscriptionChecker } from '../services/subscription-check.js';
import type { SubscriptionStore } from '../services/subscriptions.js';

const error = (description: string) => ({ description, schema: ErrorEnvelopeSchema });
const AUTH = {
  401: error('api_key_required (no X-API-Key and no session) or invalid_api_key'),
  403: error('api_key_disabled; or cross_site_request: a session write from another site'),
  503: error('service_unavailable: Redis cannot be reached'),
};
const NOT_FOUND = { 404: error('subscription_not_found: no subscription of yours has this id') };
const BAD_BODY = {
  400: error('invalid_request'),
  413: error('payload_too_large: the body is over 16 KiB'),
  415: error('unsupported_media_type'),
};
const ID = { id: 'The subscription id' };
const ok = <T>(data: T) => ({ success: true as const, data });

// Examples for the OpenAPI document (/docs).
const EXAMPLE_ID = 'sub_Qm9uam91ciBsZXMgYW1pcw';
const EXAMPLE = {
  id: EXAMPLE_ID,
  name: 'Tones Weekly',
  url: 'https://podcasts.example.com/tones/feed.xml',
  every: 3600,
  since: 'now',
  preset: { audio_only: true, format: 'mp3' },
  status: 'active',
  created_at: '2026-11-24T23:00:00.000Z',
  last_checked_at: '2026-11-25T00:00:01.000Z',
  next_check_at: '2026-11-25T01:00:00.000Z',
  items: { completed: 3, failed: 0 },
};
const ITEM = {
  url: 'https://podcasts.example.com/tones/episodes/3',
  title: 'Episode 3',
  seen_at: '2026-11-25T00:00:01.000Z',
  job_id: 'vb0Vq8c6Rk2w4n1Yt3xZ9A',
  status: 'completed',
};
const TAG = 'Subscriptions';
const ITEMS_SHOWN = 1000;
const DESCRIPTION =
  "Authenticated by an API key in X-API-Key, or by the web app's session cookie (writes only from the same origin). Every subscriptions route counts against RATE_LIMIT_SUBSCRIPTIONS_PER_MIN (default 60) requests a minute per client address.";
/** Every route's answers carry the limit's RateLimit-* headers, and 429 past it. */
const limited = (responses: Record<number, ResponseSpec>) => withRateLimitHeaders({ ...responses, ...TOO_MANY });

function owner(req: Request): string {
  if (!req.ownerId) throw new Error('route registered without requireOwner');
  return req.ownerId;
}

export interface SubscriptionRouteDeps {
  store: SubscriptionStore;
  checker: SubscriptionChecker;
  extracts: Pick<ExtractService, 'listCollection'>;
  egress: Pick<Egress, 'checkUrl'>;
  redis: RedisClient;
  sessions: SessionStore;
  maxPerAccount: number;
  /** The limit per client address (RATE_LIMIT_SUBSCRIPTIONS_PER_MIN), absent when it is off. */
  limit?: RequestHandler;
  /** SUBSCRIPTION_MIN_EVERY_SECONDS: the shortest `every` accepted. */
  minEvery: number;
  /** The deployment has a WEBHOOK_SECRET to sign with. */
  webhookSecret: boolean;
}

export function subscriptionRoutes(deps: SubscriptionRouteDeps): RouteSpec[] {
  const { store, checker } = deps;
  // The documented bodies (SubscriptionCreateSchema, …) with this deployment's minimum `every`.
  const bodies = subscriptionBodySchemas(deps.minEvery);
  // The limit first: a request over it costs no key or session lookup.
  const before = [noStore, ...(deps.limit ? [deps.limit] : []), requireOwner(deps)];
  return [
    {
      method: 'post',
      path: '/api/v1/subscriptions',
      tag: TAG,
      summary: 'Watch a collection (feed, playlist, channel, profile) and download what appears',
      description: DESCRIPTION,
      auth: 'apiKey',
      body: SubscriptionCreateSchema,
      bodyExample: { url: EXAMPLE.url, preset: EXAMPLE.preset, webhook_url: 'https://hooks.example.com/reelay' },
      before,
      responses: limited({
        201: {
          description: 'The subscription',
          schema: SubscriptionEnvelopeSchema,
          headers: { Location: 'The subscription URL' },
          example: ok(EXAMPLE),
        },
        ...BAD_BODY,
        ...AUTH,
        403: error(
          'url_blocked: the url or webhook_url is an address the egress guard refuses; api_key_disabled; cross_site_request',
        ),
        404: error('content_not_found: the collection is not there'),
        409: error(
          `subscription_limit_reached: the account holds ${deps.maxPerAccount} subscriptions already, this server's most (MAX_SUBSCRIPTIONS_PER_ACCOUNT)`,
        ),
        422: error('no_media_found: nothing could be read at the url'),
        502: error('upstream_error'),
        504: error('upstream_timeout'),
      }),
      handler: async (req, res) => {
        const accountId = owner(req);
        const body = parseBody(bodies.create, req.body);
        if (body.webhook_url !== undefined) {
          if (body.webhook_secret === undefined && !deps.webhookSecret)
            throw new ReelayError('invalid_request', WEBHOOK_SECRET_SETTING_RULE.message);
          await deps.egress.checkUrl(new URL(body.webhook_url));
        }
        // Refused early, before the collection is fetched; create() takes the place atomically.
        if ((await store.count(accountId)) >= deps.maxPerAccount)
          throw new ReelayError(
            'subscription_limit_reached',
            `An account can hold at most ${deps.maxPerAccount} subscriptions; delete one first.`,
          );
        const page = await deps.extracts.listCollection(body.url, undefined, undefined, { fresh: true });
        if (!page)
          throw new ReelayError(
            'invalid_request',
            'url is not a collection (a feed, playlist, channel or profile): subscribe to one, or download a single page with POST /api/v1/download.',
          );
        const since = body.since ?? 'now';
        const record = {
          id: store.newId(),
          account_id: accountId,
          name: body.name ?? (page.title || page.url).slice(0, 100),
          url: page.url,
          every: body.every ?? Math.max(SUBSCRIPTION_EVERY_DEFAULT, deps.minEvery),
          since,
          preset: body.preset ?? {},
          status: 'active' as const,
          created_at: Date.now(),
          failures: 0,
          webhook_url: body.webhook_url,
          webhook_secret: body.webhook_secret,
        };
        await store.create(
          record,
          since === 'now' ? page.entries.map((e) => ({ key: entryKey(e), url: e.url, title: e.title })) : [],
          deps.maxPerAccount,
        );
        // since "all": the first check runs now rather than a period later.
        if (since === 'all') await checker.check(record.id);
        const view = await store.view((await store.get(record.id)) ?? record);
        res.status(201).location(`/api/v1/subscriptions/${record.id}`).json(ok(view));
      },
    },
    {
      method: 'get',
      path: '/api/v1/subscriptions',
      tag: TAG,
      summary: 'Your subscriptions, oldest first',
      description: DESCRIPTION,
      auth: 'apiKey',
      before,
      responses: limited({
        200: { description: 'The subscriptions', schema: SubscriptionListEnvelopeSchema, example: ok([EXAMPLE]) },
        ...AUTH,
      }),
      handler: async (req, res) => {
        const records = await store.list(owner(req));
        res.json(ok(await Promise.all(records.map((r) => store.view(r)))));
      },
    },
    {
      method: 'get',
      path: '/api/v1/subscriptions/{id}',
      tag: TAG,
      summary: 'One subscription',
      description: DESCRIPTION,
      auth: 'apiKey',
      params: ID,
      before,
      responses: limited({
        200: { description: 'The subscription', schema: SubscriptionEnvelopeSchema, example: ok(EXAMPLE) },
        400: error('invalid_request: malformed percent-encoding in the id'),
        ...NOT_FOUND,
        ...AUTH,
      }),
      handler: async (req, res) => {
        res.json(ok(await store.view(await store.owned(owner(req), String(req.params.id)))));
      },
    },
    {
      method: 'patch',
      path: '/api/v1/subscriptions/{id}',
      tag: TAG,
      summary: 'Change the interval, preset or name, or pause and resume (status)',
      description: DESCRIPTION,
      auth: 'apiKey',
      params: ID,
      body: SubscriptionUpdateSchema,
      bodyExample: { status: 'paused' },
      before,
      responses: limited({
        200: {
          description: 'The subscription as changed',
          schema: SubscriptionEnvelopeSchema,
          example: ok({ ...EXAMPLE, status: 'paused', next_check_at: undefined }),
        },
        ...BAD_BODY,
        ...NOT_FOUND,
        ...AUTH,
      }),
      handler: async (req, res) => {
        // The body first: a malformed one is 400 whatever the id.
        const change = parseBody(bodies.update, req.body);
        const record = await store.owned(owner(req), String(req.params.id));
        res.json(ok(await store.view(await store.update(record, change))));
      },
    },
    {
      method: 'delete',
      path: '/api/v1/subscriptions/{id}',
      tag: TAG,
      summary: 'Stop watching (jobs already started go on)',
      description: DESCRIPTION,
      auth: 'apiKey',
      params: ID,
      before,
      responses: limited({
        204: { description: 'Deleted' },
        400: error('invalid_request: malformed percent-encoding in the id'),
        ...NOT_FOUND,
        ...AUTH,
      }),
      handler: async (req, res) => {
        await store.delete(await store.owned(owner(req), String(req.params.id)));
        res.status(204).end();
      },
    },
    {
      method: 'post',
      path: '/api/v1/subscriptions/{id}/check',
      tag: TAG,
      summary: 'Check now: start jobs for entries not seen yet',
      description: DESCRIPTION,
      auth: 'apiKey',
      params: ID,
      before,
      responses: limited({
        200: {
          description: 'What the check did',
          schema: SubscriptionCheckEnvelopeSchema,
          example: ok({ started: 1, seen: 12 }),
        },
        400: error('invalid_request'),
        413: error('payload_too_large: a body (none is needed) over 16 KiB'),
        415: error('unsupported_media_type: a body (none is needed) that is not JSON'),
        ...NOT_FOUND,
        ...AUTH,
        403: error('url_blocked; api_key_disabled; cross_site_request'),
        404: error('subscription_not_found; content_not_found: the collection is gone'),
        422: error('no_media_found'),
        502: error('upstream_error'),
        504: error('upstream_timeout'),
      }),
      handler: async (req, res) => {
        const record = await store.owned(owner(req), String(req.params.id));
        res.json(ok(await checker.check(record.id, { manual: true })));
      },
    },
    {
      method: 'get',
      path: '/api/v1/subscriptions/{id}/items',
      tag: TAG,
      summary: `The entries seen, newest first (at most ${ITEMS_SHOWN}), with their job and its status`,
      description: DESCRIPTION,
      auth: 'apiKey',
      params: ID,
      before,
      responses: limited({
        200: { description: 'The entries', schema: SubscriptionItemsEnvelopeSchema, example: ok([ITEM]) },
        400: error('invalid_request: malformed percent-encoding in the id'),
        ...NOT_FOUND,
        ...AUTH,
      }),
      handler: async (req, res) => {
        const record = await store.owned(owner(req), String(req.params.id));
        // The archive only grows: the answer stays bounded (the newest ITEMS_SHOWN).
        res.json(ok((await store.items(record.id)).slice(0, ITEMS_SHOWN)));
      },
    },
  ];
}
