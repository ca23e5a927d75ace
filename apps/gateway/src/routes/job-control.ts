// DELETE /api/v1/jobs/{id} (cancel any queued or processing job) and POST /api/v1/jobs/{id}/stop
// (end a recording and keep what it has). The job id is the capability, as for its artifact: no
// key or session is asked for, and polling-style routes are not rate-limited.
import { ErrorEnvelopeSchema } from '@reelay/contracts';
import type { RouteSpec } from '../http/route.js';
import type { JobControl } from '../services/job-control.js';

const error = (description: string) => ({ description, schema: ErrorEnvelopeSchema });

export function jobControlRoutes(control: JobControl): RouteSpec[] {
  return [
    {
      method: 'delete',
      path: '/api/v1/jobs/{id}',
      tag: 'Jobs',
      summary: 'Cancel a queued or processing job of any kind',
      description:
        'A queued job is removed from the queue; a processing one is stopped on whichever worker runs it (its ffmpeg killed, its temporary files and any partial artifact removed). The job then shows status `cancelled` (terminal: its event stream ends with it, its webhook sends `job.cancelled`) and its slot in MAX_ACTIVE_JOBS_PER_CLIENT is free. The answer waits up to a few seconds for a running job to end, so a job that completed before the cancel reached it answers 409.',
      params: { id: 'The job id from the 202 answer (the id is the capability)' },
      responses: {
        204: {
          description:
            'Cancelled (or, for a job whose worker is unreachable, cancelled as soon as a worker takes it up again)',
        },
        400: error('invalid_request: malformed percent-encoding in the id'),
        404: error('job_not_found: unknown or malformed id'),
        409: error('job_finished: the job had already completed, failed, expired or been cancelled'),
        503: error('service_unavailable'),
      },
      handler: async (req, res) => {
        await control.cancel(String(req.params.id));
        res.status(204).end();
      },
    },
    {
      method: 'post',
      path: '/api/v1/jobs/{id}/stop',
      tag: 'Jobs',
      summary: 'Stop a recording of a live stream and keep what it has recorded',
      description:
        'Only a job recording a live stream can be stopped; it then completes with what it recorded. Any other job answers 409 not_recording (use DELETE to cancel it).',
      params: { id: 'The job id from the 202 answer' },
      responses: {
        202: { description: 'The recording was asked to stop; it completes within a few seconds' },
        400: error('invalid_request: malformed percent-encoding in the id'),
        404: error('job_not_found: unknown or malformed id'),
        409: error('not_recording: the job is not a recording in progress'),
        415: error('unsupported_media_type: a body was sent that is not JSON (the route takes none)'),
        503: error('service_unavailable'),
      },
      handler: async (req, res) => {
        await control.stop(String(req.params.id));
        res.status(202).end();
      },
    },
  ];
}
