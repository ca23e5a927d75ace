// Examples for the OpenAPI document: one request and one answer per route, as a reader of /docs would
// send and see them. Kept in one table (rather than in each route file) so they read as a set; the
// OpenAPI test checks that every route has them and that each JSON example passes its route's schema.
import { ERROR_STATUS } from '@reelay/contracts';
import type { RouteSpec } from './http/route.js';

const JOB_ID = 'vb0Vq8c6Rk2w4n1Yt3xZ9A';
const PAGE = 'https://example.com/watch/clip';
const VIDEO = 'https://cdn.example.com/clip/video-720.mp4';
const AUDIO = 'https://cdn.example.com/clip/audio-128.m4a';
const CREATED = '2026-11-24T23:00:00.000Z';
const KEY = {
  id: 'k_3f9a1c2e',
  name: 'my app',
  prefix: 'rly_AbCd',
  enabled: true,
  created_at: CREATED,
  last_used_at: '2026-11-24T23:05:00.000Z',
  usage: { total_requests: 42, successful_requests: 40, success_rate: 0.952 },
};
const EXTRACTED = {
  success: true,
  data: {
    url: PAGE,
    platform: 'generic',
    extract_profile: 'html5',
    content_type: 'video',
    title: 'A clip',
    media: [
      {
        index: 0,
        type: 'video',
        title: 'A clip',
        duration: 62.5,
        thumbnail: 'https://cdn.example.com/clip/poster.jpg',
        sources: [
          {
            quality: '720p',
            url: VIDEO,
            stream_profile: 'video_only',
            mime_type: 'video/mp4',
            ext: 'mp4',
            width: 1280,
            height: 720,
            codecs: 'avc1.64001f',
            has_audio: false,
            has_video: true,
          },
          {
            quality: '128k',
            url: AUDIO,
            stream_profile: 'audio_only',
            mime_type: 'audio/mp4',
            ext: 'm4a',
            codecs: 'mp4a.40.2',
            has_audio: true,
            has_video: false,
          },
        ],
      },
    ],
    extraction_id: '3f2b8c1e-7a4d-4e0b-9c55-2d8e6f1a0b97',
  },
};
const COMPLETED_JOB = {
  id: JOB_ID,
  status: 'completed',
  operation: 'merge',
  progress: 100,
  created_at: CREATED,
  started_at: '2026-11-24T23:00:00.120Z',
  finished_at: '2026-11-24T23:00:01.480Z',
  artifact: {
    url: `/api/v1/jobs/${JOB_ID}/artifact`,
    filename: 'A clip.mp4',
    content_type: 'video/mp4',
    size: 9876543,
    expires_at: '2026-11-25T00:00:01.480Z',
  },
};

export const EVENT_STREAM_EXAMPLE = [
  'retry: 2000',
  '',
  'id: 199',
  'event: job',
  `data: {"id":"${JOB_ID}","status":"queued","operation":"merge","progress":0,"created_at":"${CREATED}"}`,
  '',
  'id: 242',
  'event: job',
  `data: {"id":"${JOB_ID}","status":"processing","operation":"merge","progress":41,"created_at":"${CREATED}","started_at":"2026-11-24T23:00:00.120Z"}`,
  '',
  'id: 310',
  'event: job',
  `data: ${JSON.stringify(COMPLETED_JOB)}`,
  '',
  '',
].join('\n');

interface Example {
  /** The request body (routes that take one). */
  request?: unknown;
  /** The answer, by status: JSON, or text for a text body. */
  answers: Record<number, unknown>;
}

