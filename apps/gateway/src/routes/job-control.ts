// DELETE /api/v1/jobs/{id} (cancel any queued or processing job) and POST /api/v1/jobs/{id}/stop
// (end a recording and keep what it has). The job id reads the job; only its creator controls it:
// the control_token of its 202 as a bearer token, or the API key or web app session that started it
// (job-grants.ts). Like polling, these routes are not rate-limited.
import type { Request } from 'express';
import { ErrorEnvelopeSchema } from '@reelay/contracts';
import { jobOwnerOf, type OwnerDeps } from '../http/owner.js';
import type { RouteSpec } from '../http/route.js';
import type { JobControl } from '../services/job-control.js';
import { bearerToken, type ControlCredentials } from '../services/job-grants.js';

const error = (description: string) => ({ description, schema: ErrorEnvelopeSchema });

const FORBIDDEN = error(
  "job_control_forbidden: neither the job's control_token (Authorization: Bearer) nor the API key or session that started it; api_key_disabled: the X-API-Key sent is disabled",
);
const BAD_KEY = error('invalid_api_key: an X-API-Key was sent that is unknown or deleted');

export function jobControlRoutes(control: JobControl, owners: OwnerDeps): RouteSpec[] {
  const credentials = async (req: Request): Promise<ControlCredentials> => ({
    token: bearerToken(req.get('authorization')),
    accountId: await jobOwnerOf(owners, req),
  });
  return [
    {
      method: 'delete',
      path: '/api/v1/jobs/{id}',
      tag: 'Jobs',
      summary: 'Cancel a queued or processing job of any kind (its creator only)',
      description:
        "Only the job's creator may cancel it: send the control_token of its 202 answer as `Authorization: Bearer <control_token>` (a collection's token also cancels its entries' jobs), or the API key or web app session that started it (a subscription's jobs: its owner's key or session). Anyone else gets 403 job_control_forbidden; an unknown id is 404. " +
        'A queued job is removed from the queue; a processing one is stopped on whichever worker runs it (its ffmpeg killed, its temporary files and any partial artifact removed). The job then shows status `cancelled` (terminal: its event stream ends with it, its webhook sends `job.cancelled`) and its slot in MAX_ACTIVE_JOBS_PER_CLIENT is free. The answer waits up to a few seconds for a running job to end, so a job that completed before the cancel reached it answers 409.',
      params: { id: 'The job id from the 202 answer' },
      auth: ['controlToken', 'apiKey', 'session'],
      responses: {
        204: {
          description:
            'Cancelled (or, for a job whose worker is unreachable, cancelled as soon as a worker takes it up again)',
        },
        400: error('invalid_request: malformed percent-encoding in the id'),
        401: BAD_KEY,
        403: FORBIDDEN,
        404: error('job_not_found: unknown or malformed id'),
        409: error('job_finished: the job had already completed, failed, expired or been cancelled'),
        503: error('service_unavailable'),
      },
      handler: async (req, res) => {
        await control.cancel(String(req.params.id), await credentials(req));
        res.status(204).end();
      },
    },
    {
      method: 'post',
      path: '/api/v1/jobs/{id}/stop',
      tag: 'Jobs',
      summary: 'Stop a recording of a live stream and keep what it has recorded (its creator only)',
      description:
        "Only the job's creator may stop it, as for DELETE: its control_token as `Authorization: Bearer <control_token>`, or the API key or session that started it; anyone else gets 403 job_control_forbidden. " +
        'Only a job recording a live stream can be stopped; it then completes with what it recorded. Any other job answers 409 not_recording (use DELETE to cancel it).',
      params: { id: 'The job id from the 202 answer' },
      auth: ['controlToken', 'apiKey', 'session'],
      responses: {
        202: { description: 'The recording was asked to stop; it completes within a few seconds' },
        400: error('invalid_request: malformed percent-encoding in the id'),
        401: BAD_KEY,
        403: FORBIDDEN,
        404: error('job_not_found: unknown or malformed id'),
        409: error('not_recording: the job is not a recording in progress'),
        415: error('unsupported_media_type: a body was sent that is not JSON (the route takes none)'),
        503: error('service_unavailable'),
      },
      handler: async (req, res) => {
        await control.stop(String(req.params.id), await credentials(req));
        res.status(202).end();
      },
    },
  ];
}
