// Surface B: POST /api/v1/download, GET /api/v1/jobs/{id} and its artifact. Only the download is
// limited per client address: polling a job and fetching its artifact are free. A job's 202 carries
// its control token; an API key or session, when the request has one, controls the job too.
import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { Egress } from '@reelay/egress';
import {
  parseEntrySelection,
  CHILDREN_PAGE,
  CollectionChildrenEnvelopeSchema,
  decodeChildrenCursor,
  encodeChildrenCursor,
} from '@reelay/contracts';
import {
  DownloadRequestSchema,
  ErrorEnvelopeSchema,
  JobAcceptedSchema,
  JobEnvelopeSchema,
  ReelayError,
  type ChosenSource,
} from '@reelay/contracts';
import type { ArtifactStore } from '@reelay/artifacts';
import { sendArtifact } from '../http/artifact.js';
import { jobOwnerOf, type OwnerDeps } from '../http/owner.js';
import { parseBody, type RouteSpec } from '../http/route.js';
import { withRateLimitHeaders } from '../http/surface-gate.js';
import { atMost, perMinute, type StatedLimits } from '../openapi-limits.js';
import { streamSource } from '../http/stream.js';
import type { GatewayMetrics } from '../metrics.js';
import type { DownloadService } from '../services/download.js';
import type { JobService } from '../services/jobs.js';
import { requestedWebhook } from '../services/webhooks.js';
import { wantsFresh, type ExtractService } from '../services/extract.js';
import { resolvePageUrl } from '../services/one-step.js';
import type { CollectionDownloads } from '../services/collection-download.js';
import type { CollectionPage } from '../services/extract.js';

const MAX_COLLECTION_ENTRIES_DEFAULT = 200;
const error = (description: string) => ({ description, schema: ErrorEnvelopeSchema });

// What a direct stream may carry: the origin's type when it names one, else the source's, else bytes.
const STREAM_TYPES = [
  'video/mp4',
  'video/webm',
  'video/quicktime',
  'audio/mpeg',
  'audio/mp4',
  'audio/ogg',
  'image/jpeg',
  'image/png',
  'image/gif',
  'image/webp',
  'application/octet-stream',
  'text/vtt',
  'application/x-subrip',
  'application/ttml+xml',
];
// What a job writes: one per output format (mp4 webm mkv mp3 m4a opus wav vtt srt).
const ARTIFACT_TYPES = [
  'application/zip',
  'video/mp4',
  'video/webm',
  'video/x-matroska',
  'audio/mpeg',
  'audio/mp4',
  'audio/ogg',
  'audio/wav',
  'text/vtt',
  'application/x-subrip',
];
const FILE_HEADERS = {
  'Content-Disposition': 'attachment with a safe filename (and filename* in UTF-8)',
  'Accept-Ranges': 'bytes when Range requests are honoured',
};
const STREAM_HEADERS = {
  ...FILE_HEADERS,
  'Reelay-Source-Quality': 'With page_url: the quality of the source chosen (720p, 128k, original)',
  'Reelay-Source-Description':
    "With page_url: what was chosen, in words ('1280x720 video with audio (mp4)'; printable ASCII)",
};
const PARTIAL = {
  description: 'The requested byte range',
  contentType: STREAM_TYPES,
  headers: { 'Content-Range': 'The range sent, e.g. bytes 0-1023/4096', ...FILE_HEADERS },
};
const UNSATISFIABLE = {
  description: 'Range Not Satisfiable: the range lies outside the file (empty body)',
  headers: { 'Content-Range': 'bytes */<size>' },
};