export const EXAMPLES: Record<string, Example> = {
  'post /api/v1/extract': { request: { url: PAGE }, answers: { 200: EXTRACTED } },
  'get /api/v1/platforms': {
    answers: {
      200: {
        success: true,
        data: {
          platforms: [
            {
              platform: 'reddit',
              extractor: 'reddit',
              patterns: ['^https?://(?:www\\.|old\\.)?reddit\\.com/r/[^/]+/comments/'],
              kinds: ['video', 'gallery'],
            },
          ],
          generic: ['hls_manifest', 'dash_manifest', 'direct_file', 'html_page'],
        },
      },
    },
  },
  'post /api/v1/download': {
    request: { video_url: VIDEO, audio_url: AUDIO, format: 'mp4' },
    answers: {
      202: {
        success: true,
        data: {
          job_id: JOB_ID,
          status: 'queued',
          status_url: `/api/v1/jobs/${JOB_ID}`,
          control_token: 'pQ7vN2kX9rT4wL8mB3sY6cH1dF5gJ0aZ-eU_iO2nKqE',
        },
      },
    },
  },
  'get /api/v1/jobs/{id}': { answers: { 200: { success: true, data: COMPLETED_JOB } } },
  'get /api/v1/jobs/{id}/events': { answers: { 200: EVENT_STREAM_EXAMPLE } },
  'get /api/v1/jobs/{id}/artifact': {
    answers: { 404: { success: false, error: { code: 'job_not_found', message: 'There is no job with this id.' } } },
  },
  'post /api': { request: { url: PAGE }, answers: { 200: EXTRACTED } },
  'post /api/playground': { request: { url: PAGE }, answers: { 200: EXTRACTED } },
  'post /account/signup': {
    request: { email: 'ada@example.com', password: 'correct horse battery' },
    answers: { 201: { success: true, data: { email: 'ada@example.com' } } },
  },
  'post /account/login': {
    request: { email: 'ada@example.com', password: 'correct horse battery' },
    answers: { 200: { success: true, data: { email: 'ada@example.com' } } },
  },
  'post /account/logout': { answers: { 204: undefined } },
  'get /account/me': { answers: { 200: { success: true, data: { email: 'ada@example.com' } } } },
  'get /account/keys': { answers: { 200: { success: true, data: { keys: [KEY] } } } },
  'post /account/keys': {
    request: { name: 'my app' },
    answers: {
      201: {
        success: true,
        data: {
          ...KEY,
          last_used_at: null,
          usage: { total_requests: 0, successful_requests: 0, success_rate: null },
          secret: 'rly_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcd',
        },
      },
    },
  },
  'post /account/keys/{id}/disable': { answers: { 200: { success: true, data: { ...KEY, enabled: false } } } },
  'post /account/keys/{id}/enable': { answers: { 200: { success: true, data: KEY } } },
  'delete /account/keys/{id}': { answers: { 204: undefined } },
  'get /healthz': { answers: { 200: { status: 'ok' } } },
  'get /readyz': {
    answers: { 200: { status: 'ready', redis: 'ok', workers: 2, worker_health: { healthy: 2, unhealthy: 0 } } },
  },
  'get /metrics': {
    answers: {
      200: '# HELP reelay_job_event_streams Job event streams (GET /api/v1/jobs/{id}/events) open.\n# TYPE reelay_job_event_streams gauge\nreelay_job_event_streams 3\n',
    },
  },
  'get /api/openapi.json': {
    answers: { 200: { openapi: '3.1.0', info: { title: 'reelay', version: '0.1.0' }, paths: {} } },
  },
};

/**
 * An error answer's example from its description, which starts with its code ("url_blocked: the URL
 * or a redirect points at a private address"); undefined when it names no known code.
 */
export function errorExample(description: string): unknown {
  const [, code, said] = /^([a-z_]+)(?::\s*(.+))?/.exec(description) ?? [];
  if (!code || !(code in ERROR_STATUS)) return undefined;
  const message = said
    ? `${said[0].toUpperCase()}${said.slice(1)}${said.endsWith('.') ? '' : '.'}`
    : `The request failed with ${code}.`;
  return { success: false, error: { code, message } };
}

/** Puts each route's examples on its spec (the OpenAPI document reads them from there). */
export function attachExamples(routes: RouteSpec[]): void {
  for (const route of routes) {
    const example = EXAMPLES[`${route.method} ${route.path}`];
    if (example?.request !== undefined) route.bodyExample ??= example.request;
    for (const [status, answer] of Object.entries(example?.answers ?? {})) {
      const spec = route.responses[Number(status)];
      if (spec && answer !== undefined) spec.example ??= answer;
    }
    for (const [status, spec] of Object.entries(route.responses)) {
      if (Number(status) >= 400 && spec.schema && spec.example === undefined)
        spec.example = errorExample(spec.description);
    }
  }
}
