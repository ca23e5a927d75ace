// GET /api/v1/jobs/{id}/events: a job's changes as server-sent events. The current state first, so a
// late client needs no second call; then one event per change until the job ends. Event ids come from
// the state itself (job-event-id.ts), so `Last-Event-ID` resumes on any replica.
import { ErrorEnvelopeSchema, JOB_ID_PATTERN, ReelayError } from '@reelay/contracts';
import { logRef, type Logger } from '@reelay/observability';
import { EVENT_STREAM_EXAMPLE } from '../openapi-examples.js';
import { EventStream, type EventStreamOptions } from '../http/sse.js';
import type { RouteSpec } from '../http/route.js';
import type { GatewayMetrics } from '../metrics.js';
import { isTerminal } from '../services/job-event-id.js';
import type { JobEventHub } from '../services/job-events.js';
import type { JobService, JobSnapshot } from '../services/jobs.js';

export const EVENT_STREAM_DEFAULTS: EventStreamOptions = {
  heartbeatMs: 15_000,
  maxBufferedBytes: 256 * 1024,
  retryMs: 2_000,
};

const error = (description: string) => ({ description, schema: ErrorEnvelopeSchema });

export const EVENT_FORMAT = [
  'Each event: `id: <number>` (greater for every later state of the job), `event: job`, and `data: <Job>`, the Job exactly as GET /api/v1/jobs/{id} returns it in `data`.',
  'The first event is the current state; then one per change of status and at most 4 progress events a second.',
  'After the event whose status is completed, failed, expired or cancelled, the server ends the stream.',
  'Send `Last-Event-ID` (an EventSource does so when it reconnects) to receive only later states; if the job had already ended with that event the answer is 204, which tells an EventSource to stop.',
  'The stream starts with `retry: 2000`; a comment line (`:`) is sent after 15 s without an event.',
].join(' ');

export function jobEventRoutes(deps: {
  jobs: JobService;
  hub: JobEventHub;
  metrics: GatewayMetrics;
  logger: Logger;
  stream?: Partial<EventStreamOptions>;
}): RouteSpec[] {
  const options = { ...EVENT_STREAM_DEFAULTS, ...deps.stream };
  return [
    {
      method: 'get',
      path: '/api/v1/jobs/{id}/events',
      tag: 'Jobs',
      summary: "A job's progress as it happens: server-sent events until it ends",
      description: EVENT_FORMAT,
      params: { id: 'The job id from the 202 answer' },
      headers: { 'Last-Event-ID': 'Optional: the id of the last event received; the stream resumes after it' },
      responses: {
        200: {
          description: 'text/event-stream of `job` events; the server ends it after the terminal event',
          contentType: 'text/event-stream',
          headers: { 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' },
          example: EVENT_STREAM_EXAMPLE,
        },
        204: { description: 'The job had already ended with the event named by Last-Event-ID: nothing more will come' },
        400: error('invalid_request: malformed percent-encoding in the id'),
        404: error('job_not_found: unknown or malformed id'),
        503: error('service_unavailable'),
      },
      handler: async (req, res) => {
        const id = String(req.params.id);
        if (!JOB_ID_PATTERN.test(id)) throw new ReelayError('job_not_found', 'There is no job with this id.');
        const after = Number(req.get('last-event-id') ?? -1);
        let lastSent = Number.isSafeInteger(after) ? after : -1; // a garbled id counts as none
        const open: { stream?: EventStream } = {};
        const pending: (JobSnapshot | undefined)[] = [];
        // Changes may arrive before the first state is read: they wait, and ids drop any older one.
        const deliver = (snapshot: JobSnapshot | undefined) => {
          const { stream } = open;
          if (!stream) return void pending.push(snapshot);
          if (!stream.open) return;
          if (!snapshot) return stream.end(); // removed: nothing more will come
          if (snapshot.eventId <= lastSent) return;
          lastSent = snapshot.eventId;
          stream.send(snapshot.eventId, 'job', snapshot.view);
          if (isTerminal(snapshot.view.status)) stream.end();
        };
        const stop = await deps.hub.listen(id, deliver);
        let first: JobSnapshot;
        try {
          first = await deps.jobs.snapshot(id);
        } catch (err) {
          stop();
          throw err;
        }
        if (isTerminal(first.view.status) && first.eventId <= lastSent) {
          stop();
          return void res.status(204).end();
        }
        deps.metrics.eventStreams.inc();
        open.stream = new EventStream(res, options, (reason) => {
          stop();
          deps.metrics.eventStreams.dec();
          if (reason === 'slow')
            deps.logger.info({ job: logRef(id) }, 'event stream dropped: the client stopped reading');
        });
        deliver(first);
        for (const snapshot of pending.splice(0)) deliver(snapshot);
      },
    },
  ];
}