export function downloadRoutes(deps: {
  downloads: DownloadService;
  jobs: JobService;
  egress: Egress;
  metrics: GatewayMetrics;
  maxMediaBytes: number;
  artifacts: ArtifactStore;
  artifactDelivery: 'stream' | 'redirect';
  limit?: RequestHandler;
  webhookSecret?: boolean;
  extracts?: ExtractService;
  collections?: CollectionDownloads;
  maxCollectionEntries?: number;
  /** Reads the request's API key or session: the account that controls the jobs it starts. */
  owners: OwnerDeps;
  /** The limits as the summary states them. */
  stated: Pick<StatedLimits, 'v1PerMinute' | 'activeJobsPerClient'>;
}): RouteSpec[] {
  const { downloads, jobs, egress, metrics } = deps;
  return [
    {
      method: 'post',
      path: '/api/v1/download',
      tag: 'Extract and download',
      summary: `Download a source, a merge pair, a page in one step (page_url with a preset: the gateway extracts and chooses) or a subtitle track (with \`subtitles\`, a video with the item's tracks embedded): a direct stream, or an asynchronous job. ${perMinute(deps.stated.v1PerMinute, 'client address', 'RATE_LIMIT_V1_PER_MIN')}; ${atMost(deps.stated.activeJobsPerClient, 'live jobs', 'client address', 'MAX_ACTIVE_JOBS_PER_CLIENT')}`,
      body: DownloadRequestSchema,
      before: deps.limit && [deps.limit],
      // Optional: with a key or session the account controls the job (and reuses its own identical jobs).
      auth: ['none', 'apiKey', 'session'],
      responses: withRateLimitHeaders({
        200: { description: 'The media, streamed', contentType: STREAM_TYPES, headers: STREAM_HEADERS },
        202: {
          description:
            "A job was started (or this client's identical live job is returned: the same job_id, with a new control_token); poll status_url, cancel or stop it with control_token",
          schema: JobAcceptedSchema,
          headers: { Location: 'The job URL' },
        },
        206: PARTIAL,
        400: error(
          'invalid_request (also: a webhook_url with no webhook_secret where the deployment has no WEBHOOK_SECRET, or with a source streamed directly; page_url with url or video_url; an item index out of range, naming the count), invalid_url (page_url), invalid_clip, unknown_source or invalid_merge_pair',
        ),
        401: error(
          'invalid_api_key: an X-API-Key was sent that is unknown or deleted (send none to download without one)',
        ),
        403: error(
          'url_blocked: the source, or the webhook_url, is an address the egress guard refuses; api_key_disabled: the X-API-Key sent is disabled',
        ),
        404: error('content_not_found'),
        413: error('payload_too_large: the body is over 16 KiB'),
        422: error(
          'With page_url: no_matching_source (the item has no source the preset can deliver; the message names what it has), no_media_found, resource_limit',
        ),
        415: error('unsupported_media_type: the body is not JSON'),
        416: UNSATISFIABLE,
        429: {
          ...error(
            `rate_limited: over ${perMinute(deps.stated.v1PerMinute, 'client address', 'RATE_LIMIT_V1_PER_MIN')}; or too_many_jobs: ${atMost(deps.stated.activeJobsPerClient, 'jobs', 'client', 'MAX_ACTIVE_JOBS_PER_CLIENT')} are queued or processing already`,
          ),
          headers: { 'Retry-After': 'Seconds to wait' },
        },
        502: error('upstream_error'),
        503: {
          ...error(
            "service_unavailable; or upstream_rate_limited: the origin (a directly streamed source's, or page_url's page) is rate limiting (429, or 503 with Retry-After; its Retry-After passed on, at most 3600)",
          ),
          headers: { 'Retry-After': 'Seconds to wait, when the origin said' },
        },
        504: error('upstream_timeout'),
      }),
      handler: async (req, res) => {
        let body = parseBody(DownloadRequestSchema, req.body);
        const requester = { ip: req.ip, accountId: await jobOwnerOf(deps.owners, req) };
        const webhook = await requestedWebhook(body, { egress, deploymentSecret: deps.webhookSecret === true });
        let chosen: ChosenSource | undefined;
        // A bad selection is refused before anything is fetched.
        if (body.entries !== undefined)
          parseEntrySelection(body.entries, deps.maxCollectionEntries ?? MAX_COLLECTION_ENTRIES_DEFAULT);
        if (body.page_url !== undefined || body.collection_url !== undefined) {
          if (!deps.extracts)
            throw new ReelayError('invalid_request', 'page_url downloads are not set up on this gateway.');
          // The extract stops if the client leaves; the listener goes once it is done (the stream adds its own).
          const gone = new AbortController();
          const onClose = () => gone.abort(new Error('client closed the connection'));
          res.once('close', onClose);
          try {
            const { result } = await deps.extracts.extract((body.page_url ?? body.collection_url)!, gone.signal, {
              fresh: wantsFresh(req),
            });
            if (result.content_type === 'collection' && result.collection && result.entries) {
              // A collection (named as one, or a page_url that turned out to be one): a parent job.
              if (!deps.collections)
                throw new ReelayError('invalid_request', 'Collection downloads are not set up on this gateway.');
              if (body.item !== undefined)
                throw new ReelayError(
                  'invalid_request',
                  "item chooses a page's media item; a collection selects with entries.",
                );
              const first: CollectionPage = {
                url: result.url,
                platform: result.platform,
                title: result.title,
                collection: result.collection,
                entries: result.entries,
                extraction_id: result.extraction_id!,
              };
              const { id, token } = await deps.collections
                .start(body, first, requester, gone.signal, webhook)
                .catch((err: unknown) => {
                  if (err instanceof ReelayError && err.code === 'too_many_jobs')
                    metrics.rateLimited.inc({ surface: 'jobs' });
                  throw err;
                });
              metrics.downloads.inc({ kind: 'collection' });
              const statusUrl = `/api/v1/jobs/${id}`;
              res
                .status(202)
                .location(statusUrl)
                .json({
                  success: true,
                  data: { job_id: id, status: 'queued', status_url: statusUrl, control_token: token },
                });
              return;
            }
            if (body.collection_url !== undefined)
              throw new ReelayError(
                'invalid_request',
                'collection_url is not a collection (a playlist, channel, profile or feed): download it with page_url.',
              );
            ({ body, chosen } = await resolvePageUrl(deps.extracts, body, {
              signal: gone.signal,
              fresh: wantsFresh(req),
              result,
            }));
          } finally {
            res.off('close', onClose);
          }
        }
        const plan = await downloads.plan(body, chosen);
        if (plan.kind === 'direct') {
          if (webhook)
            throw new ReelayError(
              'invalid_request',
              'webhook_url announces the end of a job, and this source is streamed directly: leave webhook_url out, or ask for a format or a clip.',
            );
          metrics.downloads.inc({ kind: 'direct' });
          if (chosen) res.setHeader('Reelay-Source-Quality', chosen.quality);
          if (chosen?.description) res.setHeader('Reelay-Source-Description', chosen.description);
          await streamSource(req, res, {
            egress,
            metrics,
            maxBytes: deps.maxMediaBytes,
            source: plan.source,
            basename: plan.basename,
          });
          return;
        }
        const { id, reused, token } = await downloads
          .enqueue(plan.payload, requester, webhook)
          .catch((err: unknown) => {
            if (err instanceof ReelayError && err.code === 'too_many_jobs')
              metrics.rateLimited.inc({ surface: 'jobs' });
            throw err;
          });
        metrics.downloads.inc({ kind: reused ? 'job_reused' : 'job' });
        const status = reused ? (await jobs.view(id)).status : 'queued';
        const statusUrl = `/api/v1/jobs/${id}`;
        res
          .status(202)
          .location(statusUrl)
          .json({ success: true, data: { job_id: id, status, status_url: statusUrl, control_token: token! } });
      },
    },
    {
      method: 'get',
      path: '/api/v1/jobs/{id}',
      tag: 'Jobs',
      summary: 'A download job: status, progress, error or artifact',
      params: { id: 'The job id from the 202 answer' },
      responses: {
        200: { description: 'The job', schema: JobEnvelopeSchema },
        400: error('invalid_request: malformed percent-encoding in the id'),
        404: error('job_not_found'),
        503: error('service_unavailable'),
      },
      handler: async (req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.json({ success: true, data: await jobs.view(String(req.params.id)) });
      },
    },
    {
      method: 'get',
      path: '/api/v1/jobs/{id}/children',
      tag: 'Jobs',
      summary: "A collection job's entries in entry order, 100 a page: each child's status and job id",
      params: { id: 'The collection job id' },
      query: {
        cursor: {
          description: 'next_cursor of the previous page (only a cursor this list issued is taken)',
          // Server-issued: the document says so, and its walking test makes none up.
          schema: z.string().max(512).meta({ 'x-server-issued': true }),
        },
      },
      responses: {
        200: { description: 'A page of entries', schema: CollectionChildrenEnvelopeSchema },
        400: error('invalid_request: a cursor not from this list, or malformed percent-encoding in the id'),
        404: error('job_not_found: no collection job has this id'),
        503: error('service_unavailable'),
      },
      handler: async (req, res) => {
        const raw = req.query.cursor;
        if (raw !== undefined && typeof raw !== 'string')
          throw new ReelayError('invalid_request', 'cursor is given once, as a string.');
        const offset = decodeChildrenCursor(raw);
        const all = await jobs.children(String(req.params.id));
        const page = all.slice(offset, offset + CHILDREN_PAGE).map(({ progress: _progress, ...child }) => child);
        res.setHeader('Cache-Control', 'no-store');
        res.json({
          success: true,
          data: {
            children: page,
            ...(offset + CHILDREN_PAGE < all.length
              ? { next_cursor: encodeChildrenCursor(offset + CHILDREN_PAGE) }
              : {}),
          },
        });
      },
    },
    {
      method: 'get',
      path: '/api/v1/jobs/{id}/artifact',
      tag: 'Jobs',
      summary: "A finished job's file (Range supported)",
      params: { id: 'The job id' },
      responses: {
        200: { description: 'The file', contentType: ARTIFACT_TYPES, headers: FILE_HEADERS },
        206: { ...PARTIAL, contentType: ARTIFACT_TYPES },
        302: {
          description: 'With ARTIFACT_DELIVERY=redirect and an S3 store: a presigned URL valid for 60 s',
          headers: { Location: 'The presigned URL' },
        },
        400: error('invalid_request: malformed percent-encoding in the id'),
        404: error('job_not_found'),
        409: error('artifact_not_ready: the job has not completed'),
        410: error('artifact_expired'),
        416: UNSATISFIABLE,
        503: error('service_unavailable: Redis or the artifact store is unreachable'),
      },
      handler: async (req, res) => {
        const stored = await jobs.artifact(String(req.params.id));
        await sendArtifact(req, res, stored, { store: deps.artifacts, delivery: deps.artifactDelivery });
      },
    },
  ];
}
